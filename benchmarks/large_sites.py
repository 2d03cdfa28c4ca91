"""A large site that changes all day (issue 23): plans and versions where the data lives.

``python -m benchmarks.large_sites [--rows 100000,1000000] [--databases sqlite,postgresql]``

A table ``(id, slug, updated_at, revision)`` of N rows (``revision`` bumped from one
sequence on every write, indexed, as a large site keeps one) served by
``SQLAlchemyProvider`` in column mode through the core in process, gzip as crawlers
send it, library defaults otherwise (``metadata_ttl`` 1 s). Three configurations: the
default version (a checksum of every row), ``version_column="revision"`` (its ``count(*)``
sees deletes), "counted", the revision with ``row_count=`` reading the row count a
trigger keeps in ``large_products_count`` (the recipe of docs/how-to/big-tables.md), and
"to_entry": the revision with a ``to_entry`` instead of the location template (an ORM-ish
row read by attribute, a ``Decimal`` priority: planned from row counts, its pages'
entries built when served). ``--modes`` picks some.

Measured, in one run, beside the database's own window query over the same pages
(``count(*)``, ``max(updated_at)`` per run of 49,500 rows by ``row_number()``, the same
driver), each a median of ``--repeat`` runs:

- ``first_index``: the first ``/sitemap_index.xml`` of a new core (its plan measured);
- ``index_again``: the same index 1.1 s later (past ``metadata_ttl``), nothing changed;
- ``index_busy``: the same again after a commit to another table of the database (as on
  a shop's database, where sessions and orders are written all the time): nothing of the
  section changed, but "nothing committed" cannot tell, so the version is read;
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
from decimal import Decimal
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
counter = Table(
    "large_products_count",
    metadata,
    Column("name", String, primary_key=True),
    Column("total", Integer, nullable=False),
)
#: The version modes measured, in order.
MODES = ("checksum", "revision", "counted", "to_entry")
#: The triggers keeping ``counter`` (docs/how-to/big-tables.md, *A row count a trigger keeps*).
COUNTER_TRIGGERS = {
    "sqlite": [
        "CREATE TRIGGER IF NOT EXISTS large_counted_in AFTER INSERT ON large_products BEGIN "
        "UPDATE large_products_count SET total = total + 1 WHERE name = 'products'; END",
        "CREATE TRIGGER IF NOT EXISTS large_counted_out AFTER DELETE ON large_products BEGIN "
        "UPDATE large_products_count SET total = total - 1 WHERE name = 'products'; END",
    ],
    "postgresql": [
        "CREATE OR REPLACE FUNCTION large_products_rows() RETURNS trigger AS $$ BEGIN "
        "UPDATE large_products_count SET total = total + CASE TG_OP WHEN 'INSERT' THEN "
        "(SELECT count(*) FROM moved) ELSE -(SELECT count(*) FROM moved) END "
        "WHERE name = 'products'; RETURN NULL; END $$ LANGUAGE plpgsql",
        "DROP TRIGGER IF EXISTS large_counted_in ON large_products",
        "CREATE TRIGGER large_counted_in AFTER INSERT ON large_products REFERENCING NEW TABLE "
        "AS moved FOR EACH STATEMENT EXECUTE FUNCTION large_products_rows()",
        "DROP TRIGGER IF EXISTS large_counted_out ON large_products",
        "CREATE TRIGGER large_counted_out AFTER DELETE ON large_products REFERENCING OLD TABLE "
        "AS moved FOR EACH STATEMENT EXECUTE FUNCTION large_products_rows()",
    ],
}
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
        postgresql = engine.dialect.name == "postgresql"
        # The counter's triggers (keep_count) out of the fill: a row at a time, one
        # transaction, they would make it quadratic (keep_count counts and adds them again).
        counted = ("large_counted_in", "large_counted_out")
        for trigger in counted if table.name == "large_products" else ():
            on = f" ON {table.name}" if postgresql else ""
            await conn.execute(text(f"DROP TRIGGER IF EXISTS {trigger}{on}"))
        # TRUNCATE, not DELETE: a table resized by DELETE keeps every old row as a dead
        # tuple, and each later scan (count(*), the checksum) reads them all again.
        await conn.execute(text(f"TRUNCATE {table.name}") if postgresql else table.delete())
    chunk = 50_000
    for first in range(1, rows + 1, chunk):
        batch = [make(i) for i in range(first, min(first + chunk, rows + 1))]
        async with engine.begin() as conn:
            await conn.execute(table.insert(), batch)
    if postgresql:  # what autovacuum does to a real table: statistics, visibility map
        async with engine.connect() as conn:
            auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await auto.execute(text(f"VACUUM ANALYZE {table.name}"))


async def keep_count(engine: AsyncEngine) -> None:
    """The row count of ``large_products`` in ``counter``, kept by triggers from now on."""
    async with engine.begin() as conn:
        await conn.run_sync(counter.create, checkfirst=True)
        await conn.execute(counter.delete())
        total = (await conn.execute(text("SELECT count(*) FROM large_products"))).scalar()
        await conn.execute(counter.insert().values(name="products", total=total))
        for statement in COUNTER_TRIGGERS[engine.dialect.name]:
            await conn.execute(text(statement))


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


def _provider(engine: AsyncEngine, mode: str) -> Any:
    from sqlalchemy import select

    from sitemap_middleware.providers import SQLAlchemyProvider

    counted = select(counter.c.total).where(counter.c.name == "products")
    if mode == "to_entry":
        return SQLAlchemyProvider(
            engine,
            table,
            key="id",
            to_entry=_entry,
            lastmod="updated_at",
            version_column="revision",
        )
    return SQLAlchemyProvider(
        engine,
        table,
        key="id",
        location="/products/{slug}?ref=a&id={id}",
        lastmod="updated_at",
        changefreq="daily",
        version_column=None if mode == "checksum" else "revision",
        row_count=counted if mode == "counted" else None,
    )


def _entry(row: Any) -> dict[str, Any]:
    """The user's ``to_entry``: the row read by attribute, as from an ORM."""
    return {
        "loc": f"/products/{row.slug}?ref=a&id={row.id}",
        "lastmod": row.updated_at,
        "changefreq": "daily",
        "priority": Decimal("0.5"),
    }


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


