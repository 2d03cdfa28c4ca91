"""One blocking portal (event loop thread) per process, for the WSGI side."""

from __future__ import annotations

import atexit
import os
import threading
from contextlib import AbstractContextManager

from anyio.from_thread import BlockingPortal, start_blocking_portal

__all__ = ["get_portal"]

_lock = threading.Lock()
_current: tuple[int, BlockingPortal, AbstractContextManager[BlockingPortal]] | None = None


def get_portal() -> BlockingPortal:
    """The process's portal, started lazily (after a pre-fork server has forked).

    One long-lived loop lets providers keep loop-bound clients and pools between
    requests; a new pid (a forked worker) gets its own loop.
    """
    global _current
    with _lock:
        if _current is None or _current[0] != os.getpid():
            manager = start_blocking_portal()
            portal = manager.__enter__()
            if _current is None:
                atexit.register(_stop)
            _current = (os.getpid(), portal, manager)
        return _current[1]


def _stop() -> None:
    global _current
    with _lock:
        if _current is not None and _current[0] == os.getpid():
            _current[2].__exit__(None, None, None)
        _current = None
