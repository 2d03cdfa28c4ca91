"""A row count a trigger keeps, instead of ``count(*)`` in a revision version (issue 23).

With ``version_column`` the section's version is ``count(*)`` (for deletes) and two index
lookups; on a big PostgreSQL table the count is a scan of the whole table. Given
``row_count=select(counts.c.total)``, the version reads that value instead, and the count
is checked against ``count(*)`` (one statement) whenever the section is measured whole.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    cast,
    insert,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware import ConfigurationError
from sitemap_middleware._providers import row_count
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.sql import database_url, recorded_statements

pytestmark = pytest.mark.anyio
START = datetime(2024, 1, 1)
metadata = MetaData()
items = Table(
    "counted_items",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    Column("revision", Integer, nullable=False),
)
counts = Table(
    "counted_totals",
    metadata,
    Column("name", String, primary_key=True),
    Column("total", Integer, nullable=False),
)

#: The recipe of docs/how-to/big-tables.md, per database.
TRIGGERS = {
    "sqlite": [
        "CREATE TRIGGER counted_in AFTER INSERT ON counted_items BEGIN "
        "UPDATE counted_totals SET total = total + 1 WHERE name = 'items'; END",
        "CREATE TRIGGER counted_out AFTER DELETE ON counted_items BEGIN "
        "UPDATE counted_totals SET total = total - 1 WHERE name = 'items'; END",
    ],
    "postgresql": [
        "CREATE OR REPLACE FUNCTION counted_items_rows() RETURNS trigger AS $$ BEGIN "
        "IF TG_OP = 'INSERT' THEN UPDATE counted_totals SET total = total + "
        "(SELECT count(*) FROM moved) WHERE name = 'items'; "
        "ELSE UPDATE counted_totals SET total = total - (SELECT count(*) FROM moved) "
        "WHERE name = 'items'; END IF; RETURN NULL; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER counted_in AFTER INSERT ON counted_items REFERENCING NEW TABLE AS "
        "moved FOR EACH STATEMENT EXECUTE FUNCTION counted_items_rows()",
        "CREATE TRIGGER counted_out AFTER DELETE ON counted_items REFERENCING OLD TABLE AS "
        "moved FOR EACH STATEMENT EXECUTE FUNCTION counted_items_rows()",
    ],
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    url = database_url(request.param, tmp_path, "counted")
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
        await conn.run_sync(metadata.create_all)
        await conn.execute(insert(counts).values(name="items", total=0))
    yield engine
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
    await engine.dispose()


async def _triggers(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        for statement in TRIGGERS[engine.dialect.name]:
            await conn.execute(text(statement))


_revision = iter(range(1, 10**6))


async def _insert(engine: AsyncEngine, keys: range) -> None:
    rows = [{"id": k, "slug": f"s{k}", "updated_at": START + timedelta(hours=k)} for k in keys]
    async with engine.begin() as conn:
        await conn.execute(insert(items), [{**row, "revision": next(_revision)} for row in rows])


def _provider(engine: AsyncEngine, **kwargs: Any) -> SQLAlchemyProvider:
    return SQLAlchemyProvider(
        engine,
        items,
        key="id",
        location="/i/{slug}",
        lastmod="updated_at",
        version_column="revision",
        metadata_ttl=0,
        **kwargs,
    )


KEPT = select(counts.c.total).where(counts.c.name == "items")


async def _crawl(provider: SQLAlchemyProvider) -> list[str]:
    """Every URL the index's pages list, in order (each page must answer 200)."""
    core = make_core({"items": provider}, max_urls_per_page=5)
    try:
        reply, index = await fetch(core, "/sitemap_index.xml")
        assert reply.status == 200, index
        listed: list[str] = []
        for url in child_urls(check_document(index)):
            reply, body = await fetch(core, url.removeprefix("https://example.com"))
            assert reply.status == 200, (url, body)
            listed += page_urls(check_document(body))
        return listed
    finally:
        await core.aclose()


