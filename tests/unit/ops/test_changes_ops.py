"""The changes sitemap through the operations: `check` passes on a site serving one
(its URLs repeat the pages' by design: no duplicate-url) and `export` writes it (and
its .gz), listed first in the exported index."""

from __future__ import annotations

import gzip
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Changes,
    Robots,
    SitemapConfig,
    SitemapEntry,
)
from sitemap_middleware._ops.apps import client_for_app
from sitemap_middleware._ops.check import CheckOptions, run_check
from sitemap_middleware._ops.export import export_app
from sitemap_middleware._ops.fetch import Fetcher
from sitemap_middleware._ops.findings import CheckReport
from tests.harness.documents import check_document, child_urls, page_urls

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def _app() -> Any:
    async def page(request: Any) -> PlainTextResponse:
        return PlainTextResponse("ok")

    rows = [SitemapEntry(f"/post-{n}", lastmod=NOW - timedelta(hours=n * 10)) for n in range(6)]
    config = SitemapConfig(
        base_url="https://blog.example",
        sections={"posts": rows, "static": ["/about"]},
        robots=Robots(),
        changes=Changes(hours=24),
    )
    return ASGISitemapMiddleware(Starlette(routes=[Route("/{p:path}", page)]), config=config)


def test_check_passes_on_a_site_with_a_changes_sitemap() -> None:
    app = _app()

    async def main() -> CheckReport:
        async with client_for_app(app) as client:
            options = CheckOptions(check_urls=True)
            return await run_check("https://blog.example/", Fetcher(client, rate=0), options)

    report = anyio.run(main)
    assert report.count("error") == 0 and report.count("warning") == 0, report.format_text()
    urls = [doc.url for doc in report.documents]
    assert "https://blog.example/sitemap-changes.xml" in urls
    assert report.urls == 7  # the changed ones are not counted (nor warned of) twice


def test_export_writes_the_changes_sitemap(tmp_path: Path) -> None:
    result = anyio.run(export_app, _app(), tmp_path)
    assert not result.failed
    index = check_document((tmp_path / "sitemap.xml").read_bytes())
    assert child_urls(index)[0] == "https://blog.example/sitemap-changes.xml"
    changes = (tmp_path / "sitemap-changes.xml").read_bytes()
    assert page_urls(check_document(changes)) == [
        f"https://blog.example/post-{n}" for n in range(3)
    ]
    assert gzip.decompress((tmp_path / "sitemap-changes.xml.gz").read_bytes()) == changes
