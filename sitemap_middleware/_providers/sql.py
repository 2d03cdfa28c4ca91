"""SQLAlchemy provider: keyset pages, cheap counts, versions from the table.

Needs the ``sql`` extra (``sqlalchemy[asyncio]`` plus a driver such as aiosqlite or
asyncpg). Works with an ``AsyncEngine`` directly and with a sync ``Engine`` through a
worker thread.
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, Select, Table, func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ColumnElement

from .._sansio.values import aware, to_datetime
from .base import EntryLike, ProviderVersion
from .threads import WorkerThreads

__all__ = ["SQLAlchemyProvider"]


def _aware(value: object) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return aware(value)
    return to_datetime(value)  # type: ignore[arg-type]


def _fresh_pool_after_fork(engine: AsyncEngine | Engine) -> None:
    """Give a forked worker (gunicorn --preload) its own connection pool.

    Pooled connections belong to the parent: an aiosqlite connection's thread does not
    exist in the child (using it hangs), an asyncpg one is bound to the parent's loop.
    SQLAlchemy's advice for fork() is ``dispose(close=False)`` in the child: the old
    pool is dropped without touching the parent's connections.
    """
    sync_engine = engine.sync_engine if isinstance(engine, AsyncEngine) else engine
    ref = weakref.ref(sync_engine)

    def after_fork_in_child() -> None:
        alive = ref()
        if alive is not None:
            alive.dispose(close=False)

    os.register_at_fork(after_in_child=after_fork_in_child)


class SQLAlchemyProvider:
    """Entries from a table or a ``select()``, one row per URL.

    :param engine: an ``AsyncEngine`` or a sync ``Engine``.
    :param source: a ``Table`` or a ``Select``; its rows are handed to ``to_entry``.
    :param key: name of a unique, sortable column (usually the primary key). Pages are
        read by key range (``WHERE key >= :first ORDER BY key LIMIT n``), never by a
        growing ``OFFSET``.
    :param to_entry: maps a row to a ``SitemapEntry``, a URL string or a mapping.
    :param lastmod: name of a datetime column: gives ``Last-Modified``, the version
        token and each index page's ``<lastmod>``.
    :param batch_size: rows fetched per query while streaming.
    :param metadata_ttl: seconds a count/version answer is reused. One request asks for
        both (and the page plan checks the version again); on a big table each is a scan.

    Page boundaries (first key of each page and its newest lastmod) come from one
    window-function scan, cached until the version token (row count, max key, max
    lastmod) changes.
    """

    def __init__(
        self,
        engine: AsyncEngine | Engine,
        source: Table | Select[Any],
        *,
        key: str,
        to_entry: Callable[[Any], EntryLike],
        lastmod: str | None = None,
        batch_size: int = 5000,
        metadata_ttl: float = 1.0,
    ) -> None:
        self._engine = engine
        self._sub = (source if isinstance(source, Select) else select(source)).subquery(
            "sitemap_rows"
        )
        if key not in self._sub.c:
            raise ValueError(f"key column {key!r} is not in the source's columns")
        if lastmod is not None and lastmod not in self._sub.c:
            raise ValueError(f"lastmod column {lastmod!r} is not in the source's columns")
        self._key: ColumnElement[Any] = self._sub.c[key]
        self._lastmod: ColumnElement[Any] | None = self._sub.c[lastmod] if lastmod else None
        self._to_entry = to_entry
        self._batch = batch_size
        self._plans: dict[int, tuple[str, list[Any], list[datetime | None]]] = {}
        self._metadata_ttl = metadata_ttl
        self._metadata: tuple[float, int, ProviderVersion] | None = None
        self._threads = WorkerThreads()
        #: Queries under way; kept referenced until done (see _all).
        self._queries: set[asyncio.Future[Sequence[Any]]] = set()
        _fresh_pool_after_fork(engine)

    async def _all(self, statement: Any) -> Sequence[Any]:
        if isinstance(self._engine, AsyncEngine):
            # The query runs in a task of its own: if the request gives up (a hang-up, a
            # timeout) it answers at once, while the query finishes and returns its
            # connection to the pool. Cancelled mid-query, SQLAlchemy would instead
            # "terminate" the connection through a task nobody awaits ("Task was destroyed
            # but it is pending!"). SQLAlchemy's asyncio layer needs asyncio anyway.
            task = asyncio.ensure_future(self._query(self._engine, statement))
            self._queries.add(task)
            task.add_done_callback(self._query_done)
            return await asyncio.shield(task)
        engine = self._engine

        def run() -> Sequence[Any]:
            with engine.connect() as conn:
                return conn.execute(statement).all()

        return await self._threads.run(run)  # a hung query holds a bounded few threads

    @staticmethod
    async def _query(engine: AsyncEngine, statement: Any) -> Sequence[Any]:
        async with engine.connect() as conn:
            return (await conn.execute(statement)).all()

    def _query_done(self, task: asyncio.Future[Sequence[Any]]) -> None:
        self._queries.discard(task)
        if not task.cancelled():
            task.exception()  # read: an abandoned query's error is not "never retrieved"

    async def _rows_from(self, first: Any | None, limit: int | None) -> AsyncIterator[Any]:
        """Rows in key order from ``first`` (inclusive), keyset-batched."""
        last = None
        remaining = limit
        while remaining is None or remaining > 0:
            size = self._batch if remaining is None else min(self._batch, remaining)
            statement = select(self._sub).order_by(self._key).limit(size)
            if last is not None:
                statement = statement.where(self._key > last)
            elif first is not None:
                statement = statement.where(self._key >= first)
            rows = await self._all(statement)
            for row in rows:
                yield self._to_entry(row)
            if len(rows) < size:
                return
            last = rows[-1]._mapping[self._key.key]
            if remaining is not None:
                remaining -= len(rows)

    def entries(self) -> AsyncIterator[EntryLike]:
        return self._rows_from(None, None)

    async def page(self, offset: int, limit: int) -> AsyncIterator[EntryLike]:
        starts, _ = await self._boundaries(limit)
        index = offset // limit
        if offset % limit or index >= len(starts):
            return
        async for entry in self._rows_from(starts[index], limit):
            yield entry

    async def count(self) -> int:
        return (await self._summary())[0]

    async def version(self) -> ProviderVersion:
        return (await self._summary())[1]

    async def _summary(self) -> tuple[int, ProviderVersion]:
        """Row count and version from one aggregate query, reused for ``metadata_ttl``."""
        now = time.monotonic()
        if self._metadata is not None and now - self._metadata[0] < self._metadata_ttl:
            return self._metadata[1], self._metadata[2]
        columns: list[Any] = [func.count(), func.max(self._key)]
        if self._lastmod is not None:
            columns.append(func.max(self._lastmod))
        row = (await self._all(select(*columns).select_from(self._sub)))[0]
        modified = _aware(row[2]) if self._lastmod is not None else None
        token = f"{row[0]}:{row[1]}:{modified.isoformat() if modified else ''}"
        version = ProviderVersion(token=token, last_modified=modified)
        self._metadata = (now, int(row[0]), version)
        return int(row[0]), version

    async def page_last_modified(self, page_size: int) -> list[datetime | None]:
        return (await self._boundaries(page_size))[1]

    async def _boundaries(self, page_size: int) -> tuple[list[Any], list[datetime | None]]:
        """First key and newest lastmod of each page, from one scan per data version."""
        token = (await self.version()).token or ""
        cached = self._plans.get(page_size)
        if cached is not None and cached[0] == token:
            return cached[1], cached[2]
        number = ((func.row_number().over(order_by=self._key) - 1) // page_size).label("page")
        columns: list[Any] = [self._key.label("key"), number]
        if self._lastmod is not None:
            columns.append(self._lastmod.label("lastmod"))
        numbered = select(*columns).subquery("numbered")
        summary: list[Any] = [func.min(numbered.c.key)]
        if self._lastmod is not None:
            summary.append(func.max(numbered.c.lastmod))
        rows = await self._all(select(*summary).group_by(numbered.c.page).order_by(numbered.c.page))
        starts = [row[0] for row in rows]
        lastmods = [_aware(row[1]) if self._lastmod is not None else None for row in rows]
        self._plans[page_size] = (token, starts, lastmods)
        return starts, lastmods
