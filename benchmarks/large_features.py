"""What ``dedupe=True`` and the content ledger cost on a large site (issue 27).

``python -m benchmarks.large_features [--rows 100000,1000000] [--databases sqlite,postgresql]
[--repeat 2] [--json PATH]``

A table ``(id, slug, updated_at timestamptz, published date, priority numeric,
revision)`` of N rows (built and kept as ``benchmarks/large_sites.py`` builds its own),
served by ``SQLAlchemyProvider`` (``version_column="revision"``, as a large site keeps)
through the core in process, gzip as crawlers send it, in two shapes:

- ``columns``: column mode (``location=`` template, ``lastmod="updated_at"``: aware
  datetimes from a timestamptz on PostgreSQL);
- ``to_entry``: a ``to_entry`` reading the row's attributes (an ORM-ish row), giving a
  ``date`` lastmod and a ``Decimal`` priority (and, for ``Ledger(source="digest")``,
  the row's revision as its digest).

Sections: ``one`` (the table) or ``two`` (ids up to 2N/3 and ids past N/3: each shares
half its URLs with the other). Each feature (``dedupe=True``; ``Ledger()``, the fields'
digest; ``Ledger(source="digest")``, the provider's) is timed in alternation, round by
round, with the same shape and sections without it (``none``), the database's own
window query (``large_sites.window_sql``) and the page floor (fetching the page's rows
with the same driver plus ``floor.render``). Measured for each, medians of ``--repeat``:
``first_index`` (a new core), ``index_again`` (1.1 s later, past ``metadata_ttl``,
nothing changed), ``page_cold`` (the first GET of the index's second page),
``page_warm`` (the same page 1.1 s later, nothing changed), ``index_after_write`` (the
index after one row's rename). Peak traced memory of a cold index, what it leaves held
(its plans), and the peak of its page above that are taken once per configuration,
apart from the timings.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
import tracemalloc
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from sqlalchemy import Column, Date, DateTime, Integer, MetaData, Numeric, String, Table, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from benchmarks import floor
from benchmarks.common import core_get, markdown_table, raw_items
from benchmarks.large_sites import build, database_url, publish, table_arguments, timed, window_sql
from sitemap_middleware import Ledger, SitemapConfig

table = Table(
    "feature_products",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("published", Date, nullable=False),
    Column("priority", Numeric(2, 1), nullable=False),
    Column("revision", Integer, nullable=False, index=True),
)
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
GZIP = {"accept_encoding": "gzip"}
#: feature -> the configuration's keywords (``none``: the reference).
FEATURES: dict[str, dict[str, Any]] = {
    "none": {},
    "dedupe": {"dedupe": True},
    "ledger fields": {"ledger": Ledger()},
    "ledger digest": {"ledger": Ledger(source="digest")},
}
#: (shape, sections) -> the features timed together, the reference first.
GROUPS: dict[tuple[str, str], tuple[str, ...]] = {
    ("columns", "one"): ("none", "dedupe", "ledger fields"),
    ("to_entry", "one"): ("none", "dedupe", "ledger fields", "ledger digest"),
    ("columns", "two"): ("none", "dedupe"),
    ("to_entry", "two"): ("none", "dedupe"),
}
MEASURES = ("first_index", "index_again", "page_cold", "page_warm", "index_after_write")


def _row(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "slug": f"product-{i}",
        "updated_at": START + timedelta(seconds=i),
        "published": date(2020, 1, 1) + timedelta(days=i % 2000),
        "priority": Decimal(("0.3", "0.5", "0.8")[i % 3]),
        "revision": i,
    }


def _entry(row: Any) -> dict[str, Any]:
    """The user's ``to_entry``: an ORM-ish row read by attribute."""
    return {
        "loc": f"/products/{row.slug}?ref=a&id={row.id}",
        "lastmod": row.published,
        "changefreq": "daily",
        "priority": row.priority,
    }


def _entry_with_digest(row: Any) -> dict[str, Any]:
    return {**_entry(row), "digest": row.revision}


