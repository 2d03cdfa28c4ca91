"""One metadata query in flight: concurrent callers share its answer.

This module alone owns when a provider's count/version query runs. A provider's
metadata (row count, version) is one aggregate over its rows; thirty concurrent
conditional requests must not run thirty of them. :class:`SharedQuery` keeps the last
answer for ``ttl`` seconds and, past that, lets one caller run the query while the others
wait for it. A waiter reuses an answer only from a query that *started after it
arrived*, so it never sees data older than its own request, even with ``ttl=0``.

Locks belong to an event loop (a provider may serve an ASGI server's loop and the WSGI
portal's), so there is one per loop.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar
from weakref import WeakKeyDictionary

import anyio
import anyio.lowlevel

__all__ = ["SharedQueries", "SharedQuery"]

_T = TypeVar("_T")


class SharedQuery(Generic[_T]):
    """The last answer of a query, reused for ``ttl`` seconds; one query in flight."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self.answer: tuple[float, _T] | None = None  # (when its query started, answer)
        self._locks: WeakKeyDictionary[object, anyio.Lock] = WeakKeyDictionary()

    def clear(self) -> None:
        """Forget the answer: the next caller runs the query."""
        self.answer = None

    def latest(self) -> _T | None:
        """The last answer, however old (None before the first)."""
        return self.answer[1] if self.answer is not None else None

    async def get(self, query: Callable[[], Awaitable[_T]]) -> _T:
        arrived = time.monotonic()
        if (fresh := self._usable(arrived)) is not None:
            return fresh[1]
        async with self._lock():
            if (fresh := self._usable(arrived)) is not None:
                return fresh[1]  # a query that started after we arrived answered
            started = time.monotonic()
            value = await query()
            self.answer = (started, value)
            return value

    def _usable(self, arrived: float) -> tuple[float, _T] | None:
        answer = self.answer
        if answer is None:
            return None
        started = answer[0]
        if started >= arrived or time.monotonic() - started < self.ttl:
            return answer
        return None

    def _lock(self) -> anyio.Lock:
        loop = anyio.lowlevel.current_token().native_token
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = anyio.Lock()
        return lock


class SharedQueries(Generic[_T]):
    """A :class:`SharedQuery` per key (a key range's version, say), the ``most`` used
    most recently kept: clients can name keys without end."""

    def __init__(self, ttl: float, most: int = 1024) -> None:
        self.ttl = ttl
        self._most = most
        self._queries: dict[Hashable, SharedQuery[_T]] = {}

    def clear(self) -> None:
        self._queries.clear()

    async def get(self, key: Hashable, query: Callable[[], Awaitable[_T]]) -> _T:
        shared = self._queries.pop(key, None) or SharedQuery(self.ttl)
        self._queries[key] = shared  # the most recent last
        while len(self._queries) > self._most:
            del self._queries[next(iter(self._queries))]
        return await shared.get(query)
