"""A ``to_entry`` section planned from row counts behind a real server (uvicorn), read
by a real HTTP client: the page that outgrows its estimate is a whole document within
budget, and the index served after it lists every URL exactly once."""

from __future__ import annotations

from pathlib import Path

import httpx
from sqlalchemy import create_engine, insert
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from sitemap_middleware import Renders, SitemapConfig
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.servers import serve
from tests.integration.test_counted_plans import BASE, Entries, _provider, _rows, items, metadata


def _crawl(client: httpx.Client, url: str, budget: int) -> list[str]:
    reply = client.get(url + "/sitemap_index.xml")
    assert reply.status_code == 200
    urls: list[str] = []
    for child in child_urls(check_document(reply.content)):
        page = client.get(url + child.removeprefix(BASE))
        assert page.status_code == 200 and len(page.content) <= budget, child
        urls.extend(page_urls(check_document(page.content)))
    return urls


def test_a_page_that_outgrows_its_estimate_over_http(tmp_path: Path) -> None:
    database = tmp_path / "counted.sqlite3"
    sync = create_engine(f"sqlite:///{database}")
    slugs = ["x" * 400 if 250 <= i < 2750 else f"s{i}" for i in range(20_000)]
    with sync.begin() as conn:
        metadata.create_all(conn)
        conn.execute(insert(items), _rows(slugs))
    sync.dispose()
    # Connects in the server's loop, gone with it: no pooled connection may outlive it
    # (one left to the garbage collector warns in whatever test runs next).
    engine = create_async_engine(f"sqlite+aiosqlite:///{database}", poolclass=NullPool)
    budget = 1024 * 1024
    config = SitemapConfig(
        base_url=BASE,
        sections={"items": _provider(engine, Entries())},
        max_urls_per_page=5000,
        max_bytes_per_page=budget,
        renders=Renders(),
    )
    with serve("uvicorn", config) as url, httpx.Client(timeout=60) as client:
        first = _crawl(client, url, budget)
        second = _crawl(client, url, budget)
        third = _crawl(client, url, budget)
    assert len(first) == len(set(first)) < 20_000
    assert len(second) == len(set(second)) == 20_000
    assert sorted(third) == sorted(second)
