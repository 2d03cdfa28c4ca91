"""Issue #4's scale check: a big SQLite table behind SQLAlchemyProvider.

Page 20 should cost what page 1 costs (keyset pages, no OFFSET scans), and the memory
used while serving a 50,000-URL page must not grow with the table.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
import tracemalloc
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import BASE_URL


def build_table(path: Path, rows: int) -> None:
    if path.exists():
        return
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    start = datetime(2024, 1, 1)
    with sqlite3.connect(partial) as conn:
        conn.execute(
            "CREATE TABLE products (id INTEGER PRIMARY KEY, updated_at TIMESTAMP NOT NULL)"
        )
        conn.executemany(
            "INSERT INTO products VALUES (?, ?)",
            ((i, (start + timedelta(seconds=i)).isoformat(" ")) for i in range(1, rows + 1)),
        )
    partial.rename(path)


def _app(path: Path, page_size: int) -> Any:
    from sqlalchemy import Column, DateTime, Integer, MetaData, Table
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig, SitemapEntry
    from sitemap_middleware.providers import SQLAlchemyProvider

    table = Table(
        "products",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("updated_at", DateTime),
    )
    # NullPool: every benchmark request runs on a fresh event loop (anyio.run), and pooled
    # aiosqlite connections must not outlive the loop that opened them.
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}", poolclass=NullPool)
    provider = SQLAlchemyProvider(
        engine,
        table,
        key="id",
        lastmod="updated_at",
        to_entry=lambda row: SitemapEntry(
            f"/products/{row.id}?ref=a&b={row.id}",
            lastmod=row.updated_at,
            changefreq="daily",
            priority=0.5,
        ),
    )
    config = SitemapConfig(
        base_url=BASE_URL, sections={"products": provider}, max_urls_per_page=page_size
    )

    async def home(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover
        raise AssertionError("not ours")

    return ASGISitemapMiddleware(home, config=config)


def _timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _measure(results: dict[str, Any], label: str, path: Path, count: int, page_size: int) -> None:
    from benchmarks.run import asgi_drain, asgi_get

    app = _app(path, page_size)
    # Key-range pages keep 1 % headroom for rows inserted during a crawl.
    pages = -(-count // (page_size - page_size // 100))
    far = min(20, pages)
    index_path, far_path = "/sitemap_index.xml", f"/sitemap-products-{far}.xml"
    body = asgi_get(app, index_path)  # the first index plans the page boundaries once
    assert body.count(b"<sitemap>") == pages
    page1 = min(_timed(lambda: asgi_get(app, "/sitemap-products-1.xml")) for _ in range(3))
    page_far = min(_timed(lambda: asgi_get(app, far_path)) for _ in range(3))
    index = min(_timed(lambda: asgi_get(app, index_path)) for _ in range(3))
    results[f"{label}: page 1"] = f"{page1 * 1000:.0f} ms"
    results[f"{label}: page {far}"] = f"{page_far * 1000:.0f} ms ({page_far / page1:.2f}x page 1)"
    results[f"{label}: index (page plan cached)"] = f"{index * 1000:.0f} ms"
    tracemalloc.start()
    asgi_drain(app, far_path)  # streamed and dropped, as a server does
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    results[f"{label}: peak traced memory serving page {far}"] = f"{peak / 1024 / 1024:.1f} MiB"


def run(rows: int, page_size: int = 50_000) -> dict[str, Any]:
    from benchmarks.run import asgi_get

    directory = Path(tempfile.gettempdir()) / "sitemap_middleware_bench"
    directory.mkdir(exist_ok=True)
    results: dict[str, Any] = {"rows": f"{rows:,}", "page size": f"{page_size:,}"}
    for label, count in (("small table", max(rows // 10, page_size * 2)), ("big table", rows)):
        path = directory / f"products-{count}.sqlite3"
        build_table(path, count)
        app = _app(path, page_size)
        first = _timed(lambda app=app: asgi_get(app, "/sitemap_index.xml"))
        results[f"{label} ({count:,} rows): first index (plans pages: one window scan)"] = (
            f"{first * 1000:.0f} ms"
        )
        _measure(results, label, path, count, page_size)
    return results
