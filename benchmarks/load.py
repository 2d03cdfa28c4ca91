"""Bounded load test against a real server: pages, 304s and pass-through, concurrently.

``python -m benchmarks.load [asgi|wsgi] [requests] [concurrency]`` prints the figures.
The slow-marked test in tests/integration runs it and asserts zero errors, correct
bodies and RSS back near its baseline.
"""

from __future__ import annotations

import json
import random
import sys
import time
from dataclasses import asdict, dataclass
from itertools import pairwise

import anyio
import httpx

from benchmarks.serve import MEMORY_PATH
from benchmarks.server import running

SECTION_SIZE = 20_000
PAGE_SIZE = 1_000


@dataclass
class LoadResult:
    kind: str
    requests: int
    concurrency: int
    errors: int
    wrong_bodies: int
    #: Each error as "job path: ExceptionType: message" (the first 20), for the report.
    error_kinds: list[str]
    statuses: dict[int, int]
    seconds: float
    requests_per_second: float
    rss_baseline_kib: int
    rss_after_kib: int
    #: Growth over each of two measured rounds of ``requests``; a per-request leak grows
    #: both, a one-off high-water mark (thread stacks at peak concurrency) only one.
    rss_growth_kib_per_round: list[int]
    python_blocks_growth_per_round: list[int]
    #: The smaller round's growth: what a leak of every request cannot stay under.
    rss_growth_kib: int
    python_blocks_growth: int


def _memory(url: str) -> dict[str, int]:
    figures: dict[str, int] = httpx.get(url + MEMORY_PATH, timeout=30).json()
    return figures


async def _run(
    url: str, requests: int, concurrency: int, seed: int
) -> tuple[list[str], int, dict[int, int]]:
    rng = random.Random(seed)
    errors: list[str] = []
    wrong = 0
    statuses: dict[int, int] = {}
    # The client must drop an idle connection before the server does: httpx keeps one 5 s
    # and uvicorn closes one after 5 s idle, so a request written on a connection the
    # server is closing that instant was reset (ReadError('') once in ~10,000 requests on
    # a loaded machine). httpcore reuses the first idle connection, so the last ones of
    # a 200-connection pool do sit idle that long. RFC 9112 9.3.1: closing is either side's.
    limits = httpx.Limits(
        max_connections=concurrency, max_keepalive_connections=concurrency, keepalive_expiry=1.0
    )
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        etags = {}
        for page in range(1, SECTION_SIZE // PAGE_SIZE + 1):
            etags[page] = (await client.get(f"/sitemap-products-{page}.xml")).headers["etag"]
        jobs = [rng.choice(("page", "conditional", "app")) for _ in range(requests)]
        send, receive = anyio.create_memory_object_stream[str](requests)
        for job in jobs:
            send.send_nowait(job)
        send.close()

        async def worker() -> None:
            nonlocal wrong
            async for job in receive:
                page = rng.randint(1, SECTION_SIZE // PAGE_SIZE)
                try:
                    if job == "page":
                        response = await client.get(f"/sitemap-products-{page}.xml")
                        ok = (
                            response.status_code == 200
                            and response.content.count(b"<url>") == PAGE_SIZE
                        )
                        ok = ok and response.content.endswith(b"</urlset>\n")
                    elif job == "conditional":
                        response = await client.get(
                            f"/sitemap-products-{page}.xml", headers={"If-None-Match": etags[page]}
                        )
                        ok = response.status_code == 304 and response.content == b""
                    else:
                        response = await client.get("/")
                        ok = response.status_code == 200 and response.content == b"home page"
                    statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                    wrong += not ok
                except httpx.HTTPError as exc:
                    errors.append(f"{job} page {page}: {type(exc).__name__}: {exc!r}")

        with receive:
            async with anyio.create_task_group() as group:
                for _ in range(concurrency):
                    group.start_soon(worker)
    return errors, wrong, statuses


def run_load(
    kind: str = "asgi", requests: int = 10_000, concurrency: int = 200, warmup: int = 2_000
) -> LoadResult:
    """Warm up, then run the load twice, taking the server's memory figures around each.

    The figures come from the server itself after ``gc.collect()`` and ``malloc_trim(0)``
    (see benchmarks/serve.py), so RSS reflects live allocations rather than allocator
    placement, and Python's allocated-block count shows any per-request object leak.
    """
    # Two malloc arenas, as threaded Python servers are usually run: fewer places for
    # freed memory to sit unreturned between the measurements.
    with running(kind, SECTION_SIZE, PAGE_SIZE, env={"MALLOC_ARENA_MAX": "2"}) as server:
        anyio.run(_run, server.url, warmup, concurrency, 1)
        readings = [_memory(server.url)]
        errors: list[str] = []
        wrong = 0
        statuses: dict[int, int] = {}
        seconds = 0.0
        for seed in (2, 3):
            started = time.perf_counter()
            round_errors, round_wrong, round_statuses = anyio.run(
                _run, server.url, requests, concurrency, seed
            )
            seconds += time.perf_counter() - started
            errors += round_errors
            wrong += round_wrong
            for status, count in round_statuses.items():
                statuses[status] = statuses.get(status, 0) + count
            time.sleep(0.5)  # let finished connection threads exit
            readings.append(_memory(server.url))
    rss = [after["rss_kib"] - before["rss_kib"] for before, after in pairwise(readings)]
    blocks = [after["blocks"] - before["blocks"] for before, after in pairwise(readings)]
    return LoadResult(
        kind,
        2 * requests,
        concurrency,
        len(errors),
        wrong,
        errors[:20],
        statuses,
        round(seconds, 2),
        round(2 * requests / seconds, 1),
        readings[0]["rss_kib"],
        readings[-1]["rss_kib"],
        rss,
        blocks,
        min(rss),
        min(blocks),
    )


if __name__ == "__main__":
    kind = sys.argv[1] if len(sys.argv) > 1 else "asgi"
    total = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    concurrency = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    print(json.dumps(asdict(run_load(kind, total, concurrency)), indent=2))
