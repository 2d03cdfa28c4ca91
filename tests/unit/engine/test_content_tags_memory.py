"""Content ETags and memory: pages over the cap do not buffer the cap per request."""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from sitemap_middleware import Renders
from sitemap_middleware._engine.core import RequestInfo
from tests.harness.core import collect, fetch, header, make_core

pytestmark = pytest.mark.anyio

CAP = 256 * 1024
CONCURRENT = 16


class Unversioned:
    """About 600 KiB of page: more than CAP; cannot tell its freshness."""

    def __init__(self) -> None:
        self.reads = 0
        self.yielded = 0

    async def entries(self) -> AsyncIterator[str]:
        self.reads += 1
        for i in range(10_000):
            if i % 100 == 0:
                await anyio.sleep(0)  # a database hands over rows in batches
            self.yielded += 1
            yield f"/products/{i:06d}/a-fairly-long-product-name"


async def _peak_of_concurrent_requests(
    render: bool,
) -> tuple[int, Unversioned, list[int], list[str | None]]:
    """Peak traced memory while CONCURRENT requests stream the page, as a server sends it."""
    provider = Unversioned()
    options: dict[str, Any] = {"renders": Renders(etag="content", max_bytes=CAP)} if render else {}
    core = make_core({"p": provider}, **options)
    sizes: list[int] = []
    tags: list[str | None] = []

    async def one() -> None:  # as a server does: send each chunk, keep none
        request = _request()
        target = core.route(request)
        assert target is not None
        reply = await core.respond(target, request)
        assert reply.body is not None
        size = 0
        async for chunk in reply.body:
            size += len(chunk)
            await anyio.sleep(0)  # other requests run between chunks, as on a server
        sizes.append(size)
        tags.append(header(reply, "ETag"))

    tracemalloc.start()
    try:
        async with anyio.create_task_group() as group:
            for _ in range(CONCURRENT):
                group.start_soon(one)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, provider, sizes, tags


async def test_concurrent_requests_for_a_page_over_the_cap_buffer_it_once() -> None:
    """16 at once: the cap is buffered once, not 16 times; the rest stream as without it."""
    streaming, _, _, _ = await _peak_of_concurrent_requests(render=False)
    peak, provider, sizes, tags = await _peak_of_concurrent_requests(render=True)
    print(
        f"peak traced memory, {CONCURRENT} concurrent requests for a page over the "
        f"{CAP // 1024} KiB cap: {peak / 2**20:.1f} MiB in render mode, "
        f"{streaming / 2**20:.1f} MiB streaming without it"
    )
    assert len(set(sizes)) == 1 and sizes[0] > CAP
    assert tags == [None] * CONCURRENT  # too big to hold: no ETag from its bytes
    assert 1 <= provider.reads <= CONCURRENT  # concurrent requests may share one read
    # Was streaming + CONCURRENT * CAP: every request buffered the cap before its first byte.
    assert peak < streaming + 3 * CAP, f"{peak / 2**20:.1f} MiB"


async def test_a_page_known_too_big_streams_without_buffering() -> None:
    """Once a page was found over the cap, the next request's first bytes come at once."""
    provider = Unversioned()
    core = make_core({"p": provider}, renders=Renders(etag="content", max_bytes=CAP))
    await fetch(core, "/sitemap-p-1.xml")
    before = provider.yielded
    target = core.route(_request())
    assert target is not None
    reply = await core.respond(target, _request())
    assert reply.body is not None
    # Ready to send its status line after one batch (500 entries), not after CAP bytes.
    assert provider.yielded - before <= 1000
    first = await anext(reply.body)
    assert len(first) < CAP
    await reply.body.aclose()  # type: ignore[attr-defined]
    assert len(await collect(reply)) == 0


def _request() -> RequestInfo:
    return RequestInfo("GET", "/sitemap-p-1.xml", {"accept-encoding": "identity"})
