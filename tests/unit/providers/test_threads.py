"""WorkerThreads: sync work that can be given up, with hung threads counted."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from sitemap_middleware._providers.threads import WorkerThreads
from sitemap_middleware.providers import CallableProvider

pytestmark = pytest.mark.anyio


async def test_giving_up_keeps_the_slot_until_the_thread_returns() -> None:
    """A cancelled call answers at once; its slot frees and cleanup runs when it returns."""
    threads = WorkerThreads(limit=1)
    release, started = threading.Event(), threading.Event()
    cleaned: list[str] = []

    def block() -> str:
        started.set()
        release.wait()
        return "late"

    with anyio.move_on_after(0.2):
        await threads.run(block, cleanup=lambda: cleaned.append(threading.current_thread().name))
    assert started.is_set() and threads.alive == 1 and cleaned == []
    with anyio.move_on_after(0.1) as waiting:  # the only slot is held by the hung call
        await threads.run(lambda: None)
    assert waiting.cancel_called and threads.alive == 1
    release.set()
    while threads.alive:
        await anyio.sleep(0.01)
    assert len(cleaned) == 1 and cleaned[0] != threading.current_thread().name
    assert await threads.run(lambda: "free again") == "free again"


async def test_a_failing_call_cleans_up_at_once() -> None:
    """An exception in the worker is raised here; cleanup has run and the slot is free."""
    threads = WorkerThreads(limit=2)
    cleaned: list[int] = []

    def fail() -> None:
        raise LookupError("no such table")

    with pytest.raises(LookupError):
        await threads.run(fail, cleanup=lambda: cleaned.append(1))
    assert cleaned == [1] and threads.alive == 0


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "8"])
def test_max_threads_must_be_a_positive_integer(limit: object) -> None:
    """A limit that is not an integer >= 1 is refused with the value in the message."""
    with pytest.raises(ValueError, match="max_threads must be an integer >= 1"):
        CallableProvider(list, max_threads=limit)  # type: ignore[arg-type]


async def test_hung_generator_is_closed_by_its_thread_not_under_it() -> None:
    """A generator given up mid-batch is closed once its thread returns, never while it runs."""
    release = threading.Event()
    closed: list[bool] = []

    def rows() -> Iterator[str]:
        try:
            yield "/a"
            release.wait()
            yield "/b"
        finally:
            closed.append(True)

    provider = CallableProvider(rows)
    entries: Any = provider.entries()  # an async generator: it has aclose()
    with anyio.move_on_after(0.2):
        async for _ in entries:
            pass
    await entries.aclose()  # must not raise "generator already executing"
    assert closed == []
    release.set()
    while provider._threads.alive:
        await anyio.sleep(0.01)
    assert closed == [True]
