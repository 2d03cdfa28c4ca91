"""Background refreshes for stale-while-revalidate: one per document at a time."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import sniffio

__all__ = ["BackgroundRefreshes"]


class BackgroundRefreshes:
    """Runs ``refresh()`` of a document in the background, once at a time per key.

    Needs asyncio (a task outlives the request that starts it); on trio :meth:`start`
    says no and the request revalidates in line instead.
    """

    def __init__(self) -> None:
        self._running: set[str] = set()
        self._tasks: set[Any] = set()

    def start(self, key: str, refresh: Callable[[], Awaitable[None]]) -> bool:
        """Start ``refresh()`` for ``key`` unless one runs; False where none can run."""
        try:
            library = sniffio.current_async_library()
        except sniffio.AsyncLibraryNotFoundError:  # pragma: no cover - always in a loop
            return False
        if library != "asyncio":
            return False
        if key in self._running:
            return True
        import asyncio

        async def run() -> None:
            try:
                await refresh()
            finally:
                self._running.discard(key)

        self._running.add(key)
        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def aclose(self) -> None:
        """Cancel the refreshes still running and wait for them to end."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):  # cancelled, or failed and logged
                await task
