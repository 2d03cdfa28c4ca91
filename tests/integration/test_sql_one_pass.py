"""The first index reads the table once (issue 23, item 1): the version check before a
plan measures the plan's key ranges with their checksums, and the section's version is
made of those, the very token one checksum over every row gives."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_middleware._providers import sql_ranges
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.core import fetch, make_core
from tests.harness.sql import recorded_statements
from tests.integration.test_sql_commits import _provider, _write, anyio_backend, items, url

pytestmark = pytest.mark.anyio
__all__ = ["anyio_backend", "url"]  # (fixtures)


def _checksums(statements: list[str]) -> list[str]:
    return [each for each in statements if "md5(" in each or "sitemap_row_crc32(" in each]


@pytest.mark.parametrize("halves", [False, True], ids=["one query", "two halves"])
async def test_the_version_made_of_ranges_is_the_whole_tables(
    url: str, halves: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made of the ranges (in one query, or two halves at once) or read alone, the
    version is the same, before and after a write, empty table included."""
    if halves:
        monkeypatch.setattr(sql_ranges, "PARALLEL_ROWS", 10)
    engine = create_async_engine(url)

    async def both() -> tuple[Any, Any]:
        ranged, alone = _provider(engine, False), _provider(engine, False)
        alone._plans_follow = False  # (what a version check alone reads)
        return await ranged.version(), await alone.version()

    try:
        with recorded_statements(engine) as statements:
            made, read = await both()
        assert made == read and made.last_modified is not None
        assert any("row_number()" in each for each in _checksums(statements))
        await _write(engine, "renamed")
        made, read = await both()
        assert made == read
        async with engine.begin() as conn:
            await conn.execute(items.delete())
        made, read = await both()
        assert made == read and made.last_modified is None
    finally:
        await engine.dispose()


async def test_the_first_index_reads_the_table_once(url: str) -> None:
    """The index's version check measures the ranges its plan uses: every statement that
    hashes rows is a range query, and the plan measures nothing more."""
    engine = create_async_engine(url)
    try:
        provider = SQLAlchemyProvider(
            engine, items, key="id", location="/i/{slug}", lastmod="updated_at"
        )
        core = make_core({"items": provider})  # 50,000 URLs a page: 500 keys a range
        with recorded_statements(engine) as statements:
            reply, _ = await fetch(core, "/sitemap.xml")
        assert reply.status == 200
        hashing = _checksums(statements)
        assert len(hashing) == 1 and "row_number()" in hashing[0], statements
        assert len([each for each in statements if "row_number()" in each]) == 1, statements
        await core.aclose()
    finally:
        await engine.dispose()
