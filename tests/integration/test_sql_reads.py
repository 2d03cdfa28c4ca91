"""Attacks on reading values a column's type cannot read (``_providers/sql_reads.py``)."""

from __future__ import annotations

import asyncio
import enum
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Column,
    Date,
    DateTime,
    Enum,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Time,
    create_engine,
    insert,
    text,
)
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.types import TypeDecorator

from sitemap_middleware import ConfigurationError
from sitemap_middleware._providers.sql_reads import cannot_read
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.core import crawled_urls, fetch, make_core

pytestmark = pytest.mark.anyio
START = datetime(2024, 1, 1)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Secret(Exception):
    pass


class Sealed(TypeDecorator[str]):
    impl = String
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        if value is not None and not value.startswith("s:"):
            raise Secret("bad token")
        return value


class Color(enum.Enum):
    red = "red"
    blue = "blue"


def _table() -> Table:
    return Table(
        "typed",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("slug", String, nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
        Column("day", Date),
        Column("at", Time),
        Column("price", Numeric(10, 2)),
        Column("meta", JSON),
        Column("color", Enum(Color, native_enum=False)),
        Column("sealed", Sealed),
    )


@pytest.mark.parametrize(
    "column,stored",
    [
        ("day", "garbage"),
        ("at", "garbage"),
        ("price", "garbage"),
        ("meta", "{not json"),
        ("color", "green"),
        ("sealed", "plain"),
        ("updated_at", "0000-00-00 00:00:00"),
    ],
)
@pytest.mark.parametrize(("sync", "batch"), [(False, 10_000), (True, 3)])
async def test_a_value_no_column_type_can_read_costs_only_its_row(
    tmp_path: Path, caplog: Any, column: str, stored: str, sync: bool, batch: int
) -> None:
    """Date, Time, Numeric, JSON, a non-native Enum, a TypeDecorator raising an error of
    its own, a DateTime(timezone=True): five bad rows (a whole batch of them with
    batch_size=3) are left out and logged; the rest served, sync engine or async."""
    table = _table()
    url = f"sqlite:///{tmp_path / 't.sqlite3'}"
    sync_engine = create_engine(url)
    table.metadata.create_all(sync_engine)
    with sync_engine.begin() as conn:
        conn.execute(
            insert(table),
            [
                {
                    "id": i,
                    "slug": f"p{i}",
                    "updated_at": START + timedelta(hours=i),
                    "day": date(2024, 1, 1),
                    "at": None,
                    "price": Decimal("1.5"),
                    "meta": {"a": 1},
                    "color": Color.red,
                    "sealed": "s:x",
                }
                for i in range(1, 31)
            ],
        )
        for bad in (7, 8, 9, 10, 22):
            conn.execute(text(f"UPDATE typed SET {column} = :v WHERE id = {bad}"), {"v": stored})
    engine: Any = (
        sync_engine
        if sync
        else create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 't.sqlite3'}")
    )
    provider = SQLAlchemyProvider(
        engine,
        table,
        key="id",
        lastmod="updated_at",
        batch_size=batch,
        to_entry=lambda row: {"loc": f"/p/{row.slug}", "lastmod": row.updated_at},
    )
    core = make_core({"p": provider}, max_urls_per_page=10)
    try:
        urls = await crawled_urls(core)
        assert sorted(urls) == sorted(
            f"https://example.com/p/p{i}" for i in range(1, 31) if i not in (7, 8, 9, 10, 22)
        )
        assert "'id': 22" in caplog.text
    finally:
        await core.aclose()
        if not sync:
            await engine.dispose()
        sync_engine.dispose()


