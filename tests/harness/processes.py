"""Other processes: a check in a forked child (as a pre-fork server's workers run), and
Python run from the repository's root (``python -m benchmarks.X``, say)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

#: The repository's root: where ``python -m benchmarks.X`` finds its modules.
ROOT = Path(__file__).resolve().parents[2]


def in_forked_child(check: Callable[[], bool], timeout: float = 20) -> str:
    """Run ``check`` in a fork()ed child; ``"ok"``, ``"failed"``, ``"raised"`` or ``"hung"``.

    For pre-fork servers (gunicorn --preload): what the parent set up before forking must
    not break, or deadlock, the child.
    """
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


def run_python(*args: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    """``python args`` (``-m benchmarks.ledger ...``, ``-c CODE``) from the repository's
    root, as a person runs it; fails the test when it exits non-zero (showing its output).
    ``env`` changes this environment (``None`` removes a variable)."""
    environ = {**os.environ, **env}
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={name: value for name, value in environ.items() if value is not None},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (
        f"{args[:2]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done
