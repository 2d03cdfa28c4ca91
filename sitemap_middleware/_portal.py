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
#: Portals inherited through fork(): their loop thread does not exist in this process.
#: Kept referenced forever, because finalizing the context manager would stop the
#: portal and join its thread -- a wait that never ends in the child.
_inherited: list[object] = []
_stop_registered = False


def get_portal() -> BlockingPortal:
    """The process's portal, started lazily (after a pre-fork server has forked).

    One long-lived loop lets providers keep loop-bound clients and pools between
    requests; a new pid (a forked worker) gets its own loop.
    """
    global _current, _stop_registered
    with _lock:
        if _current is None or _current[0] != os.getpid():
            if _current is not None:  # a fork the at-fork hook did not see
                _inherited.append(_current)
            manager = start_blocking_portal()
            portal = manager.__enter__()
            _current = (os.getpid(), portal, manager)
            if not _stop_registered:  # atexit handlers survive fork: register once
                atexit.register(_stop)
                _stop_registered = True
        return _current[1]


def _stop() -> None:
    global _current
    with _lock:
        if _current is not None and _current[0] == os.getpid():
            _current[2].__exit__(None, None, None)
        _current = None


def _after_fork_in_child() -> None:
    # Another thread may have held the lock when the parent forked; it never releases
    # it here. The parent's portal is set aside, never finalized (see _inherited).
    global _lock, _current
    _lock = threading.Lock()
    if _current is not None:
        _inherited.append(_current)
        _current = None


os.register_at_fork(after_in_child=_after_fork_in_child)
