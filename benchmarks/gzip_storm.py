"""A cold storm of gzip requests for one document: memory beside the same storm in identity.

``python -m benchmarks.gzip_storm [--requests N] [--urls N]`` opens N concurrent replies
for ``/sitemap.xml`` of a 20,000-URL section in process (every reply open before any is
read), reads them all, and prints the process's RSS growth, peak and kept after the
storm, for identity and for gzip. Before concurrent gzip readers shared one compressor
(issue 30 item 7) each held its own zlib stream: +234 MiB for 1,000 gzip requests where
identity cost +14 MiB.
"""

from __future__ import annotations

import argparse
import gc
import os
from collections.abc import AsyncIterator

import anyio

from benchmarks.common import rss_kib
from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine.core import RequestInfo, SitemapCore


async def _urls(n: int) -> AsyncIterator[str]:
    for i in range(n):
        yield f"/products/{i}?colour=red&size={i % 7}"


async def storm(encoding: str, requests: int, urls: int) -> tuple[float, float]:
    """(peak, kept) RSS growth in MiB of ``requests`` concurrent cold replies."""
    core = SitemapCore(
        SitemapConfig(base_url="https://example.com", sections={"p": lambda: _urls(urls)})
    )
    gc.collect()
    before = rss_kib(os.getpid())
    peak = before
    opened = anyio.Event()

    async def one() -> None:
        nonlocal peak
        request = RequestInfo("GET", "/sitemap.xml", {"accept-encoding": encoding})
        target = core.route(request)
        assert target is not None
        reply = await core.respond(target, request)
        await opened.wait()
        assert reply.body is not None
        async for _ in reply.body:
            peak = max(peak, rss_kib(os.getpid()))
            await anyio.sleep(0)

    async with anyio.create_task_group() as tg:
        for _ in range(requests):
            tg.start_soon(one)
        await anyio.sleep(0.2)
        opened.set()
    await core.aclose()
    gc.collect()
    return (peak - before) / 1024, (rss_kib(os.getpid()) - before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--urls", type=int, default=20_000)
    args = parser.parse_args()
    for encoding in ("identity", "gzip"):
        peak, kept = anyio.run(storm, encoding, args.requests, args.urls)
        print(
            f"{encoding:8} {args.requests} requests: RSS peak +{peak:.0f} MiB, kept +{kept:.0f} MiB"
        )


if __name__ == "__main__":
    main()
