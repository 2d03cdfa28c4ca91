"""Running a check in a forked child, as a pre-fork server's workers run."""

from __future__ import annotations

from collections.abc import Callable


def in_forked_child(check: Callable[[], bool], timeout: float = 20) -> str:
    """Run ``check`` in a fork()ed child; ``"ok"``, ``"failed"``, ``"raised"`` or ``"hung"``.

    For pre-fork servers (gunicorn --preload): what the parent set up before forking must
    not break, or deadlock, the child.
    """
    import os
    import signal
    import time

    pid = os.fork()
    if pid == 0:  # the child reports through its exit status only
        status = 3
        try:
            status = 0 if check() else 2
        finally:
            os._exit(status)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return {0: "ok", 2: "failed"}.get(os.waitstatus_to_exitcode(status), "raised")
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "hung"
        time.sleep(0.05)
