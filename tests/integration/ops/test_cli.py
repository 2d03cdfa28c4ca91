"""The commands as a person runs them: ``python -m sitemap_middleware check|export|generate``,
each in a process of its own (exit statuses, what they print, ``--app`` starting the
app's lifespan). What each command does is held in process by tests/unit/ops/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware.ops import parse_sitemap
from tests.sites.baseline_site import DEFAULT

ROOT = Path(__file__).resolve().parents[3]
#: The baseline site's base URL (tests/sites/baseline_site.py).
SHOP = "https://shop.example"


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m sitemap_middleware ARGS`` from the repository, with ``env`` added."""
    return subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        timeout=120,
        cwd=ROOT,
    )


def test_export_command_exits_non_zero_when_a_section_fails(tmp_path: Path) -> None:
    """The CLI prints the failure and exits 1."""
    done = cli(
        "export", "--app", "tests.sites.lifespan_app:app", str(tmp_path), FAILING_SECTION="1"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "failed" in done.stdout and "'broken'" in done.stdout


@pytest.mark.parametrize("command", ["check", "export"])
def test_app_mode_runs_the_apps_lifespan(command: str, tmp_path: Path) -> None:
    """--app starts the app as a server does: its startup fills the data, shutdown runs."""
    marker = tmp_path / "shutdown"
    args = ["--app", "tests.sites.lifespan_app:app"]
    args += [str(tmp_path / "out")] if command == "export" else ["--no-progress"]
    done = cli(command, *args, SHUTDOWN_MARKER=str(marker))
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.read_text() == "stopped"
    if command == "export":
        assert b"/started/2" in (tmp_path / "out/sitemap.xml").read_bytes()


def test_app_mode_reports_a_failing_startup(tmp_path: Path) -> None:
    """A startup that fails is a clear error (exit 2), not a report of empty sections."""
    done = cli(
        "check", "--app", "tests.sites.lifespan_app:app", "--no-progress", FAILING_STARTUP="1"
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "startup failed" in done.stderr and "no database" in done.stderr


def test_cli_writes_a_baseline_then_gates_on_it(tmp_path: Path) -> None:
    """`check --app --write-baseline`, then `check --app --baseline`: 0 unchanged, 1 after
    removals beyond --max-removed, 2 for a missing baseline file."""
    file = tmp_path / "baseline.json"

    def run(sections: dict[str, Any] | None, *extra: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "BASELINE_SITE": json.dumps(sections)}
        command = [sys.executable, "-m", "sitemap_middleware", "check", "--no-progress"]
        command += ["--app", "tests.sites.baseline_site:app", "--no-check-urls", *extra]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)

    first = run(None, "--write-baseline", str(file))
    assert first.returncode == 0, first.stdout + first.stderr
    assert json.loads(file.read_text())["format"] == "sitemap-middleware-baseline"
    same = run(None, "--baseline", str(file))
    assert same.returncode == 0, same.stdout
    assert "note: baseline: 0 URLs removed" in same.stdout
    fewer = run({**DEFAULT, "blog": DEFAULT["blog"][:5]}, "--baseline", str(file), "--json")
    assert fewer.returncode == 1
    codes = json.loads(fewer.stdout)["summary"]["codes"]
    assert codes["baseline-urls-removed"] == 1 and "baseline-section-vanished" not in codes
    missing = run(None, "--baseline", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "cannot read --baseline" in missing.stderr


def test_cli_require_and_github(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BASELINE_SITE": json.dumps({"pages": ["/"]})}
    command = [sys.executable, "-m", "sitemap_middleware", "check", "--app"]
    done = subprocess.run(
        [*command, "tests.sites.baseline_site:app", "--no-check-urls", "--no-progress"]
        + ["--require", f"{SHOP}/about", "--github"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error title=required-url-missing::"), done.stdout


def test_export_command(tmp_path: Path) -> None:
    """`sitemap-middleware export --app module:app DIR` writes files and reports counts."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "sitemap_middleware", "export", "--app"]
    done = subprocess.run(
        [*command, "tests.sites.checked_sites:selfcheck_wsgi", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert "/sitemap.xml" in data["written"] and (tmp_path / "sitemap.xml.gz").is_file()
    bad = subprocess.run(
        [*command, "tests.sites.nothing:app", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "cannot import 'tests.sites.nothing'" in bad.stderr


def test_generate_from_a_legacy_index_of_local_files(tmp_path: Path) -> None:
    """An index's children are read from files of the same name beside it; lastmods and
    extensions survive, duplicates are listed once, --base-url keeps what is under it."""
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    urlset = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
    (legacy / "a.xml").write_text(
        f"{urlset}<url><loc>https://example.com/shop/a</loc><lastmod>2024-05-01</lastmod>"
        "<image:image><image:loc>https://cdn.example/a.png</image:loc></image:image></url>"
        "<url><loc>https://example.com/blog/x</loc></url></urlset>"
    )
    (legacy / "b.xml").write_text(
        f"{urlset}<url><loc>https://example.com/shop/b</loc></url>"
        "<url><loc>https://example.com/shop/a</loc></url></urlset>"
    )
    (legacy / "index.xml").write_text(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<sitemap><loc>https://old.example/a.xml</loc></sitemap>"
        "<sitemap><loc>https://old.example/b.xml</loc></sitemap></sitemapindex>"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "sitemap_middleware", "generate", str(legacy / "index.xml")]
    command += ["--out", str(tmp_path / "out"), "--base-url", "https://example.com/shop/"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "exported to" in done.stdout
    parsed = parse_sitemap(tmp_path / "out" / "shop" / "sitemap.xml")
    assert parsed.kind == "urlset"
    assert [(e.loc, str(e.lastmod), len(e.images)) for e in parsed.entries] == [
        ("https://example.com/shop/a", "2024-05-01", 1),
        ("https://example.com/shop/b", "None", 0),
    ]
    bad = subprocess.run(
        [*command[:4], str(tmp_path / "missing.txt"), "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert bad.returncode == 2
    assert f"cannot read {tmp_path / 'missing.txt'}: No such file or directory" in bad.stderr


def test_generate_refuses_when_no_url_is_under_the_base_url(tmp_path: Path) -> None:
    """Every URL outside --base-url: exit 2 and nothing written (before: exit 0 and a
    robots.txt naming no sitemap)."""
    (tmp_path / "urls.txt").write_text("https://example.com/a\nhttps://example.com/b\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "sitemap_middleware", "generate", str(tmp_path / "urls.txt")]
    command += ["--out", str(tmp_path / "out"), "--base-url", "https://other.example/"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "none of the sources' 2 URLs is under https://other.example/" in done.stderr
    assert not (tmp_path / "out").exists()
