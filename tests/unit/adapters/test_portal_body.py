"""The WSGI body: chunks cross from the portal's loop to the request thread in batches.

One task per response reads the async body; the request thread wakes once per batch
(not per chunk, and never through a portal call per chunk), a slow reader holds its
render back, and close() stops the work before it returns.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from sitemap_middleware import SitemapConfig, WSGISitemapMiddleware
from sitemap_middleware._adapters.portal import BATCH_BYTES, PortalBody
from tests.harness.documents import check_document, page_urls
from tests.harness.providers import CountingProvider

CHUNK = 16 * 1024


class Source:
    """An async body of ``count`` chunks that records reads and closes."""

    def __init__(self, count: int, fail_at: int | None = None) -> None:
        self.count = count
        self.fail_at = fail_at
        self.read = 0
        self.closed = 0

    def __aiter__(self) -> Source:
        return self

    async def __anext__(self) -> bytes:
        await anyio.sleep(0)
        if self.read == self.fail_at:
            raise ValueError("database went away")
        if self.read >= self.count:
            raise StopAsyncIteration
        self.read += 1
        return bytes([self.read % 256]) * CHUNK

    async def aclose(self) -> None:
        self.closed += 1


@pytest.fixture(params=["asyncio", "trio"])
def portal(request: pytest.FixtureRequest) -> Iterator[BlockingPortal]:
    """A portal of its own (on trio, room for a paused task is signalled through it)."""
    with start_blocking_portal(request.param) as portal:
        yield portal


def _counted(portal: BlockingPortal, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every crossing from a thread into ``portal`` (a call, or a task started)."""
    crossings: list[str] = []
    depth = threading.local()

    def counting(method: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(func: Any, *args: Any, **kwargs: Any) -> Any:
            if not getattr(depth, "inside", False):  # call() starts a task itself
                crossings.append(getattr(func, "__qualname__", repr(func)))
            depth.inside = True
            try:
                return method(func, *args, **kwargs)
            finally:
                depth.inside = False

        return wrapper

    monkeypatch.setattr(portal, "call", counting(portal.call))
    monkeypatch.setattr(portal, "start_task_soon", counting(portal.start_task_soon))
    return crossings


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.005)


