"""The per-process portal across fork(): pre-fork servers (gunicorn --preload) fork a
process whose portal thread does not exist in the child."""

from __future__ import annotations

import gc
import os

import pytest

from sitemap_middleware._adapters.portal import get_portal
from tests.harness.processes import in_forked_child


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

    def child() -> bool:
        portal = get_portal()
        gc.collect()  # finalizing the parent's portal manager used to join a dead thread
        return portal is not parent_portal and portal.call(_answer) == 42

    assert in_forked_child(child) == "ok"
    assert get_portal() is parent_portal  # the parent's is untouched
