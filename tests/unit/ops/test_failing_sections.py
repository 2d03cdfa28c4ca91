"""`export` and `check` when a section's provider fails, and apps with a lifespan.

A failing section must never cost the files an earlier export wrote, and neither command
may report success while the site serves less than it should.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette

from sitemap_middleware import ASGISitemapMiddleware, Renders, SitemapConfig, SitemapEntry
from sitemap_middleware._ops.apps import client_for_app
from sitemap_middleware._ops.check import CheckOptions, run_check
from sitemap_middleware._ops.export import MANIFEST, export_app
from sitemap_middleware._ops.fetch import Fetcher
from sitemap_middleware._ops.findings import CheckReport
from tests.sites.exported_sites import Flaky, make_app

BASE = "https://example.com"


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    }


@pytest.mark.parametrize("broken", ["broken_planning", "broken_pages"])
def test_export_keeps_a_failing_sections_files_and_reports_it(broken: str, tmp_path: Path) -> None:
    """A section that fails keeps every file of the last good export (index included)."""
    flaky = Flaky(25)
    app = make_app(flaky)
    first = anyio.run(export_app, app, tmp_path)
    assert first.failed == [] and "sitemap-items-3.xml" in "".join(first.written)
    before = snapshot(tmp_path)
    manifest_before = json.loads((tmp_path / MANIFEST).read_text())["documents"]

    setattr(flaky, broken, True)
    if broken == "broken_pages":  # a damaged file must be fetched again: its page answers 503
        (tmp_path / "sitemap-items-2.xml").write_bytes(b"damaged")
        before = snapshot(tmp_path)
    result = anyio.run(export_app, app, tmp_path)
    assert result.removed == []
    assert result.failed, result.format_text()
    assert "items" in " ".join(result.failed)
    assert snapshot(tmp_path) == before  # nothing lost, nothing half-replaced
    manifest = json.loads((tmp_path / MANIFEST).read_text())["documents"]
    assert set(manifest) == set(manifest_before)
    assert "failed" in result.format_text()

    setattr(flaky, broken, False)
    healed = anyio.run(export_app, app, tmp_path)
    assert healed.failed == [] and healed.removed == []


def test_export_of_a_failing_section_into_an_empty_directory_still_fails(tmp_path: Path) -> None:
    """With no earlier files to keep, what is served is written and the failure reported."""
    flaky = Flaky(5)
    flaky.broken_planning = True
    result = anyio.run(export_app, make_app(flaky), tmp_path)
    assert result.failed and (tmp_path / "sitemap.xml").is_file()


async def _check(app: Any) -> CheckReport:
    async with client_for_app(app) as client:
        return await run_check(BASE + "/", Fetcher(client, rate=0), CheckOptions())


def test_check_reports_a_section_left_out_of_the_index_as_an_error() -> None:
    """An index that leaves a failing section out is an error, not OK."""
    flaky = Flaky(5)
    flaky.broken_planning = True
    report = anyio.run(_check, make_app(flaky))
    assert not report.ok
    assert report.codes()["section-failed"] == 1, report.format_text()
    assert "'items'" in report.format_text()


def test_check_reports_a_page_answering_503_as_an_error() -> None:
    """A listed page that answers 503 fails the run."""
    flaky = Flaky(25)
    app = make_app(flaky)
    assert anyio.run(_check, app).ok
    flaky.broken_pages = True
    report = anyio.run(_check, app)
    assert not report.ok and report.codes()["http-status"] >= 1, report.format_text()


class BreaksMidway(Flaky):
    """Pages that fail after their first bytes (the provider dies mid-stream)."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.broken_midway = False

    async def entries(self) -> AsyncIterator[SitemapEntry]:
        for i in range(self.size):
            if self.broken_midway and i == 3000:
                raise RuntimeError("the database went away mid-page")
            yield SitemapEntry(f"/item/{i}")


def test_export_records_a_document_cut_short_and_exports_the_rest(tmp_path: Path) -> None:
    """A page whose provider fails after its first byte is a failed document (its earlier
    file kept), not a traceback that leaves the rest unexported (hostile review, F8)."""
    flaky = BreaksMidway(6000)
    config = SitemapConfig(
        base_url=BASE,
        sections={"pages": ["/", "/about"], "items": flaky},
        max_urls_per_page=10_000,
        renders=Renders(memory_bytes=0),
    )
    app = Starlette()
    app.add_middleware(ASGISitemapMiddleware, config=config)
    first = anyio.run(export_app, app, tmp_path)
    assert first.failed == []
    before = snapshot(tmp_path)
    flaky.broken_midway = True  # the kept plan still lists the page: it fails mid-stream
    (tmp_path / "sitemap-items-1.xml").write_bytes(b"damaged")  # so it is fetched again
    (tmp_path / "sitemap-pages-1.xml").unlink()  # and the rest is exported as usual
    before["sitemap-items-1.xml"] = b"damaged"
    result = anyio.run(export_app, app, tmp_path)
    assert result.failed and "cut short" in " ".join(result.failed), result.format_text()
    assert snapshot(tmp_path) == before  # the page written again, the failed one kept


def test_exported_files_follow_the_umask(tmp_path: Path) -> None:
    """A web server running as another user can read them (0644 under umask 022, not the
    0600 of a temporary file; hostile review, F7)."""
    old = os.umask(0o022)
    try:
        anyio.run(export_app, make_app(Flaky(5)), tmp_path)
    finally:
        os.umask(old)
    modes = {path.stat().st_mode & 0o777 for path in tmp_path.rglob("*") if path.is_file()}
    assert modes == {0o644}


def test_app_mode_takes_an_app_that_returns_on_lifespan_as_having_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``if scope["type"] != "http": return`` means no lifespan support (as uvicorn takes
    it), not a startup to wait for until the timeout (hostile review, F6)."""
    from sitemap_middleware._ops import apps

    monkeypatch.setattr(apps, "LIFESPAN_TIMEOUT", 2.0)
    config = SitemapConfig(base_url=BASE, sections={"pages": ["/", "/about"]})

    async def raw(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    report = anyio.run(_check, ASGISitemapMiddleware(raw, config=config))
    assert report.ok, report.format_text()