def _config(engine: AsyncEngine, rows: int, shape: str, sections: str, feature: str) -> Any:
    from sitemap_middleware.providers import SQLAlchemyProvider

    if shape == "columns":
        mode: dict[str, Any] = {
            "location": "/products/{slug}?ref=a&id={id}",
            "changefreq": "daily",
            "priority": 0.5,
        }
    else:
        digest = feature == "ledger digest"
        mode = {"to_entry": _entry_with_digest if digest else _entry}

    def provider(source: Any) -> Any:
        return SQLAlchemyProvider(
            engine, source, key="id", lastmod="updated_at", version_column="revision", **mode
        )

    if sections == "one":
        named = {"products": provider(table)}
    else:
        third = rows // 3
        named = {
            "products": provider(table.select().where(table.c.id <= 2 * third)),
            "picks": provider(table.select().where(table.c.id > third)),
        }
    return SitemapConfig(base_url="https://example.com", sections=named, **FEATURES[feature])


def _core(config: Any) -> Any:
    from sitemap_middleware._engine.core import SitemapCore

    return SitemapCore(config)


def _second_page(index: bytes) -> str:
    """The path of the index's second page (its first when it lists one)."""
    pages = [part.split(b"</loc>")[0].decode() for part in index.split(b"<loc>")[1:]]
    return pages[min(1, len(pages) - 1)].removeprefix("https://example.com")


async def _write(engine: AsyncEngine, rows: int, slug: str, revision: int) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            table.update().where(table.c.id == rows // 2).values(slug=slug, revision=revision)
        )


