"""The benchmark suite runs end to end on a tiny workload (no timings are asserted)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from benchmarks import run


@pytest.mark.slow
@pytest.mark.usefixtures("django_project")
def test_benchmark_suite_runs_on_a_tiny_workload(tmp_path: Path) -> None:
    """Every scenario produces rows and both result files are written. (Django's own
    views run in this process: on the Django tests' project, which whichever of them
    runs first in a test process sets up, as Django allows one set of settings.)"""
    results = run.main(["--smoke", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "smoke.json").read_text())
    assert saved["smoke"] is True
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
    from benchmarks import storms

    results = storms.main(["--smoke", "--out", str(tmp_path)])
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
    gc.collect()  # a database connection left open warns here, not in a later test


@pytest.mark.slow
def test_django_version_benchmark_runs_on_a_tiny_table(tmp_path: Path) -> None:
    """benchmarks/django_version.py measures every case (SQLite only here: it rewrites the
    products table, and the PostgreSQL one is the test project's seeded table)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "SITEMAP_TEST_POSTGRES_URL"}
    out = tmp_path / "version.json"
    argv = ["-m", "benchmarks.django_version", "--rows", "300", "--repeats", "1"]
    subprocess.run([sys.executable, *argv, "--out", str(out)], check=True, env=env)
    results = json.loads(out.read_text())["results"]
    cases = {row["case"] for row in results if row["database"] == "sqlite"}
    assert cases == {"checksum", "checksum_slug", "count_max"}
    assert all(row["seconds"] > 0 for row in results)


@pytest.mark.slow
def test_shape_matrix_runs_on_a_tiny_workload() -> None:
    """benchmarks/shapes.py serves every value shape and times it beside its floor."""
    from benchmarks import shapes

    rows = shapes.measure(200, 1, shapes.all_cases())
    assert len(rows) == len(shapes.all_cases())
    assert all(row[column] > 0 for row in rows for column in shapes.COLUMNS)
    kinds = {row["items"] for row in rows}
    assert {"RowMapping", "ORM rows via map="} <= kinds


@pytest.mark.slow
def test_warm_serving_benchmark_runs_against_static_files(tmp_path: Path) -> None:
    """benchmarks/warm.py serves a stored page beside the same bytes as static files on
    uvicorn and gunicorn (identity, gzip and 304 each answered as expected)."""
    from benchmarks import warm

    results = warm.main(["--seconds", "0.2", "--rounds", "1", "--json", str(tmp_path / "w.json")])
    rows = [row for result in results for row in result["rows"]]
    assert {(row["server"], row["request"]) for row in rows} == {
        (server, request)
        for server in ("uvicorn", "gunicorn")
        for request in ("identity", "gzip", "304")
    }
    assert all(row["ours_rps"] > 0 and row["static_rps"] > 0 for row in rows)


@pytest.mark.slow
def test_crawl_benchmark_runs_on_a_small_table() -> None:
    """benchmarks/crawl.py crawls cold, warm and after a write (every page a store hit
    on the warm crawl, none after the write)."""
    from benchmarks import crawl

    result = crawl.main(["--rows", "120000"])
    assert result["pages"] >= 2
    assert result["second_crawl_store_hits"] == result["pages"]
    assert result["after_write_store_hits"] < result["pages"]


@pytest.mark.slow
def test_large_sites_benchmark_runs_on_a_small_table() -> None:
    """benchmarks/large_sites.py measures both versions beside the window query (every
    figure a ratio to it; no timing is asserted)."""
    from benchmarks import large_sites

    rows = large_sites.main(["--rows", "20000", "--databases", "sqlite", "--repeat", "1"])
    assert [row["version"] for row in rows] == ["checksum", "revision"]
    measures = ("first_index", "index_again", "index_after_write", "page_304")
    assert all(row[f"{name}_x_window"] > 0 for row in rows for name in measures)


def test_ledger_benchmark_runs_on_a_tiny_section(tmp_path: Path) -> None:
    """benchmarks/ledger.py renders a section with and without the content ledger."""
    from benchmarks import ledger

    rows = ledger.main(["--n", "300", "--repeats", "1", "--json", str(tmp_path / "l.json")])
    assert [row["case"] for row in rows] == ["no ledger", "fields", "digest"]
    assert all(row["first_ms"] > 0 and row["steady_ms"] > 0 for row in rows)
    assert json.loads((tmp_path / "l.json").read_text()) == rows
