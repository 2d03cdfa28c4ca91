"""A fleet's second instance (issue 23, item 4): its first index from a plan another made.

``python -m benchmarks.fleet_plans [--rows 1000000] [--databases sqlite,postgresql]``

The table of ``benchmarks/large_sites.py`` (``(id, slug, updated_at, revision)``, column
mode, gzip, library defaults), served by instances sharing one ``RedisRenderStore``
(``SITEMAP_TEST_REDIS_URL`` names the Redis; without one the benchmark says so and stops).
Instance A serves the first ``/sitemap_index.xml`` (it plans, and keeps the plan in Redis);
then, ``--repeat`` times, a new core B with a new store client on the same Redis serves its
first index, timed in alternation with the window query of ``large_sites.py``. Reported:
B's first index (median), its ratio to the window query, and what B did (planning passes).
The version modes of ``large_sites.py``: the default checksum (the version check reads
every row), ``version_column="revision"`` and the revision with a trigger-kept ``row_count``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from benchmarks.common import core_get, markdown_table
from benchmarks.large_sites import (
    _provider,
    _window,
    each_table,
    publish,
    table_arguments,
    timed,
)


def _core(provider: Any, redis_url: str, prefix: str) -> Any:
    from sitemap_middleware import Renders, SitemapConfig
    from sitemap_middleware._engine.core import SitemapCore
    from sitemap_middleware.stores import RedisRenderStore

    store = RedisRenderStore(redis_url, prefix=prefix)
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"products": provider},
        renders=Renders(store=store),
    )
    return SitemapCore(config)


async def _measure(
    engine: AsyncEngine, rows: int, mode: str, repeat: int, redis_url: str
) -> dict[str, Any]:
    gzip = {"accept_encoding": "gzip"}
    prefix = f"bench-fleet-{uuid.uuid4().hex}:"
    first = _core(_provider(engine, mode), redis_url, prefix)
    planned = await timed(core_get, first, "/sitemap_index.xml", **gzip)
    await first.aclose()
    window: list[float] = []
    second: list[float] = []
    passes = 0
    for _ in range(repeat):
        window.append(await timed(_window, engine))
        core = _core(_provider(engine, mode), redis_url, prefix)
        second.append(await timed(core_get, core, "/sitemap_index.xml", **gzip))
        passes += core._documents.plans.passes
        await core.aclose()
    median_window = statistics.median(window)
    median_second = statistics.median(second)
    return {
        "rows": rows,
        "version": mode,
        "window_query_s": round(median_window, 4),
        "first_instance_index_s": round(planned, 4),
        "second_instance_index_s": round(median_second, 4),
        "second_instance_index_x_window": round(median_second / median_window, 4),
        "second_instance_passes": passes,
    }


async def run(
    databases: list[str], sizes: list[int], repeat: int, redis_url: str
) -> list[dict[str, Any]]:
    async def measure(engine: AsyncEngine, rows: int, mode: str) -> dict[str, Any]:
        return await _measure(engine, rows, mode, repeat, redis_url)

    return await each_table(databases, sizes, measure, ("checksum", "revision", "counted"))


def report(results: list[dict[str, Any]]) -> str:
    """The README's table: B's first index in ms and as a ratio to the window query."""
    header = ["database", "rows", "version", "window query", "A: first index"]
    header += ["B: first index", "B's planning passes"]
    rows = []
    for row in results:
        cells = [row["database"], f"{row['rows']:,}", row["version"]]
        cells.append(f"{row['window_query_s']:.3f} s")
        cells.append(f"{row['first_instance_index_s']:.2f} s")
        second = row["second_instance_index_s"] * 1000
        cells.append(f"{second:,.1f} ms ({row['second_instance_index_x_window']}×)")
        cells.append(str(row["second_instance_passes"]))
        rows.append(cells)
    return markdown_table(header, rows)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = table_arguments(__doc__, "1000000", 5).parse_args(argv)
    redis_url = os.environ.get("SITEMAP_TEST_REDIS_URL", "")
    if not redis_url:
        raise SystemExit("SITEMAP_TEST_REDIS_URL is not set: a fleet shares a Redis store")
    sizes = [int(each) for each in args.rows.split(",")]
    results = asyncio.run(run(args.databases.split(","), sizes, args.repeat, redis_url))
    publish(results, report(results), args.json)
    return results


if __name__ == "__main__":
    main()