def test_chunks_cross_in_batches_with_one_wake_up_each(
    portal: BlockingPortal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 chunks: the thread wakes once per BATCH_BYTES (at the first chunk at once) and
    passes the chunks on as they are; it crosses the portal once, to start the task."""
    crossings = _counted(portal, monkeypatch)
    source = Source(200)
    body = PortalBody(portal, source)
    received = list(body)
    body.close()
    assert received == [bytes([n % 256]) * CHUNK for n in range(1, 201)]
    assert source.closed == 1
    assert body.wakeups <= 2 + 200 * CHUNK // BATCH_BYTES, body.wakeups
    assert crossings == ["PortalBody._pump"]


def test_a_slow_reader_holds_its_render_back(portal: BlockingPortal) -> None:
    """A reader that stops reading stops its task: the batch it took and one more
    BATCH_BYTES at most are read, not the 16 MB body."""
    source = Source(1000)
    body = PortalBody(portal, source)
    try:
        pieces = iter(body)
        first = next(pieces)
        _wait_for(lambda: (source.read * CHUNK) - len(first) >= BATCH_BYTES)
        portal.call(anyio.sleep, 0.05)  # the loop had every chance to read on
        read = source.read
        portal.call(anyio.sleep, 0.05)
        assert source.read == read, (read, source.read)
        assert read * CHUNK <= 2 * (BATCH_BYTES + CHUNK), read
        assert len(first) + sum(map(len, pieces)) == 1000 * CHUNK  # then it reads on
    finally:
        body.close()


def test_close_mid_body_stops_the_task_and_closes_the_body(portal: BlockingPortal) -> None:
    """close() while the task reads: the body is closed when close() returns."""
    source = Source(1000)
    body = PortalBody(portal, source)
    chunks = iter(body)
    next(chunks)
    body.close()
    assert source.closed == 1 and source.read < 1000
    with pytest.raises(RuntimeError, match="closed before its end"):
        list(chunks)  # a thread still reading learns the body was cut


def test_close_without_reading_closes_the_body(portal: BlockingPortal) -> None:
    """A server that never iterates (client gone at once) still closes the body."""
    source = Source(10)
    body = PortalBody(portal, source)
    body.close()
    assert source.closed == 1 and source.read == 0
    with pytest.raises(RuntimeError, match="already iterated or closed"):
        list(body)


def test_close_after_the_end_does_not_cross_the_portal(
    portal: BlockingPortal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task closed the body at its end: close() has nothing left to do."""
    source = Source(3)
    body = PortalBody(portal, source)
    assert len(b"".join(body)) == 3 * CHUNK
    crossings = _counted(portal, monkeypatch)
    body.close()
    assert crossings == [] and source.closed == 1


def test_a_failure_reaches_the_thread_after_the_chunks_before_it(portal: BlockingPortal) -> None:
    """The body's exception is raised in the thread once the chunks before it are out."""
    source = Source(100, fail_at=40)
    body = PortalBody(portal, source)
    received: list[bytes] = []
    with pytest.raises(ValueError, match="database went away"):
        for piece in body:
            received.append(piece)
    body.close()
    assert sum(map(len, received)) == 40 * CHUNK and source.closed == 1


def test_an_async_generator_body_runs_its_finally_on_close(portal: BlockingPortal) -> None:
    """A plain async generator (what the core hands over) is closed by its own task."""
    state = {"finally": 0, "yielded": 0}

    async def gen() -> AsyncIterator[bytes]:
        try:
            while True:
                state["yielded"] += 1
                yield b"x" * CHUNK
                await anyio.sleep(0)
        finally:
            state["finally"] += 1

    body = PortalBody(portal, gen())
    chunks = iter(body)
    next(chunks)
    next(chunks)
    body.close()
    assert state["finally"] == 1


def test_concurrent_wsgi_requests_cross_the_portal_twice_each(
    portal: BlockingPortal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight threads GET one cold 2.7 MB page at once: each request crosses the portal
    twice (the reply, its body's task) and wakes about once per batch."""
    urls = [f"/p/{i}/{'x' * 400}" for i in range(6000)]
    config = SitemapConfig(base_url="https://example.com", sections={"p": lambda: iter(urls)})
    middleware = WSGISitemapMiddleware(lambda e, s: [], config=config, portal=portal)
    crossings = _counted(portal, monkeypatch)
    start = threading.Barrier(8)
    bodies: list[PortalBody] = []

    def get(_: int) -> bytes:
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/sitemap-p-1.xml", "SCRIPT_NAME": ""}
        start.wait()
        body = middleware(environ, lambda status, headers, exc_info=None: lambda data: None)
        assert isinstance(body, PortalBody)
        bodies.append(body)
        try:
            chunks = list(body)
        finally:
            body.close()
        return b"".join(chunks)

    with ThreadPoolExecutor(8) as pool:
        documents = list(pool.map(get, range(8)))
    assert len(set(documents)) == 1 and len(documents[0]) > 8 * BATCH_BYTES
    assert len(page_urls(check_document(documents[0]))) == 6000
    assert sorted(set(crossings)) == ["PortalBody._pump", "SitemapCore.respond"]
    assert len(crossings) == 2 * 8, crossings
    assert all(body.wakeups <= 2 + len(documents[0]) // BATCH_BYTES for body in bodies)


def test_the_first_reader_hanging_up_does_not_fail_those_that_joined(
    portal: BlockingPortal,
) -> None:
    """The request that started a render hangs up; two that joined it read it whole."""
    provider = CountingProvider(20_000)
    config = SitemapConfig(base_url="https://example.com", sections={"p": provider})
    middleware = WSGISitemapMiddleware(lambda e, s: [], config=config, portal=portal)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/sitemap-p-1.xml", "SCRIPT_NAME": ""}

    def get() -> PortalBody:
        body = middleware(dict(environ), lambda status, headers, exc_info=None: lambda d: None)
        assert isinstance(body, PortalBody)
        return body

    first = get()
    next(iter(first))  # the render is under way
    passes = provider.iterations
    joined = [get(), get()]
    first.close()  # ... and its client hangs up
    documents = []
    for body in joined:
        documents.append(b"".join(body))
        body.close()
    assert provider.iterations == passes  # the two joined the first one's render
    assert documents[0] == documents[1] and len(documents[0]) > 4 * BATCH_BYTES
    assert len(page_urls(check_document(documents[0]))) == 20_000
