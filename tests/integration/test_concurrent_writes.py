"""Crawls while another task writes to the table at the same time (issue 23 item 3).

The state machine in test_crawl_properties.py writes *between* requests; here a writer
renames, inserts (at lower keys too) and moves lastmods *while* the index is planned and
its pages are read, on SQLite and PostgreSQL, in both the ``to_entry`` and the column
mode. No deletes: a page whose every row was deleted rightly answers 404 (that case is
the state machine's). What must hold: every page the index lists answers 200, valid and
within budget; no row on two pages of one crawl; every row that existed before the
crawl began on some page, unless a page's range outgrew its budget (logged).
"""

from __future__ import annotations

import logging
import os
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.sql import Outgrown

POSTGRES_ENV = "SITEMAP_TEST_POSTGRES_URL"
MAX_URLS = 8
MAX_BYTES = 4096
CRAWLS = 6
KEYS = 600  # at most 600 rows: 75+ pages a crawl
START = datetime(2024, 1, 1)
metadata = MetaData()
rows_table = Table(
    "concurrent_rows",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)


def _key(url: str) -> int:
    return int(url.split("/r/", 1)[1].split("/", 1)[0])


async def _writer(
    engine: AsyncEngine,
    rng: random.Random,
    present: set[int],
    writes: list[int],
    inserts: list[bool],
    stop: anyio.Event,
) -> None:
    """Writes without pause (one statement per transaction) until told to stop; inserts
    only while ``inserts[0]``. Stopped, not cancelled: SQLAlchemy ends a connection
    cancelled mid-transaction in a task that can outlive the engine (and hang the loop)."""
    while not stop.is_set():
        writes[0] += 1
        choice = rng.random() if inserts[0] else rng.uniform(0.3, 1)
        async with engine.begin() as conn:
            if choice < 0.3:
                key = rng.randrange(1, KEYS)
                if key not in present:
                    when = START + timedelta(minutes=rng.randrange(100_000))
                    await conn.execute(
                        text("INSERT INTO concurrent_rows VALUES (:k, :s, :t)"),
                        {"k": key, "s": f"new-{key}", "t": when},
                    )
                    present.add(key)
            elif choice < 0.7:
                key = rng.choice(sorted(present))
                await conn.execute(
                    text("UPDATE concurrent_rows SET slug = :s WHERE id = :k"),
                    {"k": key, "s": f"renamed-{rng.randrange(10**6)}"},
                )
            else:
                key = rng.choice(sorted(present))
                await conn.execute(
                    text("UPDATE concurrent_rows SET updated_at = :t WHERE id = :k"),
                    {"k": key, "t": START + timedelta(minutes=rng.randrange(100_000))},
                )
        await anyio.sleep(0)


async def _crawl(core: SitemapCore, engine: AsyncEngine, outgrown: Outgrown) -> bool:
    """One crawl; whether it checked that no row was missed (no range outgrew)."""
    async with engine.connect() as conn:
        before = {row[0] for row in await conn.execute(text("SELECT id FROM concurrent_rows"))}
    warnings = outgrown.count
    reply, body = await fetch(core, "/sitemap_index.xml")
    assert reply.status == 200, body
    seen: list[int] = []
    for url in child_urls(check_document(body)):
        reply, body = await fetch(core, url.removeprefix("https://example.com"))
        assert reply.status == 200, (url, reply.status, body[:300])
        assert len(body) <= MAX_BYTES
        urls = page_urls(check_document(body))
        assert 1 <= len(urls) <= MAX_URLS
        seen += [_key(u) for u in urls]
    assert len(seen) == len(set(seen)), "a row was listed on two pages of one crawl"
    if outgrown.count > warnings:
        return False
    assert not before - set(seen), "rows that existed before the crawl were missed"
    return True


async def _run(url: str, columns: bool) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
        await conn.run_sync(metadata.create_all)
        # Every other key: room for inserts at lower keys inside existing ranges.
        await conn.execute(
            rows_table.insert(),
            [
                {"id": key, "slug": f"row-{key}", "updated_at": START + timedelta(minutes=key)}
                for key in range(2, 400, 2)
            ],
        )
    mapping: dict[str, Any] = (
        {"location": "/r/{id}/{slug}"}
        if columns
        else {"to_entry": lambda row: {"loc": f"/r/{row.id}/{row.slug}", "lastmod": row.updated_at}}
    )
    provider = SQLAlchemyProvider(
        engine, rows_table, key="id", lastmod="updated_at", metadata_ttl=0, **mapping
    )
    core = make_core({"rows": provider}, max_urls_per_page=MAX_URLS, max_bytes_per_page=MAX_BYTES)
    outgrown = Outgrown()
    logging.getLogger("sitemap_middleware").addHandler(outgrown)
    present = set(range(2, 400, 2))
    writes, during, inserts, whole = [0], [], [False], 0
    stop = anyio.Event()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_writer, engine, random.Random(23), present, writes, inserts, stop)
            for crawl in range(CRAWLS):
                # Inserts fill planned pages past their budget (rows left for the next
                # index, logged), so every other crawl runs under renames and touches only.
                inserts[0] = crawl % 2 == 1
                done = writes[0]
                whole += await _crawl(core, engine, outgrown)
                during.append(writes[0] - done)
            stop.set()
    finally:
        logging.getLogger("sitemap_middleware").removeHandler(outgrown)
        # Background work (a replan, a shared query) ends before its connections close:
        # a task left awaiting a closed aiosqlite connection would never finish.
        await core.aclose()
        await engine.dispose()
    print(f"writes during each crawl: {during}; outgrown ranges logged: {outgrown.count}")
    assert min(during) > 0, "the writer did not write while crawls ran"
    assert whole >= CRAWLS // 2, "crawls without inserts must find every row"


@pytest.mark.slow
@pytest.mark.parametrize("columns", [False, True], ids=["to_entry", "columns"])
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_crawls_while_another_task_writes(backend: str, columns: bool, tmp_path: Path) -> None:
    """Every listed page answers 200, valid and within budget; each row on one page."""
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'concurrent.sqlite3'}"
    else:
        url = os.environ.get(POSTGRES_ENV, "")
        if not url:
            pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server (.ci/run starts one)")
    anyio.run(_run, url, columns)
