"""The benchmark suite runs end to end on a tiny workload (no timings are asserted).

Each benchmark runs as a person runs it, ``python -m benchmarks.X`` in a process of its
own, and is read back from the results it writes: no test imports ``benchmarks``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.processes import run_python

#: What shapes.py measures for every value shape, as ratios to its floor.
SHAPE_COLUMNS = [
    f"{adapter}_{doc}_x_floor"
    for adapter in ("ASGI", "WSGI")
    for doc in ("page", "sitemap_xml", "index")
]


@pytest.mark.slow
def test_benchmark_suite_runs_on_a_tiny_workload(tmp_path: Path) -> None:
    """Every scenario produces rows and both result files are written (Django's own
    views run in the benchmark's process, on settings of its own)."""
    run_python("-m", "benchmarks.run", "--smoke", "--out", str(tmp_path))
    results = json.loads((tmp_path / "smoke.json").read_text())
    assert results["smoke"] is True
    for key in ("in_process", "over_http", "index", "gzip_levels", "throughput"):
        assert results[key], key
    assert results["in_process"][0]["case"].startswith("floor")
    assert all(row["bytes"] > 0 for row in results["in_process"])
    assert "## One 50,000-URL page, in process" in (tmp_path / "smoke.md").read_text()
    django = results["django"]  # the Django extra is part of the test extra
    assert {row["document"] for row in django["cases"]} == {"page 1", "page 20", "index"}
    assert "## Django models: 5,000 rows, 250 URLs a page" in (tmp_path / "smoke.md").read_text()


@pytest.mark.slow
def test_storm_benchmarks_run_on_a_tiny_workload(tmp_path: Path) -> None:
    """The crawl-storm scenarios produce rows for both adapters; an ASGI storm is one
    provider pass (the planning pass, which the one render replays). (On this tiny workload WSGI request threads start after
    a render has finished, so their pass count measures thread start-up, not sharing:
    tests/unit/engine/test_coalesce.py and the fleet test hold that.)"""
    run_python("-m", "benchmarks.storms", "--smoke", "--out", str(tmp_path))
    results = json.loads((tmp_path / "storms-smoke.json").read_text())
    cases = [row["case"] for row in results["in_process"]]
    assert any(c.startswith("ASGI") for c in cases) and any(c.startswith("WSGI") for c in cases)
    passes = {
        row["case"].split(":")[0]: row["provider_passes"]
        for row in results["in_process"]
        if "provider_passes" in row
    }
    assert passes["ASGI"] == 1 and passes["WSGI"] >= 1, passes
    assert len(results["over_http"]) == 2
    assert "## Crawl storms" in (tmp_path / "storms-smoke.md").read_text()


@pytest.mark.slow
def test_django_version_benchmark_runs_on_a_tiny_table(tmp_path: Path) -> None:
    """benchmarks/django_version.py measures every case (SQLite only here: it rewrites the
    products table, and the PostgreSQL one is the test project's seeded table)."""
    out = tmp_path / "version.json"
    argv = ["--rows", "300", "--repeats", "1", "--out", str(out)]
    run_python("-m", "benchmarks.django_version", *argv, SITEMAP_TEST_POSTGRES_URL=None)
    results = json.loads(out.read_text())["results"]
    cases = {row["case"] for row in results if row["database"] == "sqlite"}
    assert cases == {"checksum", "checksum_slug", "count_max"}
    assert all(row["seconds"] > 0 for row in results)


@pytest.mark.slow
def test_django_rewrite_benchmark_runs_on_a_tiny_table(tmp_path: Path) -> None:
    """benchmarks/django_rewrite.py times the index after one row's write beside the first
    index and Django's view, in alternation (SQLite here)."""
    out = tmp_path / "rewrite.json"
    argv = ["--rows", "300", "--page", "50", "--repeats", "2", "--out", str(out)]
    run_python("-m", "benchmarks.django_rewrite", *argv, SITEMAP_TEST_POSTGRES_URL=None)
    cases = json.loads(out.read_text())["cases"]
    assert len(cases) == 4 and all(len(row["rounds"]) == 2 for row in cases)
    assert all(row["x_django_in_round"] > 0 and row["x_first_index_in_round"] > 0 for row in cases)


@pytest.mark.slow
def test_shape_matrix_runs_on_a_tiny_workload(tmp_path: Path) -> None:
    """benchmarks/shapes.py serves every value shape and times it beside its floor."""
    out = tmp_path / "shapes.json"
    run_python("-m", "benchmarks.shapes", "--n", "200", "--repeats", "1", "--json", str(out))
    rows = json.loads(out.read_text())
    shapes = {(row["lastmod"], row["priority"], row["items"]) for row in rows}
    assert len(shapes) == len(rows) > 1  # every shape once
    assert all(row[column] > 0 for row in rows for column in SHAPE_COLUMNS)
    kinds = {row["items"] for row in rows}
    assert {"RowMapping", "ORM rows via map="} <= kinds


@pytest.mark.slow
def test_warm_serving_benchmark_runs_against_static_files(tmp_path: Path) -> None:
    """benchmarks/warm.py serves a stored page beside the same bytes as static files on
    uvicorn and gunicorn (identity, gzip and 304 each answered as expected)."""
    out = tmp_path / "w.json"
    run_python("-m", "benchmarks.warm", "--seconds", "0.2", "--rounds", "1", "--json", str(out))
    results = json.loads(out.read_text())
    rows = [row for result in results for row in result["rows"]]
    assert {(row["server"], row["request"]) for row in rows} == {
        (server, request)
        for server in ("uvicorn", "gunicorn")
        for request in ("identity", "gzip", "304")
    }
    assert all(row["ours_rps"] > 0 and row["static_rps"] > 0 for row in rows)


@pytest.mark.slow
def test_crawl_benchmark_runs_on_a_small_table(tmp_path: Path) -> None:
    """benchmarks/crawl.py crawls cold, warm and after a write (every page a store hit
    on the warm crawl, none after the write)."""
    out = tmp_path / "crawl.json"
    run_python("-m", "benchmarks.crawl", "--rows", "120000", "--json", str(out))
    result = json.loads(out.read_text())
    assert result["pages"] >= 2
    assert result["second_crawl_store_hits"] == result["pages"]
    assert result["after_write_store_hits"] < result["pages"]


@pytest.mark.slow
def test_large_sites_benchmark_runs_on_a_small_table(tmp_path: Path) -> None:
    """benchmarks/large_sites.py measures the four modes beside the window query (every
    figure a ratio to it; no timing is asserted)."""
    out = tmp_path / "large.json"
    argv = ["--rows", "20000", "--databases", "sqlite", "--repeat", "1", "--json", str(out)]
    run_python("-m", "benchmarks.large_sites", *argv)
    rows = json.loads(out.read_text())
    assert [row["version"] for row in rows] == ["checksum", "revision", "counted", "to_entry"]
    measures = ("first_index", "index_again", "index_busy", "index_after_write", "page_304")
    assert all(row[f"{name}_x_window"] > 0 for row in rows for name in measures)


@pytest.mark.slow
def test_fleet_plans_benchmark_runs_on_a_small_table(tmp_path: Path) -> None:
    """benchmarks/fleet_plans.py: a second instance's first index from the plan the first
    kept in Redis (it never plans), beside the window query."""
    import os

    if not os.environ.get("SITEMAP_TEST_REDIS_URL"):
        pytest.skip("SITEMAP_TEST_REDIS_URL is not set: no Redis server (.ci/run starts one)")
    out = tmp_path / "fleet.json"
    argv = ["--rows", "20000", "--databases", "sqlite", "--repeat", "1", "--json", str(out)]
    run_python("-m", "benchmarks.fleet_plans", *argv)
    rows = json.loads(out.read_text())
    assert [row["version"] for row in rows] == ["checksum", "revision", "counted"]
    assert all(row["second_instance_passes"] == 0 for row in rows)
    assert all(row["second_instance_index_x_window"] > 0 for row in rows)


def test_ledger_benchmark_runs_on_a_tiny_section(tmp_path: Path) -> None:
    """benchmarks/ledger.py renders a section with and without the content ledger."""
    out = tmp_path / "l.json"
    run_python("-m", "benchmarks.ledger", "--n", "300", "--repeats", "1", "--json", str(out))
    rows = json.loads(out.read_text())
    assert [row["case"] for row in rows] == ["no ledger", "fields", "digest"]
    assert all(row["first_ms"] > 0 and row["steady_ms"] > 0 for row in rows)


@pytest.mark.slow
def test_large_features_benchmark_runs_on_a_small_table(tmp_path: Path) -> None:
    """benchmarks/large_features.py times dedupe and the ledger beside the same
    configuration without them, the window query and the page floor (no timing is
    asserted)."""
    out = tmp_path / "features.json"
    argv = ["--rows", "3000", "--databases", "sqlite", "--repeat", "1"]
    argv += ["--groups", "columns/one,to_entry/two", "--json", str(out)]
    run_python("-m", "benchmarks.large_features", *argv)
    rows = json.loads(out.read_text())
    cases = [(row["shape"], row["sections"], row["feature"]) for row in rows]
    assert cases == [
        ("columns", "one", "none"),
        ("columns", "one", "dedupe"),
        ("columns", "one", "ledger fields"),
        ("to_entry", "two", "none"),
        ("to_entry", "two", "dedupe"),
    ]
    measures = ("first_index", "index_again", "page_cold", "page_warm", "index_after_write")
    assert all(row[f"{name}_x_none"] > 0 for row in rows for name in measures)
    assert all(row["page_cold_x_floor"] > 0 and row["first_index_x_window"] > 0 for row in rows)
    assert all(row["first_index_peak_mib"] > 0 for row in rows)


@pytest.mark.slow
def test_django_unchanged_benchmark_runs_on_a_tiny_table(tmp_path: Path) -> None:
    """benchmarks/django_unchanged.py times each 304 past metadata_ttl with nothing
    committed beside the same request reading the rows, in alternation (SQLite here)."""
    out = tmp_path / "unchanged.json"
    argv = ["--rows", "300", "--page", "50", "--repeats", "2", "--out", str(out)]
    run_python("-m", "benchmarks.django_unchanged", *argv, SITEMAP_TEST_POSTGRES_URL=None)
    cases = json.loads(out.read_text())["cases"]
    assert len(cases) == 4 and all(case["nothing_committed_seconds"] > 0 for case in cases)
