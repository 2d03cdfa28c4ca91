"""Running a provider's statements: off the request's way, on any engine.

An ``AsyncEngine`` runs each query in a task of its own (a request that gives up does
not cancel it mid-query); a sync ``Engine`` in a bounded pool of worker threads. A
forked worker (gunicorn ``--preload``) gets a pool of its own.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from .threads import WorkerThreads

__all__ = ["StatementRunner"]

#: Rows turned into columns at a time: few enough to die young in the collector.
_PARTITION = 256


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


def _read(result: Any, by_column: Sequence[str]) -> Sequence[Any]:
    """A buffered result's rows, or its columns (see :meth:`StatementRunner.all`)."""
    if not by_column:
        rows: Sequence[Any] = result.all()
        return rows
    columns: list[list[Any]] = [[] for _ in by_column]
    getters = [itemgetter(place) for place in range(len(by_column))]
    for part in result.partitions(_PARTITION):
        for column, getter in zip(columns, getters, strict=True):
            column.extend(map(getter, part))
    return columns


class StatementRunner:
    """Runs statements on one engine and reads their rows (or columns)."""

    def __init__(self, engine: AsyncEngine | Engine) -> None:
        self._engine = engine
        self._threads = WorkerThreads()
        #: Queries under way; kept referenced until done (see all).
        self._queries: set[asyncio.Future[Sequence[Any]]] = set()
        _fresh_pool_after_fork(engine)

    async def all(self, statement: Any, by_column: Sequence[str] = ()) -> Sequence[Any]:
        """The statement's rows; or with ``by_column`` its columns, one list per name.

        By column, rows are read from the buffered result a few hundred at a time:
        Row objects are tracked by the garbage collector, and thousands of them alive
        at once survive into its oldest generation, whose full collections then cost a
        big page more than its rows do.
        """
        if isinstance(self._engine, AsyncEngine):
            # The query runs in a task of its own: if the request gives up (a hang-up, a
            # timeout) it answers at once, while the query finishes and returns its
            # connection to the pool. Cancelled mid-query, SQLAlchemy would instead
            # "terminate" the connection through a task nobody awaits ("Task was destroyed
            # but it is pending!"). SQLAlchemy's asyncio layer needs asyncio anyway.
            task = asyncio.ensure_future(self._query(self._engine, statement, by_column))
            self._queries.add(task)
            task.add_done_callback(self._query_done)
            return await asyncio.shield(task)
        engine = self._engine

        def run() -> Sequence[Any]:
            with engine.connect() as conn:
                return _read(conn.execute(statement), by_column)

        return await self._threads.run(run)  # a hung query holds a bounded few threads

    @staticmethod
    async def _query(
        engine: AsyncEngine, statement: Any, by_column: Sequence[str]
    ) -> Sequence[Any]:
        async with engine.connect() as conn:
            return _read(await conn.execute(statement), by_column)

    def _query_done(self, task: asyncio.Future[Sequence[Any]]) -> None:
        self._queries.discard(task)
        if not task.cancelled():
            task.exception()  # read: an abandoned query's error is not "never retrieved"
