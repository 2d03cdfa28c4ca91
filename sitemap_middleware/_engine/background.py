"""One background task at a time, started when work waits (the guard's probes, the
ledger's saves).

The task outlives the request that woke it, which needs asyncio's loop (as the
stale-while-revalidate refreshes do); under trio nothing is started and the work waits
for the next asyncio wake, or stays in process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import sniffio

__all__ = ["BackgroundTask"]


class BackgroundTask:
    """Runs ``run()`` in an asyncio task whenever :meth:`wake` finds none running."""

    def __init__(self, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._run = run
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def wake(self) -> None:
        if self.running:
            return
        try:
            if sniffio.current_async_library() != "asyncio":
                return
        except sniffio.AsyncLibraryNotFoundError:  # pragma: no cover - always in a loop
            return
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def settled(self) -> None:
        """Wait until the work that waits is done."""
        while self._task is not None and not self._task.done():
            await asyncio.wait([self._task])

    async def stop(self, *, cancel: bool) -> None:
        """Let the running task finish (or cancel it), and start none after."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            if cancel:
                task.cancel()
            await asyncio.wait([task])
