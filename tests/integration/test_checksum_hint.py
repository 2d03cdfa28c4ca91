"""A SQL section versioned by the checksum of every row (the default) warns once, at
its first read of a big table, what each check costs and what to declare instead: the
cost is otherwise invisible until a crawler's index takes seconds."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware._providers import checksum
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.sql import database_url

pytestmark = pytest.mark.anyio
metadata = MetaData()
rows = Table(
    "hinted_rows",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("revision", Integer, nullable=False),
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(database_url(request.param, tmp_path, "hinted"))
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
        await conn.run_sync(metadata.create_all)
        await conn.execute(
            insert(rows), [{"id": k, "slug": f"s{k}", "revision": k} for k in range(1, 31)]
        )
    yield engine
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
    await engine.dispose()


@pytest.mark.parametrize("version_column", [None, "revision"])
async def test_a_checksum_over_a_big_table_is_warned_of_once(
    engine: AsyncEngine,
    version_column: str | None,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(checksum, "BIG_TABLE_ROWS", 30)  # (30 rows stand for 200,000)
    monkeypatch.setattr(checksum, "_TOLD", set())

    def made() -> SQLAlchemyProvider:
        return SQLAlchemyProvider(
            engine, rows, key="id", location="/r/{slug}", version_column=version_column
        )

    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        provider = made()
        await provider.version()
        provider.forget()
        await provider.version()
        await made().version()  # (made again, as a tenant resolved anew: said already)
    warned = [r.getMessage() for r in caplog.records if "checksum of all" in r.getMessage()]
    if version_column is not None:
        assert warned == []
        return
    assert len(warned) == 1, warned
    assert "SQLAlchemyProvider(hinted_rows)" in warned[0]
    assert "checksum of all 30 rows" in warned[0] and "pass version_column=" in warned[0]


async def test_a_small_table_is_not_warned_of(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    provider = SQLAlchemyProvider(engine, rows, key="id", location="/r/{slug}", metadata_ttl=0)
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        await provider.version()
    assert not [r for r in caplog.records if "checksum of all" in r.getMessage()]
