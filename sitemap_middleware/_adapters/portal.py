"""One blocking portal (event loop thread) per process, for the WSGI side."""

from __future__ import annotations

import atexit
import os
import threading
from contextlib import AbstractContextManager

from anyio.from_thread import BlockingPortal, start_blocking_portal

__all__ = ["get_portal"]

_lock = threading.Lock()
_current: tuple[BlockingPortal, AbstractContextManager[BlockingPortal]] | None = None
#: Portals inherited through fork(): their loop thread does not exist in this process.
#: Kept referenced forever, because finalizing the context manager would stop the
#: portal and join its thread -- a wait that never ends in the child.
_inherited: list[object] = []


def get_portal() -> BlockingPortal:
    """The process's portal, started lazily (after a pre-fork server has forked).

    One long-lived loop lets providers keep loop-bound clients and pools between
    requests; a forked worker gets its own loop (see _after_fork_in_child).
    """
    global _current
    with _lock:
        if _current is None:
            manager = start_blocking_portal()
            _current = (manager.__enter__(), manager)
        return _current[0]


@atexit.register  # inherited by forked children, where it stops the child's own portal
def _stop() -> None:
    global _current
    with _lock:
        if _current is not None:
            _current[1].__exit__(None, None, None)
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
