"""``check --app`` reports lastmods that moved while their content did not (issue 27,
item 5): the app's content ledger holds them, and check says which, per section."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import pytest

from sitemap_middleware import Renders
from sitemap_middleware._ops.apps import client_for_app
from sitemap_middleware._ops.check import CheckOptions, run_check
from sitemap_middleware._ops.export import find_served
from sitemap_middleware._ops.fetch import Fetcher
from sitemap_middleware._ops.findings import CheckReport
from sitemap_middleware._ops.ledger_check import check_ledger
from tests.sites import ledger_site

CODE = "lastmod-without-content"


def _site(**rows: tuple[str, str]) -> None:
    os.environ["LEDGER_SITE"] = json.dumps({f"/{k}": list(v) for k, v in rows.items()})


async def _check(app: Any) -> CheckReport:
    async with client_for_app(app) as client:
        fetcher = Fetcher(client, concurrency=4, rate=0.0, timeout=10.0)
        report = await run_check("https://shop.example/", fetcher, CheckOptions())
    check_ledger(find_served(app), "https://shop.example/", report)
    return report


def _held(report: CheckReport) -> list[Any]:
    return [f for f in report.site.kept if f.code == CODE]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEDGER_SITE", "{}")


def test_check_reports_a_lastmod_that_moved_without_the_content() -> None:
    app = ledger_site.make_app()
    _site(a=("r1", "2024-01-01"), b=("r1", "2024-01-01"), c=("r1", "2024-01-01"))
    first = anyio.run(_check, app)
    assert _held(first) == []
    # a's provider bumps its lastmod (same content); b's content and lastmod move
    _site(a=("r1", "2024-03-01"), b=("r2", "2024-03-01"), c=("r1", "2024-01-01"))
    report = anyio.run(_check, app)
    (finding,) = _held(report)
    assert finding.severity == "warning" and finding.url == "https://shop.example/a"
    assert "section 'products': 1 URL's lastmod moved while its content did not" in (
        finding.message
    )
    assert "https://shop.example/a (provider: 2024-03-01, written: 2024-01-01)" in finding.message
    assert report.ok  # a warning
    assert report.lastmods["https://shop.example/sitemap.xml"] == [
        "2024-01-01T00:00:00+00:00",
        "2024-03-01T00:00:00+00:00",
        "2024-01-01T00:00:00+00:00",
    ]
    # its content moves too: no longer reported
    _site(a=("r2", "2024-03-01"), b=("r2", "2024-03-01"), c=("r1", "2024-01-01"))
    assert _held(anyio.run(_check, app)) == []


def test_content_that_moves_with_its_lastmod_is_not_reported() -> None:
    app = ledger_site.make_app()
    _site(a=("r1", "2024-01-01"))
    anyio.run(_check, app)
    for n, day in ((2, "2024-02-01"), (3, "2024-03-01")):
        _site(a=(f"r{n}", day))
        assert _held(anyio.run(_check, app)) == []


def test_an_in_process_ledger_is_noted_as_unseen_by_check() -> None:
    app = ledger_site.make_app(Renders())
    _site(a=("r1", "2024-01-01"))
    report = anyio.run(_check, app)
    assert any("records in process" in note for note in report.notes), report.notes


def test_the_in_process_note_does_not_deny_what_check_found() -> None:
    """An in-process ledger that saw a lastmod move during this process (here: an earlier
    crawl of the same app object) is reported, and the note does not say it sees none."""
    app = ledger_site.make_app(Renders())
    _site(a=("r1", "2024-01-01"))
    anyio.run(_check, app)
    _site(a=("r1", "2024-03-01"))
    report = anyio.run(_check, app)
    assert len(_held(report)) == 1
    (note,) = [note for note in report.notes if "records in process" in note]
    assert "sees no lastmod move" not in note, note
    assert "during its own run" in note, note
