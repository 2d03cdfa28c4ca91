"""Content ETags under load: 16 concurrent requests for a page over the tagging cap.

``python -m benchmarks.render_memory`` starts uvicorn in a subprocess serving a section
without validators (``Renders(etag="content", max_bytes=8 MiB)``) whose page is ~10 MB,
over that cap, and prints the server's peak RSS growth and the time to first byte.
Before the cap was remembered per page, each request buffered 8 MiB before its first
byte (issue 12: 164 MiB peak, median TTFB 8.4 s).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx

from benchmarks.common import free_port, peak_rss_kib, rss_kib
from benchmarks.server import serving

CONCURRENT = 16
ENTRIES = 50_000
#: ~200-byte URLs: 50,000 of them make a ~10 MB page.
PAD = "p" * 160
RESULTS = Path(__file__).resolve().parent / "results" / "render_memory.json"


class Unversioned:
    """A database-like provider without validators: rows come in awaited batches."""

    async def entries(self) -> AsyncIterator[str]:
        for i in range(ENTRIES):
            if i % 500 == 0:
                await anyio.sleep(0)
            yield f"/{PAD}/{i}"


def serve(port: int) -> None:
    import uvicorn

    from sitemap_middleware import ASGISitemapMiddleware, Renders, SitemapConfig

    async def app(scope: object, receive: object, send: object) -> None:  # never reached
        raise RuntimeError("not ours")

    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": Unversioned()},
        renders=Renders(etag="content", max_bytes=8 * 1024 * 1024),
    )
    middleware = ASGISitemapMiddleware(app, config=config)
    uvicorn.run(middleware, host="127.0.0.1", port=port, log_level="warning", lifespan="off")


async def _one(client: httpx.AsyncClient, url: str) -> tuple[float, float, int]:
    started = time.perf_counter()
    first = None
    size = 0
    headers = {"Accept-Encoding": "identity"}
    async with client.stream("GET", url + "/sitemap-p-1.xml", headers=headers) as response:
        async for chunk in response.aiter_raw():
            if first is None:
                first = time.perf_counter() - started
            size += len(chunk)
    return first or 0.0, time.perf_counter() - started, size


async def _burst(url: str) -> list[tuple[float, float, int]]:
    results: list[tuple[float, float, int]] = []
    async with httpx.AsyncClient(timeout=300) as client:

        async def one() -> None:
            results.append(await _one(client, url))

        async with anyio.create_task_group() as group:
            for _ in range(CONCURRENT):
                group.start_soon(one)
    return results


def _figures(results: list[tuple[float, float, int]], growth_kib: int) -> dict[str, float]:
    firsts = [first for first, _, _ in results]
    return {
        "median_ttfb_s": round(statistics.median(firsts), 3),
        "max_ttfb_s": round(max(firsts), 3),
        "median_total_s": round(statistics.median(total for _, total, _ in results), 3),
        "peak_rss_growth_mib": round(growth_kib / 1024, 1),
    }


def measure() -> dict[str, object]:
    """A cold burst (nobody knows the page is too big yet), then a warm one."""
    port = free_port()
    argv = [sys.executable, "-m", "benchmarks.render_memory", "serve", str(port)]
    figures: dict[str, object] = {"concurrent": CONCURRENT}
    with serving(argv, port) as server:
        for name in ("cold", "warm"):
            Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # resets VmHWM
            before = rss_kib(server.pid)
            results = anyio.run(_burst, server.url)
            figures[name] = _figures(results, peak_rss_kib(server.pid) - before)
            figures["page_bytes"] = results[0][2]
    return figures


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        serve(int(sys.argv[2]))
        return
    figures = measure()
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