@pytest.mark.parametrize("batch", [4, 10_000])
@pytest.mark.parametrize("mode", ["location", "to_entry"])
async def test_a_row_deleted_while_its_batch_is_read_row_by_row_costs_no_other_row(
    tmp_path: Path, mode: str, batch: int
) -> None:
    """A batch read row by row reads its keys first: a row deleted before its own read is
    left out, and the rest of the range still read (not a zip of unequal lists)."""
    table = _table()
    url = f"sqlite:///{tmp_path / 't.sqlite3'}"
    engine = create_engine(url)
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(table),
            [
                {"id": i, "slug": f"p{i}", "updated_at": START + timedelta(hours=i)}
                for i in range(1, 11)
            ],
        )
        conn.execute(text("UPDATE typed SET updated_at = 'garbage' WHERE id = 3"))
    kwargs: dict[str, Any] = (
        {"location": "/p/{slug}"}
        if mode == "location"
        else {"to_entry": lambda row: {"loc": f"/p/{row.slug}"}}
    )
    provider = SQLAlchemyProvider(
        engine, table, key="id", lastmod="updated_at", batch_size=batch, **kwargs
    )
    real = provider._all

    async def racing(statement: Any, by_column: Any = ()) -> Any:
        found = await real(statement, by_column)
        if len(statement.selected_columns) == 1 and not by_column:
            with engine.begin() as conn:
                conn.execute(text("DELETE FROM typed WHERE id = 2"))
        return found

    provider._all = racing  # type: ignore[method-assign]
    keys = [key async for key, _ in provider.keyed(None, None)]
    assert keys == [1, *range(3, 11)]
    engine.dispose()


async def test_a_dropped_table_fails_as_before_not_read_row_by_row(tmp_path: Path) -> None:
    table = _table()
    engine = create_engine(f"sqlite:///{tmp_path / 't.sqlite3'}")
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(table), [{"id": i, "slug": f"p{i}", "updated_at": START} for i in range(1, 11)]
        )
    provider = SQLAlchemyProvider(engine, table, key="id", location="/p/{slug}")
    calls = []
    real = provider._all

    async def counting(statement: Any, by_column: Any = ()) -> Any:
        calls.append(statement)
        return await real(statement, by_column)

    provider._all = counting  # type: ignore[method-assign]
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE typed"))
    from sqlalchemy.exc import OperationalError

    with pytest.raises(OperationalError):
        [key async for key, _ in provider.keyed(None, None)]
    assert len(calls) == 1
    engine.dispose()


@pytest.mark.parametrize("mode", ["location", "to_entry"])
async def test_a_newest_lastmod_that_is_no_date_leaves_out_last_modified_alone(
    tmp_path: Path, caplog: Any, mode: str
) -> None:
    """The greatest value SQLite holds in the lastmod column is a text: the version has no
    Last-Modified (logged once over two crawls); the index dates its other pages, every
    valid row is served."""
    table = _table()
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 't.sqlite3'}")
    async with engine.begin() as conn:
        await conn.run_sync(table.metadata.create_all)
        await conn.execute(
            insert(table),
            [
                {
                    "id": i,
                    "slug": f"p{i}",
                    "updated_at": datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(hours=i),
                }
                for i in range(1, 31)
            ],
        )
        await conn.execute(text("UPDATE typed SET updated_at = 'zzz' WHERE id = 25"))
    kwargs: dict[str, Any] = (
        {"location": "/p/{slug}"}
        if mode == "location"
        else {"to_entry": lambda row: {"loc": f"/p/{row.slug}", "lastmod": row.updated_at}}
    )
    provider = SQLAlchemyProvider(
        engine, table, key="id", lastmod="updated_at", batch_size=4, **kwargs
    )
    core = make_core({"p": provider}, max_urls_per_page=10)
    try:
        reply, body = await fetch(core, "/sitemap_index.xml")
        assert reply.status == 200
        assert (await provider.version()).last_modified is None
        assert body.count(b"<lastmod>") >= 2, body
        urls = await crawled_urls(core)
        assert len(urls) == 29
        await crawled_urls(core)
        assert caplog.text.count("is not a date") == 1, caplog.text
    finally:
        await core.aclose()
        await engine.dispose()