async def _found_and_counted(
    engine: AsyncEngine, provider: SQLAlchemyProvider, caplog: pytest.LogCaptureFixture
) -> None:
    """A crawl of 12 rows whose kept count reads 0 logs it; from then on a delete (no
    revision moves) moves the version: ``count(*)`` is read."""
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        assert len(await _crawl(provider)) == 12
    assert "row_count reads 0 but the source holds 12 rows" in caplog.text
    provider.forget()
    before = await provider.version()
    async with engine.begin() as conn:
        await conn.execute(items.delete().where(items.c.id == 5))
    provider.forget()
    assert (await provider.version()).token != before.token


async def test_the_version_reads_the_kept_count_and_moves_with_every_write(
    engine: AsyncEngine,
) -> None:
    """No ``count(`` in the version's statement; an insert, a delete (same newest
    revision) and an update each move it."""
    await _triggers(engine)
    await _insert(engine, range(1, 21))
    provider = _provider(engine, row_count=KEPT)
    with recorded_statements(engine) as statements:
        first = await provider.version()
    assert statements and not any("count(" in each.lower() for each in statements), statements
    assert await provider.count() == 20
    seen = [first.token]
    writes = [
        items.delete().where(items.c.id == 7),  # no revision moves: only the count can tell
        items.update().where(items.c.id == 3).values(slug="x", revision=next(_revision)),
    ]
    for write in writes:
        async with engine.begin() as conn:
            await conn.execute(write)
        provider.forget()
        seen.append((await provider.version()).token)
    await _insert(engine, range(21, 22))
    provider.forget()
    seen.append((await provider.version()).token)
    assert len(set(seen)) == len(seen), seen


async def test_deletes_that_empty_pages_leave_no_page_the_index_lists_empty(
    engine: AsyncEngine,
) -> None:
    """The kept count moves on deletes, so the next index is planned anew: every page it
    lists answers 200 and every row is listed once."""
    await _triggers(engine)
    await _insert(engine, range(1, 31))
    provider = _provider(engine, row_count=KEPT)
    assert len(await _crawl(provider)) == 30
    async with engine.begin() as conn:
        await conn.execute(items.delete().where(items.c.id.between(6, 15)))
    provider.forget()
    listed = await _crawl(provider)
    assert listed == [f"https://example.com/i/s{k}" for k in [*range(1, 6), *range(16, 31)]]


async def test_a_count_nobody_keeps_is_logged_and_count_star_used(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """No trigger: the counter says 0 while the table holds 12 rows. Measuring the
    section finds it out (WARNING), and later versions count the rows: a delete moves it."""
    await _insert(engine, range(1, 13))
    provider = _provider(engine, row_count=KEPT)
    await _found_and_counted(engine, provider, caplog)
    assert len(await _crawl(provider)) == 11


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"row_count": KEPT}, "row_count needs version_column="),
        ({"row_count": 12, "version_column": "revision"}, "row_count must be a select"),
        (
            {"row_count": select(counts.c.total, counts.c.name), "version_column": "revision"},
            "row_count must be a select\\(\\) of one value",
        ),
    ],
)
def test_a_row_count_that_cannot_work_is_refused(kwargs: dict[str, Any], message: str) -> None:
    engine = create_async_engine("sqlite+aiosqlite://")
    with pytest.raises(ConfigurationError, match=message):
        SQLAlchemyProvider(engine, items, key="id", location="/i/{slug}", **kwargs)


