"""Issue #11: what planning by bytes costs, side by side with count-only planning.

``python -m benchmarks.paging [--rows 1000000] [--postgres URL]`` prints ratios (and the
seconds behind them) for:

* a 1,000,000-row SQLite table (and PostgreSQL when a URL is given): the count-only plan
  main made (``count(*)`` plus one window-function scan for page boundaries and lastmods)
  against the measured plan (one keyset pass rendering every row's size); and the
  version query: main's ``count, max(key), max(lastmod)`` against the row checksum;
* the hreflang-heavy section (50,000 URLs x 12 alternates, ~52 MB): counting by
  iteration (what main did for providers without ``count()``) against measuring, and
  the measured plan against rendering the whole section once.

Each figure is the median of ``--repeats`` runs; the plan cache is bypassed. Results go
to ``benchmarks/results/paging.json`` as well.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from benchmarks.scale import build_table
from sitemap_middleware import Alternate, SitemapConfig, SitemapEntry
from sitemap_middleware._engine.planning import plan_section, section_version
from sitemap_middleware._engine.stream import EntryStream
from sitemap_middleware.providers import StaticProvider

RESULTS = Path(__file__).parent / "results"
LANGUAGES = ("de", "fr", "es", "it", "nl", "pl", "pt", "sv", "da", "fi", "cs", "x-default")


def _median(repeats: int, run: Callable[[], Awaitable[Any]]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        anyio.run(run)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _sql_provider(url: str, **kwargs: Any) -> Any:
    from sqlalchemy import Column, DateTime, Integer, MetaData, Table
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    from sitemap_middleware.providers import SQLAlchemyProvider

    table = Table(
        "products",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("updated_at", DateTime),
    )
    engine = create_async_engine(url, poolclass=NullPool)

    def to_entry(row: Any) -> dict[str, Any]:
        return {"loc": f"/products/{row.id}", "lastmod": row.updated_at}

    provider = SQLAlchemyProvider(
        engine, table, key="id", lastmod="updated_at", to_entry=to_entry, metadata_ttl=0, **kwargs
    )
    return provider, table, engine


def sql(url: str, repeats: int) -> dict[str, Any]:
    """Count-only plan vs measured plan, and the old version query vs the checksum."""
    from sqlalchemy import func, select

    provider, table, engine = _sql_provider(url)
    config = SitemapConfig(base_url="https://example.com", sections={"products": provider})
    section = config.resolved_sections[0]

    async def count_only() -> None:  # main: count(*), then one window scan for boundaries
        page = ((func.row_number().over(order_by=table.c.id) - 1) // 50_000).label("page")
        numbered = select(table.c.id.label("key"), table.c.updated_at.label("m"), page).subquery()
        boundaries = select(func.min(numbered.c.key), func.max(numbered.c.m)).group_by(
            numbered.c.page
        )
        async with engine.connect() as conn:
            await conn.execute(select(func.count()).select_from(table))
            (await conn.execute(boundaries)).all()

    async def measured() -> None:
        version = await section_version(config, section)
        await plan_section(config, section, config.base, version)

    async def old_version() -> None:
        async with engine.connect() as conn:
            await conn.execute(
                select(func.count(), func.max(table.c.id), func.max(table.c.updated_at))
            )

    async def checksum_version() -> None:
        provider._metadata.clear()
        await provider.version()

    async def render_all() -> None:  # serving every page once: the floor of any plan
        stream = EntryStream("products", provider, config.base, timeout=600, strict=False)
        try:
            while await stream.next_batch():
                pass
        finally:
            await stream.aclose()

    out = {
        "count_only_plan_s": _median(repeats, count_only),
        "measured_plan_s": _median(repeats, measured),
        "read_all_rows_s": _median(repeats, render_all),
        "old_version_s": _median(repeats, old_version),
        "checksum_version_s": _median(repeats, checksum_version),
    }
    out["plan_ratio_measured_to_count_only"] = out["measured_plan_s"] / out["count_only_plan_s"]
    out["plan_ratio_measured_to_reading_rows"] = out["measured_plan_s"] / out["read_all_rows_s"]
    out["version_ratio_checksum_to_old"] = out["checksum_version_s"] / out["old_version_s"]
    anyio.run(engine.dispose)
    return out


def heavy(repeats: int) -> dict[str, Any]:
    """The hreflang-heavy section: counting by iteration vs measuring vs rendering."""
    entries = []
    for number in range(50_000):
        path = f"/products/{number:05d}-a-fairly-long-product-slug-for-every-language"
        alternates = [Alternate(lang, f"/{lang}{path}") for lang in LANGUAGES]
        entries.append(SitemapEntry(path, alternates=alternates))
    provider = StaticProvider(entries)
    config = SitemapConfig(base_url="https://example.com", sections={"heavy": provider})
    section = config.resolved_sections[0]

    async def count_only() -> None:  # main, for providers without count(): validate and count
        stream = EntryStream("heavy", provider, config.base, timeout=600, strict=False)
        try:
            while raw := await stream.next_raw():
                stream.admit(raw)
        finally:
            await stream.aclose()

    async def measured() -> None:
        await plan_section(config, section, config.base, None)

    from sitemap_middleware._sansio.urlset_writer import UrlsetWriter

    async def render_all() -> None:
        stream = EntryStream("heavy", provider, config.base, timeout=600, strict=False)
        writer = UrlsetWriter(
            label="heavy",
            resolve=config.base.join_if_relative,
            max_urls=10**9,
            max_bytes=10**12,
        )
        writer.open()
        try:
            while batch := await stream.next_batch():
                writer.urls(batch).encode("utf-8")
        finally:
            await stream.aclose()

    out = {
        "count_only_plan_s": _median(repeats, count_only),
        "measured_plan_s": _median(repeats, measured),
        "render_section_s": _median(repeats, render_all),
    }
    out["plan_ratio_measured_to_count_only"] = out["measured_plan_s"] / out["count_only_plan_s"]
    out["plan_ratio_measured_to_render"] = out["measured_plan_s"] / out["render_section_s"]
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--postgres", help="postgresql+asyncpg://... to run the SQL part there too")
    parser.add_argument("--out", type=Path, default=RESULTS / "paging.json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"rows": args.rows}
    directory = Path(tempfile.gettempdir()) / "sitemap-bench"
    directory.mkdir(exist_ok=True)
    path = directory / f"products-{args.rows}.sqlite3"
    build_table(path, args.rows)
    results["sqlite"] = sql(f"sqlite+aiosqlite:///{path}", args.repeats)
    if args.postgres:
        _fill_postgres(args.postgres, path)
        results["postgresql"] = sql(args.postgres, args.repeats)
    results["hreflang_heavy"] = heavy(args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return results


def _fill_postgres(url: str, sqlite_path: Path) -> None:
    """Copy the SQLite table into PostgreSQL (once per row count)."""
    import sqlite3

    from sqlalchemy import text

    async def fill() -> None:
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await conn.execute(text("DROP TABLE IF EXISTS products"))
            await conn.execute(
                text("CREATE TABLE products (id INTEGER PRIMARY KEY, updated_at TIMESTAMP)")
            )
            with sqlite3.connect(sqlite_path) as source:
                rows = source.execute("SELECT id, updated_at FROM products").fetchall()
            for start in range(0, len(rows), 50_000):
                chunk = rows[start : start + 50_000]
                await conn.exec_driver_sql(
                    "INSERT INTO products SELECT * FROM unnest($1::int[], $2::timestamp[])",
                    ([r[0] for r in chunk], [_timestamp(r[1]) for r in chunk]),
                )
        await engine.dispose()

    anyio.run(fill)


def _timestamp(value: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(value)


if __name__ == "__main__":
    main()