async def test_one_bad_row_in_a_big_batch_costs_few_queries(tmp_path: Path, caplog: Any) -> None:
    """A batch holding one value its type cannot read is halved until that row is found:
    a few dozen queries for 2,000 rows, not one per row (each page and plan reads it)."""
    table = _table()
    engine = create_engine(f"sqlite:///{tmp_path / 't.sqlite3'}")
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(table),
            [{"id": i, "slug": f"p{i}", "updated_at": START} for i in range(1, 2001)],
        )
        conn.execute(text("UPDATE typed SET updated_at = 'garbage' WHERE id IN (77, 1500)"))
    provider = SQLAlchemyProvider(
        engine, table, key="id", location="/p/{slug}", lastmod="updated_at"
    )
    calls: list[Any] = []
    real = provider._all

    async def counting(statement: Any, by_column: Any = ()) -> Any:
        calls.append(statement)
        return await real(statement, by_column)

    provider._all = counting  # type: ignore[method-assign]
    pairs = [pair async for pair in provider.keyed(None, None)]
    assert [key for key, _ in pairs] == list(range(1, 2001))
    bad = [key for key, item in pairs if isinstance(item, Exception)]
    assert bad == [77, 1500]
    assert len(calls) < 60, len(calls)
    engine.dispose()


async def test_a_text_that_is_not_utf8_under_the_default_checksum(tmp_path: Path) -> None:
    """sqlite3 cannot hand the checksum's function such a text: from the first failure
    the provider hands texts to it as bytes, and the row alone is left out."""
    table = _table()
    engine = create_engine(f"sqlite:///{tmp_path / 't.sqlite3'}")
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(table), [{"id": i, "slug": f"p{i}", "updated_at": START} for i in range(1, 21)]
        )
        conn.execute(text("UPDATE typed SET slug = CAST(X'ff41' AS TEXT) WHERE id = 9"))
    provider = SQLAlchemyProvider(engine, table, key="id", location="/p/{slug}")
    core = make_core({"p": provider}, max_urls_per_page=10)
    try:
        assert len(await crawled_urls(core)) == 19
    finally:
        await core.aclose()
        engine.dispose()


@pytest.mark.parametrize(
    ("error", "a_value"),
    [
        (ValueError("month must be in 1..12"), True),
        (LookupError("'green' is not among the defined enum values"), True),
        (Secret("bad token"), True),  # a TypeDecorator's own
        (ConfigurationError("key column"), False),
        (OperationalError("SELECT", {}, Exception("database is locked")), False),
        (OperationalError("SELECT", {}, Exception("Could not decode to UTF-8 column")), True),
        (asyncio.TimeoutError(), False),
        (ConnectionResetError(), False),
        (RuntimeError("Event loop is closed"), False),
    ],
)
def test_what_is_a_value_its_type_cannot_read(error: Exception, a_value: bool) -> None:
    """Only a value's fault is read again in parts; the database's, the connection's
    and this package's errors fail as before."""
    assert cannot_read(error) is a_value


async def test_a_users_own_sqlite_function_that_raises_is_not_hidden(tmp_path: Path) -> None:
    """A function of the user's that raises in their select fails the version read with
    its own error (the retry with texts as bytes raises it again), and a version read once
    it works is the one before (the switch keeps every readable row's number)."""
    from sqlalchemy import event, func, select

    table = _table()
    engine = create_engine(f"sqlite:///{tmp_path / 't.sqlite3'}")
    broken = {"now": False}

    def slugify(value: str) -> str:
        if broken["now"]:
            raise ValueError("the user's own function")
        return value.upper()

    @event.listens_for(engine, "connect")
    def register(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.create_function("slugify", 1, slugify)

    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(table), [{"id": i, "slug": f"p{i}", "updated_at": START} for i in range(1, 21)]
        )
    source = select(table.c.id, func.slugify(table.c.slug).label("slug"))
    before = await SQLAlchemyProvider(engine, source, key="id", location="/p/{slug}").version()
    provider = SQLAlchemyProvider(engine, source, key="id", location="/p/{slug}")
    broken["now"] = True
    with pytest.raises(Exception, match="user-defined function raised"):
        await provider.version()
    broken["now"] = False
    assert (await provider.version()).token == before.token
    engine.dispose()