async def _measure(engine: AsyncEngine, rows: int, mode: str, repeat: int) -> dict[str, Any]:
    gzip = {"accept_encoding": "gzip"}
    figures: dict[str, list[float]] = {}

    def note(name: str, seconds: float) -> None:
        figures.setdefault(name, []).append(seconds)

    for run in range(repeat):
        note("window_query", await timed(_window, engine))
        provider = _provider(engine, mode)
        core = _core(provider)
        note("first_index", await timed(core_get, core, "/sitemap_index.xml", **gzip))
        await asyncio.sleep(1.1)
        note("index_again", await timed(core_get, core, "/sitemap_index.xml", **gzip))
        async with engine.begin() as conn:
            await conn.execute(text("CREATE TABLE IF NOT EXISTS large_other (n integer)"))
            await conn.execute(text("INSERT INTO large_other VALUES (1)"))
        await asyncio.sleep(1.1)
        note("index_busy", await timed(core_get, core, "/sitemap_index.xml", **gzip))
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
    core = _core(_provider(engine, mode))
    tracemalloc.start()
    await core_get(core, "/sitemap_index.xml", **gzip)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    await core.aclose()
    medians = {name: statistics.median(values) for name, values in figures.items()}
    window = medians["window_query"]
    out: dict[str, Any] = {"rows": rows, "version": mode}
    out["first_index_peak_mib"] = round(peak / 2**20, 1)
    for name, seconds in medians.items():
        out[f"{name}_s"] = round(seconds, 4)
        if name != "window_query":
            out[f"{name}_x_window"] = round(seconds / window, 3)
    return out


Measure = Callable[[AsyncEngine, int, str], Awaitable[dict[str, Any]]]


async def each_table(
    databases: list[str], sizes: list[int], measure: Measure, modes: tuple[str, ...] = MODES
) -> list[dict[str, Any]]:
    """``measure(engine, rows, mode)`` on the table of each database and size, in each
    version mode of ``modes``; each row printed as it comes."""
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
                await keep_count(engine)
                for mode in modes:
                    row = {"database": database, **await measure(engine, rows, mode)}
                    print(row, flush=True)
                    results.append(row)
            finally:
                await engine.dispose()
    return results


async def run(
    databases: list[str], sizes: list[int], repeat: int, modes: tuple[str, ...] = MODES
) -> list[dict[str, Any]]:
    async def measure(engine: AsyncEngine, rows: int, mode: str) -> dict[str, Any]:
        return await _measure(engine, rows, mode, repeat)

    return await each_table(databases, sizes, measure, modes)


def report(results: list[dict[str, Any]]) -> str:
    """The README's table: each measure as seconds and as a ratio to the window query."""
    header = [
        "database",
        "rows",
        "version",
        "window query",
        "first index",
        "index again",
        "index, busy database",
        "index after a write",
        "page 304",
        "first index peak",
    ]
    rows = []
    for row in results:
        cells = [row["database"], f"{row['rows']:,}", row["version"]]
        cells.append(f"{row['window_query_s']:.3f} s")
        for name in ("first_index", "index_again", "index_busy", "index_after_write", "page_304"):
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
    parser = table_arguments(__doc__, "100000,1000000", 3)
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args(argv)
    sizes = [int(each) for each in args.rows.split(",")]
    modes = tuple(args.modes.split(","))
    results = asyncio.run(run(args.databases.split(","), sizes, args.repeat, modes))
    publish(results, report(results), args.json)
    return results


if __name__ == "__main__":
    main()
