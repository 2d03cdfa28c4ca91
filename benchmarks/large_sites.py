"""A large site that changes all day (issue 23): plans and versions where the data lives.

``python -m benchmarks.large_sites [--rows 100000,1000000] [--databases sqlite,postgresql]``

A table ``(id, slug, updated_at, revision)`` of N rows (``revision`` bumped from one
sequence on every write, indexed, as a large site keeps one) served by
``SQLAlchemyProvider`` in column mode through the core in process, gzip as crawlers
send it, library defaults otherwise (``metadata_ttl`` 1 s). Two configurations: the
default version (a checksum of every row) and ``version_column="revision"``.

Measured, in one run, beside the database's own window query over the same pages
(``count(*)``, ``max(updated_at)`` per run of 49,500 rows by ``row_number()``, the same
driver), each a median of ``--repeat`` runs:

- ``first_index``: the first ``/sitemap_index.xml`` of a new core (its plan measured);
- ``index_again``: the same index 1.1 s later (past ``metadata_ttl``), nothing changed;
- ``index_after_write``: the index after one row's ``UPDATE`` (a rename);
- ``page_304``: a conditional GET of a key-range page past ``metadata_ttl``.

PostgreSQL is used when ``SITEMAP_TEST_POSTGRES_URL`` names a server (``.ci/run`` and
``/tmp/services.sh``-style set-ups start one); otherwise that database is skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from benchmarks.common import core_get, markdown_table

metadata = MetaData()
table = Table(
    "large_products",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False, index=True),
    Column("revision", Integer, nullable=False, index=True),
)


def window_sql(name: str) -> str:
    """The database's own index of table ``name``: ``count(*)`` and ``max(updated_at)``
    per run of 49,500 rows (a key-range page) by ``row_number()``."""
    return (
        "SELECT count(*), max(updated_at) FROM (SELECT updated_at, "
        f"(row_number() OVER (ORDER BY id) - 1) / 49500 AS b FROM {name}) AS r GROUP BY b"
    )


WINDOW = window_sql("large_products")
START = datetime(2024, 1, 1)


async def build(
    engine: AsyncEngine, rows: int, table: Table = table, row: Callable[[int], Any] | None = None
) -> None:
    """``table`` of ``rows`` rows (``row(i)``: row ``i``, from 1), kept between runs
    (rebuilt when its size differs)."""
    make = row or _row
    async with engine.begin() as conn:
        await conn.run_sync(table.metadata.create_all)
        have = (await conn.execute(text(f"SELECT count(*) FROM {table.name}"))).scalar()
        if have == rows:
            return
        await conn.execute(table.delete())
    chunk = 50_000
    for first in range(1, rows + 1, chunk):
        batch = [make(i) for i in range(first, min(first + chunk, rows + 1))]
        async with engine.begin() as conn:
            await conn.execute(table.insert(), batch)


def _row(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "slug": f"product-{i}",
        "updated_at": START + timedelta(seconds=i),
        "revision": i,
    }


def database_url(database: str, rows: int, stem: str = "large") -> str | None:
    """The URL of ``database`` ("sqlite": a file kept under the bench folder; else
    ``SITEMAP_TEST_POSTGRES_URL``, None when unset)."""
    if database == "sqlite":
        folder = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sitemap_middleware_bench")
        os.makedirs(folder, exist_ok=True)
        return f"sqlite+aiosqlite:///{folder}/{stem}-{rows}.sqlite3"
    return os.environ.get("SITEMAP_TEST_POSTGRES_URL") or None


def _provider(engine: AsyncEngine, revision: bool) -> Any:
    from sitemap_middleware.providers import SQLAlchemyProvider

    return SQLAlchemyProvider(
        engine,
        table,
        key="id",
        location="/products/{slug}?ref=a&id={id}",
        lastmod="updated_at",
        changefreq="daily",
        version_column="revision" if revision else None,
    )


def _core(provider: Any) -> Any:
    from sitemap_middleware import SitemapConfig
    from sitemap_middleware._engine.core import SitemapCore

    return SitemapCore(
        SitemapConfig(base_url="https://example.com", sections={"products": provider})
    )


async def timed(call: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> float:
    started = time.perf_counter()
    await call(*args, **kwargs)
    return time.perf_counter() - started


async def _window(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        (await conn.execute(text(WINDOW))).all()


async def _measure(engine: AsyncEngine, rows: int, revision: bool, repeat: int) -> dict[str, Any]:
    gzip = {"accept_encoding": "gzip"}
    figures: dict[str, list[float]] = {}

    def note(name: str, seconds: float) -> None:
        figures.setdefault(name, []).append(seconds)

    for run in range(repeat):
        note("window_query", await timed(_window, engine))
        provider = _provider(engine, revision)
        core = _core(provider)
        note("first_index", await timed(core_get, core, "/sitemap_index.xml", **gzip))
        await asyncio.sleep(1.1)
        note("index_again", await timed(core_get, core, "/sitemap_index.xml", **gzip))
        status, body, _ = await core_get(core, "/sitemap_index.xml")
        page = body.split(b"<loc>https://example.com", 2)[1].split(b"</loc>")[0].decode()
        _, _, _ = await core_get(core, page, **gzip)
        from benchmarks.common import core_reply_headers

        etag = (await core_reply_headers(core, page))["etag"]
        await asyncio.sleep(1.1)
        note(
            "page_304",
            await timed(core_get, core, page, if_none_match=etag, **gzip),
        )
        async with engine.begin() as conn:
            await conn.execute(
                table.update()
                .where(table.c.id == rows // 2)
                .values(slug=f"renamed-{run}", revision=rows + 1 + run)
            )
        await asyncio.sleep(1.1)
        note(
            "index_after_write",
            await timed(core_get, core, "/sitemap_index.xml", **gzip),
        )
        await core.aclose()
        async with engine.begin() as conn:  # the table back as built
            await conn.execute(
                table.update()
                .where(table.c.id == rows // 2)
                .values(slug=f"product-{rows // 2}", revision=rows // 2)
            )
    # Memory of a cold index, traced apart from the timings (tracing slows Python down).
    core = _core(_provider(engine, revision))
    tracemalloc.start()
    await core_get(core, "/sitemap_index.xml", **gzip)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    await core.aclose()
    medians = {name: statistics.median(values) for name, values in figures.items()}
    window = medians["window_query"]
    out: dict[str, Any] = {"rows": rows, "version": "revision" if revision else "checksum"}
    out["first_index_peak_mib"] = round(peak / 2**20, 1)
    for name, seconds in medians.items():
        out[f"{name}_s"] = round(seconds, 4)
        if name != "window_query":
            out[f"{name}_x_window"] = round(seconds / window, 3)
    return out


Measure = Callable[[AsyncEngine, int, bool], Awaitable[dict[str, Any]]]


async def each_table(
    databases: list[str], sizes: list[int], measure: Measure
) -> list[dict[str, Any]]:
    """``measure(engine, rows, revision)`` on the table of each database and size, in both
    version modes (the checksum, then the revision column); each row printed as it comes."""
    results: list[dict[str, Any]] = []
    for database in databases:
        for rows in sizes:
            url = database_url(database, rows)
            if url is None:
                print(f"{database}: SITEMAP_TEST_POSTGRES_URL is not set, skipped")
                break
            engine = create_async_engine(url)
            try:
                await build(engine, rows)
                for revision in (False, True):
                    row = {"database": database, **await measure(engine, rows, revision)}
                    print(row, flush=True)
                    results.append(row)
            finally:
                await engine.dispose()
    return results


async def run(databases: list[str], sizes: list[int], repeat: int) -> list[dict[str, Any]]:
    async def measure(engine: AsyncEngine, rows: int, revision: bool) -> dict[str, Any]:
        return await _measure(engine, rows, revision, repeat)

    return await each_table(databases, sizes, measure)


def report(results: list[dict[str, Any]]) -> str:
    """The README's table: each measure as seconds and as a ratio to the window query."""
    header = [
        "database",
        "rows",
        "version",
        "window query",
        "first index",
        "index again",
        "index after a write",
        "page 304",
        "first index peak",
    ]
    rows = []
    for row in results:
        cells = [row["database"], f"{row['rows']:,}", row["version"]]
        cells.append(f"{row['window_query_s']:.3f} s")
        for name in ("first_index", "index_again", "index_after_write", "page_304"):
            cells.append(f"{row[name + '_s'] * 1000:,.1f} ms ({row[name + '_x_window']}×)")
        cells.append(f"{row['first_index_peak_mib']} MiB")
        rows.append(cells)
    return markdown_table(header, rows)


def table_arguments(doc: str | None, rows: str, repeat: int) -> argparse.ArgumentParser:
    """The options every large-table benchmark takes: sizes, databases, repeats, JSON."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--rows", default=rows)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--json", type=Path, help="write the results here")
    return parser


def publish(results: list[dict[str, Any]], table: str, path: Path | None) -> None:
    """Print the markdown table; write the results as JSON when asked."""
    print(table)
    if path:
        path.write_text(json.dumps(results, indent=2))


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = table_arguments(__doc__, "100000,1000000", 3).parse_args(argv)
    sizes = [int(each) for each in args.rows.split(",")]
    results = asyncio.run(run(args.databases.split(","), sizes, args.repeat))
    publish(results, report(results), args.json)
    return results


if __name__ == "__main__":
    main()