async def _one(engine: AsyncEngine, config: Any, rows: int, run: int) -> dict[str, float]:
    """One round of one configuration: its five measures, in seconds (and the URLs of
    its page, ``page_urls``)."""
    core = _core(config)
    out = {"first_index": await timed(core_get, core, "/sitemap_index.xml", **GZIP)}
    await asyncio.sleep(1.1)
    out["index_again"] = await timed(core_get, core, "/sitemap_index.xml", **GZIP)
    page = _second_page((await core_get(core, "/sitemap_index.xml"))[1])
    started = time.perf_counter()
    status, _, _ = await core_get(core, page, **GZIP)
    out["page_cold"] = time.perf_counter() - started
    assert status == 200, (page, status)
    await asyncio.sleep(1.1)
    out["page_warm"] = await timed(core_get, core, page, **GZIP)
    await _write(engine, rows, f"renamed-{run}", rows + 1 + run)
    await asyncio.sleep(1.1)
    out["index_after_write"] = await timed(core_get, core, "/sitemap_index.xml", **GZIP)
    out["page_urls"] = (await core_get(core, page))[1].count(b"<url>")
    await core.aclose()
    await _write(engine, rows, f"product-{rows // 2}", rows // 2)  # the table as built
    return out


async def _peaks(config: Any) -> tuple[float, float, float]:
    """Peak traced MiB of a cold index, what it leaves held (the plans, after a
    collection), then the peak of its second page above that (tracing slows Python)."""
    core = _core(config)
    tracemalloc.start()
    _, index, _ = await core_get(core, "/sitemap_index.xml")
    index_peak = tracemalloc.get_traced_memory()[1]
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    await core_get(core, _second_page(index), **GZIP)
    page_peak = tracemalloc.get_traced_memory()[1] - held
    tracemalloc.stop()
    await core.aclose()
    mib = [round(each / 2**20, 1) for each in (index_peak, held, page_peak)]
    return mib[0], mib[1], mib[2]


async def _floor(engine: AsyncEngine, urls: int, raw: list[dict[str, Any]]) -> float:
    """The page floor: fetch ``urls`` rows by key (the second page's) and join them."""
    started = time.perf_counter()
    async with engine.connect() as conn:
        query = (
            "SELECT id, slug, updated_at FROM feature_products WHERE id > :a ORDER BY id LIMIT :n"
        )
        (await conn.execute(text(query), {"a": urls, "n": urls})).all()
    floor.render(raw).encode()
    return time.perf_counter() - started


async def _group(
    engine: AsyncEngine, database: str, rows: int, shape: str, sections: str, repeat: int
) -> list[dict[str, Any]]:
    features = GROUPS[shape, sections]
    figures: dict[str, dict[str, list[float]]] = {f: {} for f in ("", *features)}
    raws: dict[int, list[dict[str, Any]]] = {}
    window = window_sql(table.name)

    async def query() -> None:
        async with engine.connect() as conn:
            (await conn.execute(text(window))).all()

    # Every configuration each round, in turn first: drift hits each alike.
    for run in range(repeat):
        figures[""].setdefault("window_query", []).append(await timed(query))
        for feature in features[run % len(features) :] + features[: run % len(features)]:
            config = _config(engine, rows, shape, sections, feature)
            for name, seconds in (await _one(engine, config, rows, run)).items():
                figures[feature].setdefault(name, []).append(seconds)
        urls = int(figures["none"].pop("page_urls")[-1])  # (the page, as it came out)
        raw = raws.setdefault(urls, raw_items(urls))
        figures[""].setdefault("page_floor", []).append(await _floor(engine, urls, raw))
    common = {name: statistics.median(values) for name, values in figures[""].items()}
    medians = {
        f: {name: statistics.median(figures[f][name]) for name in MEASURES} for f in features
    }
    out = []
    for feature in features:
        peaks = await _peaks(_config(engine, rows, shape, sections, feature))
        row: dict[str, Any] = {
            "database": database,
            "rows": rows,
            "shape": shape,
            "sections": sections,
            "feature": feature,
            "window_query_s": round(common["window_query"], 4),
            "page_floor_s": round(common["page_floor"], 4),
            "first_index_peak_mib": peaks[0],
            "index_held_mib": peaks[1],
            "page_peak_over_held_mib": peaks[2],
        }
        for name in MEASURES:
            seconds = medians[feature][name]
            row[f"{name}_s"] = round(seconds, 4)
            row[f"{name}_x_none"] = round(seconds / medians["none"][name], 3)
            reference = common["page_floor" if name.startswith("page") else "window_query"]
            row[f"{name}_x_{'floor' if name.startswith('page') else 'window'}"] = round(
                seconds / reference, 3
            )
        print(row, flush=True)
        out.append(row)
    return out


async def run(
    databases: list[str], sizes: list[int], repeat: int, groups: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for database in databases:
        for rows in sizes:
            url = database_url(database, rows, stem="features")
            if url is None:
                print(f"{database}: SITEMAP_TEST_POSTGRES_URL is not set, skipped")
                break
            engine = create_async_engine(url)
            try:
                await build(engine, rows, table, _row)
                for shape, sections in groups:
                    results += await _group(engine, database, rows, shape, sections, repeat)
            finally:
                await engine.dispose()
    return results


def _cell(row: dict[str, Any], name: str) -> str:
    ref = "floor" if name.startswith("page") else "window"
    seconds = row[f"{name}_s"]
    text = f"{seconds * 1000:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:,.1f} ms"
    return f"{text} ({row[f'{name}_x_none']}× none, {row[f'{name}_x_{ref}']}× {ref})"


def report(results: list[dict[str, Any]]) -> str:
    """The README's table: each measure as time, × the same without the feature, and ×
    the window query (index) or the page floor (page)."""
    header = ["database", "rows", "shape", "sections", "feature", "window / floor"]
    header += [name.replace("_", " ") for name in MEASURES]
    header.append("peak: index / held after / page over held")
    rows = []
    for row in results:
        cells = [row["database"], f"{row['rows']:,}", row["shape"], row["sections"]]
        cells.append(row["feature"])
        cells.append(f"{row['window_query_s']:.3f} s / {row['page_floor_s'] * 1000:.0f} ms")
        cells += [_cell(row, name) for name in MEASURES]
        if "index_held_mib" in row:
            held, page = row["index_held_mib"], row["page_peak_over_held_mib"]
            cells.append(f"{row['first_index_peak_mib']} / {held} / {page} MiB")
        else:  # (a first run's page peak counted what the index left held)
            cells.append(f"{row['first_index_peak_mib']} / ? / ({row['page_peak_mib']}) MiB")
        rows.append(cells)
    return markdown_table(header, rows)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = table_arguments(__doc__, "100000,1000000", 2)
    parser.add_argument(
        "--groups",
        default=",".join(f"{shape}/{sections}" for shape, sections in GROUPS),
        help="shape/sections pairs, e.g. columns/one,to_entry/two",
    )
    args = parser.parse_args(argv)
    sizes = [int(each) for each in args.rows.split(",")]
    groups = [tuple(each.split("/")) for each in args.groups.split(",")]
    assert all(group in GROUPS for group in groups), groups
    chosen = [(shape, sections) for shape, sections in groups]
    results = asyncio.run(run(args.databases.split(","), sizes, args.repeat, chosen))
    publish(results, report(results), args.json)
    return results


if __name__ == "__main__":
    main()
