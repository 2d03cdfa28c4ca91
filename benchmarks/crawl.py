"""A crawler's passes over a 1,000,000-row SQL section: cold, warm, and after a write.

``python -m benchmarks.crawl [--rows N]``

A SQLite table of N rows served by ``SQLAlchemyProvider`` in column mode (library
defaults: ``metadata_ttl`` 1 s, the in-process store), every request gzip as crawlers
send it, through the core in process. A crawl is the index and then every page it lists.
Reported: the first crawl, a second crawl (every page from the store), a crawl after one
row ``UPDATE``, each as seconds and as a ratio to the first; and the cold index against
the database's own aggregate (one grouped ``count``/``max`` over the same key ranges).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import core_get
from benchmarks.scale import build_table
from benchmarks.storms import _sql_provider


async def _crawl(core: Any) -> tuple[float, int, int]:
    started = time.perf_counter()
    status, index, _ = await core_get(core, "/sitemap_index.xml", accept_encoding="gzip")
    assert status == 200
    import gzip

    pages = re.findall(rb"<loc>https://example.com(/[^<]+)</loc>", gzip.decompress(index))
    hits = 0
    for page in pages:
        status, _, cache = await core_get(core, page.decode(), accept_encoding="gzip")
        assert status == 200
        hits += cache == "hit"
    return time.perf_counter() - started, len(pages), hits


def _write(path: Path, row: int, updated_at: str | None) -> None:
    with sqlite3.connect(path) as conn:
        if updated_at is None:  # as build_table wrote it
            conn.execute(
                "UPDATE products SET updated_at = datetime('2024-01-01', ? || ' seconds') "
                "WHERE id = ?",
                (f"+{row}", row),
            )
        else:
            conn.execute("UPDATE products SET updated_at = ? WHERE id = ?", (updated_at, row))


async def run(rows: int) -> dict[str, Any]:
    from sqlalchemy.ext.asyncio import create_async_engine

    from sitemap_middleware import SitemapConfig
    from sitemap_middleware._engine.core import SitemapCore

    directory = Path(tempfile.gettempdir()) / "sitemap_middleware_bench"
    directory.mkdir(exist_ok=True)
    path = directory / f"products-{rows}.sqlite3"
    build_table(path, rows)
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    provider = _sql_provider(engine, columns=True, metadata_ttl=1.0)  # the library default
    core = SitemapCore(
        SitemapConfig(base_url="https://example.com", sections={"products": provider})
    )
    started = time.perf_counter()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "SELECT count(*), max(updated_at) FROM products GROUP BY (id - 1) / 49500"
        ).fetchall()
    aggregate = time.perf_counter() - started
    started = time.perf_counter()
    await core_get(core, "/sitemap_index.xml", accept_encoding="gzip")
    cold_index = time.perf_counter() - started
    first, pages, _ = await _crawl(core)
    await asyncio.sleep(1.1)  # past metadata_ttl, as a crawler's next pass is
    second, _, hits = await _crawl(core)
    _write(path, rows // 2, "2030-01-01 00:00:00")  # one row's lastmod moves
    try:
        await asyncio.sleep(1.1)
        after_write, _, after_hits = await _crawl(core)
    finally:
        _write(path, rows // 2, None)  # the shared table back as built
    await core.aclose()
    await engine.dispose()
    return {
        "rows": rows,
        "pages": pages,
        "aggregate_s": round(aggregate, 3),
        "cold_index_s": round(cold_index, 3),
        "cold_index_x_aggregate": round(cold_index / aggregate, 1),
        "first_crawl_s": round(first, 3),
        "second_crawl_s": round(second, 3),
        "second_x_first": round(second / first, 3),
        "second_crawl_store_hits": hits,
        "after_write_crawl_s": round(after_write, 3),
        "after_write_x_first": round(after_write / first, 3),
        "after_write_store_hits": after_hits,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.rows))
    for key, value in result.items():
        print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
