"""The per-process portal across fork(): pre-fork servers (gunicorn --preload) fork a
process whose portal thread does not exist in the child."""

from __future__ import annotations

import gc
import os
import signal
import time

import pytest

from sitemap_middleware._portal import get_portal


async def _answer() -> int:
    return 42


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
# Python >= 3.12 warns about fork() in a threaded process: that is the situation tested.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_gets_its_own_portal_and_never_hangs_on_the_parents() -> None:
    """The parent's portal (its loop thread is gone in the child) is never stopped or
    joined from the child, even when garbage collection finalizes what referred to it."""
    parent_portal = get_portal()
    assert parent_portal.call(_answer) == 42
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        status = 1
        try:
            portal = get_portal()
            gc.collect()  # finalizing the parent's portal manager used to join a dead thread
            status = 0 if portal is not parent_portal and portal.call(_answer) == 42 else 2
        finally:
            os._exit(status)
    deadline = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung on the parent's portal")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
    assert get_portal() is parent_portal  # the parent's is untouched