async def test_a_drifted_count_that_matches_the_kept_ranges_is_still_caught(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count drifts up by 5 (SQLite's ``INSERT OR REPLACE`` fires the insert trigger
    but, without ``recursive_triggers``, not the delete one) while 5 rows are deleted from
    a range no write touched: the count equals the kept ranges' sum. The periodic check
    (here due at every version) catches it: no page the index lists answers 404."""
    monkeypatch.setattr(row_count, "CHECK_EVERY", 0.0)
    await _triggers(engine)
    await _insert(engine, range(1, 31))
    provider = _provider(engine, row_count=KEPT)
    assert len(await _crawl(provider)) == 30
    async with engine.begin() as conn:
        await conn.execute(counts.update().values(total=counts.c.total + 5))
        for key in range(1, 6):  # new revisions: the version moves, a plan is made
            await conn.execute(
                items.update().where(items.c.id == key).values(revision=next(_revision))
            )
        await conn.execute(items.delete().where(items.c.id.between(16, 20)))
    provider.forget()
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        listed = await _crawl(provider)
    assert listed == [f"https://example.com/i/s{k}" for k in [*range(1, 16), *range(21, 31)]]
    assert "row_count reads 30 but the source holds 25 rows" in caplog.text


async def test_a_count_that_reads_null_or_text_is_logged_or_taken(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """No counter row (a typo in the WHERE): NULL is no count, count(*) is used (logged),
    the sitemap is served. A count kept as text that matches is no disagreement."""
    await _triggers(engine)
    await _insert(engine, range(1, 13))
    missing = select(counts.c.total).where(counts.c.name == "itemz")
    as_text = select(cast(counts.c.total, String)).where(counts.c.name == "items")
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        assert len(await _crawl(_provider(engine, row_count=missing))) == 12
        assert "row_count reads None, not a count" in caplog.text
        caplog.clear()
        assert len(await _crawl(_provider(engine, row_count=as_text))) == 12
    assert "row_count" not in caplog.text


def test_a_source_whose_key_the_schema_does_not_make_unique_refuses_a_row_count() -> None:
    """Over a join the version counts keys (NULLs, duplicates): a scan anyway, and a
    wrong count was reported as NULL keys ('holds NULL in -12 rows')."""
    engine = create_async_engine("sqlite+aiosqlite://")
    joined = select(items, counts.c.total).join(counts, counts.c.name == "items")
    with pytest.raises(
        ConfigurationError, match="row_count needs a key the schema makes unique"
    ) as refused:
        SQLAlchemyProvider(
            engine,
            joined,
            key="id",
            location="/i/{slug}",
            version_column="revision",
            row_count=KEPT,
        )
    # The message says what to do: the joined column as a scalar subquery, or no row_count.
    assert "scalar_subquery()" in str(refused.value)
    assert "or leave row_count out" in str(refused.value)
    total = select(counts.c.total).where(counts.c.name == "items").scalar_subquery()
    SQLAlchemyProvider(
        engine,
        select(items, total.label("total")),
        key="id",
        location="/i/{slug}",
        version_column="revision",
        row_count=KEPT,
    )


@pytest.mark.parametrize(
    "mode",
    [{"to_entry": lambda row: f"/i/{row.slug}"}, {"location": lambda row: f"/i/{row.slug}"}],
    ids=["to_entry", "location function"],
)
async def test_a_section_planned_by_reading_its_rows_checks_the_count_too(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture, mode: dict[str, Any]
) -> None:
    """A section the database cannot size (``to_entry``, a location function) is planned
    by reading its rows: that read checks the count as well, so a count nobody keeps is
    found and a later delete moves the version (it was 0 rows: no delete ever did)."""
    await _insert(engine, range(1, 13))
    provider = SQLAlchemyProvider(
        engine,
        items,
        key="id",
        lastmod="updated_at",
        version_column="revision",
        row_count=KEPT,
        metadata_ttl=0,
        **mode,
    )
    await _found_and_counted(engine, provider, caplog)


async def test_an_index_after_a_write_scans_nothing_until_a_check_is_due(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After one row's update the next index re-measures the range that changed and reads
    the kept count: no count of the whole source beside it. Once a check is due, the
    version's own statement reads ``count(*)`` beside the kept count (one statement)."""
    await _triggers(engine)
    await _insert(engine, range(1, 31))
    provider = _provider(engine, row_count=KEPT)
    assert len(await _crawl(provider)) == 30
    async with engine.begin() as conn:
        await conn.execute(items.update().where(items.c.id == 12).values(revision=next(_revision)))
    provider.forget()
    with recorded_statements(engine) as statements:
        assert len(await _crawl(provider)) == 30
    assert any("counted_totals" in each for each in statements), statements
    assert not any("counted_totals" in each and "count(" in each for each in statements)
    monkeypatch.setattr(provider._kept_count, "_due", 0.0)
    provider.forget()
    with recorded_statements(engine) as statements:
        await provider.version()
    assert any("counted_totals" in each and "count(" in each for each in statements), statements
