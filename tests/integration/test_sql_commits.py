"""Versions kept while nothing is committed (``_providers/sql_commits.py``, issue 23).

Nothing committed since a version was read: the next check runs no aggregate. Any
commit (through the provider's engine, another connection, another process, a forked
worker) moves the version and the key-range versions at once.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, create_engine, insert
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.processes import in_forked_child, run_python
from tests.harness.sql import database_url, recorded_statements
from tests.integration.test_sql import START

pytestmark = pytest.mark.anyio
metadata = MetaData()
items = Table(
    "sitemap_commit_items",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    Column("revision", Integer, nullable=False),
)
RANGE = (0, 10)  # a key range holding rows 1-10 (a page's)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _url(kind: str, tmp_path: Path) -> str:
    return database_url(kind, tmp_path, "commits")


@pytest.fixture(params=["sqlite", "postgresql"])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    url = _url(request.param, tmp_path)
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
        await conn.run_sync(metadata.create_all)
        rows = [
            {"id": i, "slug": f"s{i}", "updated_at": START, "revision": i} for i in range(1, 41)
        ]
        await conn.execute(insert(items), rows)
    yield url
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
    await engine.dispose()


def _provider(engine: Any, revision: bool) -> SQLAlchemyProvider:
    return SQLAlchemyProvider(
        engine,
        items,
        key="id",
        location="/i/{slug}",
        lastmod="updated_at",
        version_column="revision" if revision else None,
        metadata_ttl=0,
    )


async def _tokens(provider: SQLAlchemyProvider) -> tuple[str | None, str | None]:
    version = await provider.version()
    _, in_range = await provider.range_version(*RANGE)
    return version.token, in_range.token


@pytest.mark.parametrize("revision", [False, True], ids=["checksum", "revision"])
async def test_nothing_committed_runs_no_aggregate(url: str, revision: bool) -> None:
    """The next check of the section and of a key range reads no row: SQLite asks its
    own connection's data_version, PostgreSQL reads its snapshot (no count, no sum).

    A PostgreSQL snapshot moves with a commit anywhere in the cluster (this test shares
    its server): some round of a few must find it still."""
    engine = create_async_engine(url)
    try:
        provider = _provider(engine, revision)
        first = await _tokens(provider)
        quiet = 0
        for _ in range(1 if url.startswith("sqlite") else 50):
            with recorded_statements(engine) as statements:
                assert await _tokens(provider) == first
            assert all("snapshot" in each or "count(" in each for each in statements)
            quiet += not [each for each in statements if "count(" in each]
            if quiet:
                break
        assert quiet, statements
        assert provider._commits.applies is True
    finally:
        await engine.dispose()


async def _write(engine: AsyncEngine, slug: str, key: int = 5) -> None:
    async with engine.begin() as conn:
        await conn.execute(items.update().where(items.c.id == key).values(slug=slug, revision=99))


@pytest.mark.parametrize("revision", [False, True], ids=["checksum", "revision"])
@pytest.mark.parametrize("writer", ["same engine", "another engine", "another process"])
async def test_a_commit_moves_the_versions_at_once(url: str, revision: bool, writer: str) -> None:
    """A rename of a row in the range, committed however, moves both tokens on the very
    next check; an uncommitted one does not, nor a rolled-back one."""
    engine = create_async_engine(url)
    other = create_async_engine(url)
    try:
        provider = _provider(engine, revision)
        first = await _tokens(provider)
        assert await _tokens(provider) == first
        async with other.connect() as conn:  # uncommitted, then rolled back
            await conn.execute(items.update().where(items.c.id == 5).values(slug="x", revision=98))
            assert await _tokens(provider) == first
            await conn.rollback()
        assert await _tokens(provider) == first
        if writer == "same engine":
            await _write(engine, "renamed")
        elif writer == "another engine":
            await _write(other, "renamed")
        else:
            sync_url = url.replace("+aiosqlite", "").replace("+asyncpg", "+psycopg")
            code = f"""
                from sqlalchemy import create_engine, text
                engine = create_engine({sync_url!r})
                with engine.begin() as conn:
                    conn.execute(text(
                        "UPDATE sitemap_commit_items SET slug = 'renamed', revision = 99 "
                        "WHERE id = 5"
                    ))
            """
            run_python("-c", textwrap.dedent(code))
        moved = await _tokens(provider)
        assert moved[0] != first[0] and moved[1] != first[1]
        assert await _tokens(provider) == moved
    finally:
        await engine.dispose()
        await other.dispose()


async def test_a_commit_in_a_savepoint_moves_the_version(url: str) -> None:
    engine = create_async_engine(url)
    try:
        provider = _provider(engine, revision=False)
        first = await _tokens(provider)
        async with engine.begin() as conn, conn.begin_nested():
            await conn.execute(items.update().where(items.c.id == 3).values(slug="nested"))
        assert (await _tokens(provider))[1] != first[1]
    finally:
        await engine.dispose()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_worker_sees_a_commit_made_after_the_fork(tmp_path: Path) -> None:
    """The parent read the version (its data_version connection is open); a forked
    worker writes and checks again: another connection of its own, the version moved."""
    engine = create_engine(f"sqlite:///{tmp_path / 'fork.sqlite3'}")
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(items), [{"id": 1, "slug": "a", "updated_at": START, "revision": 1}])
    provider = _provider(engine, revision=False)
    import anyio

    first = anyio.run(provider.version)
    assert anyio.run(provider.version) == first

    def child() -> bool:
        writer = create_engine(f"sqlite:///{tmp_path / 'fork.sqlite3'}")
        with writer.begin() as conn:
            conn.execute(items.update().values(slug="b"))
        return anyio.run(provider.version).token != first.token

    try:
        assert in_forked_child(child) == "ok"
        assert anyio.run(provider.version).token != first.token  # the parent's too
    finally:
        engine.dispose()


async def test_a_database_without_a_file_always_reads_the_rows() -> None:
    """In memory (one connection for every caller, StaticPool): no connection of our own
    can see it, so every check runs the aggregate, and writes show."""
    engine = create_async_engine(
        "sqlite+aiosqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
    )
    try:
        async with engine.begin() as conn:
            await conn.run_sync(metadata.create_all)
            await conn.execute(
                insert(items), [{"id": 1, "slug": "a", "updated_at": START, "revision": 1}]
            )
        provider = _provider(engine, revision=False)
        first = await _tokens(provider)
        assert provider._commits.applies is False
        await _write(engine, "renamed", key=1)
        assert (await _tokens(provider))[0] != first[0]
    finally:
        await engine.dispose()


async def test_an_attached_database_always_reads_the_rows(tmp_path: Path) -> None:
    """A table of an attached database: main's data_version does not see its commits."""
    from sqlalchemy import event

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'main.sqlite3'}")
    other = str(tmp_path / "other.sqlite3")

    @event.listens_for(engine.sync_engine, "connect")
    def attach(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.execute(f"ATTACH DATABASE '{other}' AS other")

    attached = Table("attached_items", MetaData(schema="other"), *[c._copy() for c in items.c])
    try:
        async with engine.begin() as conn:
            await conn.run_sync(attached.metadata.create_all)
            await conn.execute(
                insert(attached), [{"id": 1, "slug": "a", "updated_at": START, "revision": 1}]
            )
        provider = SQLAlchemyProvider(
            engine, attached, key="id", location="/{slug}", metadata_ttl=0
        )
        first = await provider.version()
        assert provider._commits.applies is False
        async with engine.begin() as conn:
            await conn.execute(attached.update().values(slug="b"))
        assert (await provider.version()).token != first.token
    finally:
        await engine.dispose()


async def test_a_view_always_reads_the_rows(url: str) -> None:
    """A view may read what no commit of this database moves (a foreign table, a virtual
    one): every check of a view runs the aggregate."""
    from sqlalchemy import text

    engine = create_async_engine(url)
    view = Table("sitemap_commit_view", MetaData(), *[c._copy() for c in items.c])
    try:
        async with engine.begin() as conn:
            await conn.execute(text("DROP VIEW IF EXISTS sitemap_commit_view"))
            await conn.execute(
                text("CREATE VIEW sitemap_commit_view AS SELECT * FROM sitemap_commit_items")
            )
        provider = SQLAlchemyProvider(engine, view, key="id", location="/{slug}", metadata_ttl=0)
        first = await provider.version()
        assert provider._commits.applies is False
        await _write(engine, "renamed")
        assert (await provider.version()).token != first.token
    finally:
        async with engine.begin() as conn:
            await conn.execute(text("DROP VIEW IF EXISTS sitemap_commit_view"))
        await engine.dispose()


def _clocked(engine: Any, where: Any) -> SQLAlchemyProvider:
    from sqlalchemy import select

    return SQLAlchemyProvider(
        engine, select(items).where(where), key="id", location="/{slug}", metadata_ttl=0
    )


@pytest.mark.parametrize(
    "condition",
    ["now", "current_timestamp", "random", "sqlite_now", "user_function"],
)
async def test_a_source_reading_the_clock_always_reads_the_rows(url: str, condition: str) -> None:
    """Rows enter ``updated_at <= now()`` (scheduled publishing) as time passes, with
    nothing committed; so may rows of ``random()`` or of a function of the user's (it may
    read anything): such sources run the aggregate at every check."""
    from sqlalchemy import func, literal

    engine = create_async_engine(url)
    sqlite = url.startswith("sqlite")
    conditions = {
        "now": items.c.updated_at <= func.now(),
        "current_timestamp": items.c.updated_at <= func.current_timestamp(),
        "random": func.random() != literal(0.5),
        "sqlite_now": items.c.updated_at <= func.datetime("now"),
        "user_function": func.upper(items.c.slug) != func.my_visible_slug(items.c.slug),
    }
    if condition == "sqlite_now" and not sqlite:
        pytest.skip("datetime('now') is SQLite's")
    try:
        if condition == "user_function":
            if sqlite:
                pytest.skip("SQLite functions are per connection: none to write here")
            async with engine.begin() as conn:
                await conn.exec_driver_sql(
                    "CREATE OR REPLACE FUNCTION my_visible_slug(text) RETURNS text "
                    "AS 'SELECT $1' LANGUAGE sql"
                )
        provider = _clocked(engine, conditions[condition])
        await provider.version()
        assert provider._commits.applies is False
    finally:
        await engine.dispose()


async def test_forget_while_a_kept_version_is_checked_does_not_crash() -> None:
    """A check finds a kept version and awaits the signal (PostgreSQL: a query); meanwhile
    ``forget()`` (after a write) drops what was kept. The check still answers."""
    import asyncio

    from sitemap_middleware._providers import commits as shared_commits
    from sitemap_middleware._providers import sql_commits

    gate = asyncio.Event()

    class Slow(shared_commits.Signal):
        columns = ()

        async def now(self) -> Any:
            await gate.wait()
            return "same"

    commits = sql_commits.Commits(None, "postgresql", items)  # type: ignore[arg-type]
    commits._signal, commits._resolved = Slow(), True
    reads: list[int] = []

    async def query(extra: Any) -> tuple[int, list[Any]]:
        reads.append(1)
        return len(reads), []

    gate.set()
    assert await commits.read("k", query) == 1
    gate.clear()
    checking = asyncio.ensure_future(commits.read("k", query))
    await asyncio.sleep(0)
    commits.clear()  # forget(): a write was made
    gate.set()
    assert await checking == 2  # forgotten: read again, not the kept answer


def test_a_database_file_replaced_under_the_pool_is_never_trusted_again(tmp_path: Path) -> None:
    """A new file renamed over the database (a deploy): pooled connections may still read
    the old one, so a version read then is the old file's. Once the pool reconnects, the
    version must be the new file's, though nothing was committed to it."""
    import sqlite3

    import anyio

    def make(path: Path, slug: str) -> None:
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, slug TEXT NOT NULL)")
            db.execute("INSERT INTO t VALUES (1, ?)", (slug,))
        db.close()

    make(tmp_path / "site.sqlite3", "a")
    make(tmp_path / "new.sqlite3", "b")
    table = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String))

    def provider(engine: Any) -> SQLAlchemyProvider:
        return SQLAlchemyProvider(engine, table, key="id", location="/{slug}", metadata_ttl=0)

    engine = create_engine(f"sqlite:///{tmp_path / 'site.sqlite3'}")
    fresh = create_engine(f"sqlite:///{tmp_path / 'site.sqlite3'}")
    try:
        served = provider(engine)
        anyio.run(served.version)
        os.replace(tmp_path / "new.sqlite3", tmp_path / "site.sqlite3")
        anyio.run(served.version)  # read through a pooled connection: the old file's
        engine.dispose()  # the pool reconnects (pool_recycle, an invalidated connection)
        assert anyio.run(served.version) == anyio.run(provider(fresh).version)
    finally:
        engine.dispose()
        fresh.dispose()


def test_the_signal_never_creates_a_database_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file gone between the signal's ``stat`` and its connection (a deploy removing
    it): the signal answers None, and no empty database appears at the path."""
    import anyio

    from sitemap_middleware._providers.commits import DataVersion

    path = tmp_path / "gone.sqlite3"
    signal = DataVersion(str(path))
    with monkeypatch.context() as patched:
        patched.setattr(os, "stat", lambda _path: os.stat_result((0,) * 10))
        assert anyio.run(signal.now) is None
    assert not path.exists()
