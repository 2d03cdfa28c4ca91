"""Worker threads for sync provider code, bounded per provider, hung ones included.

This module alone owns how sync work leaves the event loop. A call is abandoned when
its request gives up (``provider_timeout``, a client hanging up): the request answers
at once instead of waiting for the thread, but the thread goes on until the blocking
call returns, and keeps its slot until then. So a section whose database hangs holds
at most ``MAX_SECTION_THREADS`` threads, however many requests ask for it, and the
shared pool stays free for every other section.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio
import anyio.to_thread

__all__ = ["MAX_SECTION_THREADS", "WorkerThreads"]

T = TypeVar("T")

#: Threads one provider may have at once, running or hung (anyio's whole pool is 40).
MAX_SECTION_THREADS = 8
#: Seconds between looks for a free slot while all of them are taken. Waiting is
#: bounded by the caller's timeout; a slot frees only when a blocking call returns.
_POLL = 0.02

_PENDING, _RUNNING, _DONE, _DROPPED = range(4)


class WorkerThreads:
    """At most ``limit`` threads doing one provider's sync work, hung or not."""

    def __init__(self, limit: int = MAX_SECTION_THREADS) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"max_threads must be an integer >= 1, got {limit!r}")
        self.limit = limit
        self._lock = threading.Lock()
        self._alive = 0

    @property
    def alive(self) -> int:
        """Slots taken now: calls running, waiting to run, or abandoned but still blocked."""
        return self._alive

    async def run(
        self, func: Callable[..., T], *args: object, cleanup: Callable[[], object] | None = None
    ) -> T:
        """``func(*args)`` in a worker thread; cancellable even while it blocks.

        If this raises (``func`` raised, or the caller was cancelled), ``cleanup`` runs
        once ``func`` is no longer running: at once, or in the worker thread when an
        abandoned call finally returns (so a generator is never closed while another
        thread executes it).
        """
        job: _Job[T] | None = None
        try:
            while not self._claim():
                await anyio.sleep(_POLL)
            job = _Job(self, func, args, cleanup)
            return await anyio.to_thread.run_sync(job.run, abandon_on_cancel=True)
        except BaseException:
            if job is None:
                _call(cleanup)
            else:
                job.drop()
            raise

    def _claim(self) -> bool:
        with self._lock:
            if self._alive >= self.limit:
                return False
            self._alive += 1
            return True

    def _release(self) -> None:
        with self._lock:
            self._alive -= 1


class _Job(Generic[T]):
    """One call and its state: who releases the slot and runs the cleanup, and when."""

    def __init__(
        self,
        threads: WorkerThreads,
        func: Callable[..., T],
        args: tuple[object, ...],
        cleanup: Callable[[], object] | None,
    ) -> None:
        self._threads = threads
        self._func = func
        self._args = args
        self._cleanup = cleanup
        self._state = _PENDING
        self._lock = threading.Lock()

    def run(self) -> T:  # in the worker thread
        with self._lock:
            if self._state == _DROPPED:  # given up before it started: slot already freed
                raise RuntimeError("abandoned before it started")  # nobody reads this
            self._state = _RUNNING
        try:
            return self._func(*self._args)
        finally:
            with self._lock:
                abandoned = self._state == _DROPPED
                self._state = _DONE
            self._threads._release()
            if abandoned:
                _call(self._cleanup)

    def drop(self) -> None:  # in the event loop: the caller gave up or func raised
        with self._lock:
            state = self._state
            if state == _RUNNING:
                self._state = _DROPPED  # the thread cleans up when func returns
                return
            self._state = _DROPPED
        if state == _PENDING:
            self._threads._release()
        _call(self._cleanup)


def _call(cleanup: Callable[[], object] | None) -> None:
    if cleanup is not None:
        cleanup()
