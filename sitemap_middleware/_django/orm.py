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
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import anyio.to_thread

__all__ = ["run_orm", "run_orm_blocking"]

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
