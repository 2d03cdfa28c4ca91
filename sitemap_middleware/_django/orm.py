"""Running Django's sync ORM from the async core: one worker-thread hop per call.

This module alone decides where ORM code runs and how its connections end. Django
refuses ORM calls from a thread with a running event loop (``SynchronousOnlyOperation``),
and both adapters run providers on one: uvicorn's loop under ASGI, the blocking portal's
under WSGI. So every call that may touch the database (``items()``, ``location()``,
``count()``, a QuerySet's evaluation) goes through :func:`run_orm`, in an anyio worker
thread (asyncio and trio alike).

Connections: Django keeps one per thread and closes it at the end of a request (the
``request_finished`` signal), which never fires in our threads. anyio's threads are
pooled and end after a few idle seconds without notice, so a connection left open in one
would be dropped by the garbage collector, never closed. Each hop therefore starts with
``close_old_connections()`` (as a Django request does) and ends by closing every
connection its thread opened: Django's default ``CONN_MAX_AGE = 0`` behaviour, per hop.
Callers make hops large (thousands of rows) so the reconnects stay cheap.

A document that Django reads with one query (a page of a ``Sitemap``: one slice of
``items()``) is read by :class:`ThreadedBatches` instead: one thread per document keeps
the query's cursor and connection from the first row to the last, so a deep page costs
one ``OFFSET`` (as in Django), not one per batch.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import AsyncGenerator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

import anyio.to_thread

__all__ = ["ThreadedBatches", "run_orm", "run_orm_blocking"]

_T = TypeVar("_T")


def _in_worker(function: Callable[..., _T], args: tuple[object, ...]) -> _T:
    from django.db import close_old_connections, connections

    close_old_connections()
    try:
        return function(*args)
    finally:
        connections.close_all()  # only this thread's: Django's connections are thread-local


async def run_orm(function: Callable[..., _T], *args: object) -> _T:
    """``function(*args)`` in a worker thread, its database connections closed afterwards."""
    return await anyio.to_thread.run_sync(_in_worker, function, args)


def run_orm_blocking(function: Callable[..., _T], *args: object) -> _T:
    """``function(*args)`` in a short-lived thread, waited for: for start-up code.

    ``asgi.py`` is imported by uvicorn *inside* its event loop, where Django refuses
    ORM calls; a fresh thread has no loop, and start-up may block for one query.
    """
    with ThreadPoolExecutor(1, thread_name_prefix="sitemap-django") as pool:
        return pool.submit(_in_worker, function, args).result()


#: Seconds a blocked hand-over waits before looking again whether the other side left.
_POLL = 0.2


class ThreadedBatches(Generic[_T]):
    """Batches produced by one dedicated thread, handed to the event loop one by one.

    For a document read with *one* query (Django's paginator slices ``items()`` once per
    page): the thread runs ``produce()`` (which may iterate a QuerySet with
    ``.iterator()``, holding its cursor and connection), at most two batches ahead of the
    reader, and closes its connections when it ends. Closing the reader (a client hung
    up, a provider timeout) tells the thread to stop at its next hand-over.
    """

    def __init__(self, produce: Callable[[], Iterator[list[_T]]]) -> None:
        self._produce = produce
        self._queue: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=2)
        self._stop = threading.Event()

    def _hand_over(self, message: tuple[str, object]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(message, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        from django.db import close_old_connections, connections

        close_old_connections()
        try:
            for batch in self._produce():
                if not self._hand_over(("batch", batch)):
                    return
            self._hand_over(("done", None))
        except BaseException as exc:  # handed to the reader, raised there
            self._hand_over(("error", exc))
        finally:
            connections.close_all()

    def _take(self) -> tuple[str, object]:
        while not self._stop.is_set():
            try:
                return self._queue.get(timeout=_POLL)
            except queue.Empty:
                continue
        return ("done", None)

    async def batches(self) -> AsyncGenerator[list[_T], None]:
        """Start the thread and yield its batches; close this to stop the thread."""
        thread = threading.Thread(target=self._run, name="sitemap-django-page", daemon=True)
        thread.start()
        try:
            while True:
                # abandon_on_cancel: a cancelled wait returns at once; its thread sees
                # _stop within _POLL seconds and ends.
                kind, value = await anyio.to_thread.run_sync(self._take, abandon_on_cancel=True)
                if kind == "done":
                    return
                if kind == "error":
                    raise value  # type: ignore[misc]  # an exception, by construction
                yield value  # type: ignore[misc]  # a batch, by construction
        finally:
            self._stop.set()
