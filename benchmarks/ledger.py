"""What the content ledger costs: a section rendered with and without it.

``python -m benchmarks.ledger [--n 50000] [--repeats 5] [--json PATH]``

A section of N dicts (loc, lastmod, priority; a ``digest`` key for ``source="digest"``)
from a generator without a version, so every request plans and renders it again
(``Renders(memory_bytes=0, plan_ttl=0)``), is served as ``/sitemap.xml`` through the
ASGI middleware in process: without a ledger, with ``Ledger()`` (``source="fields"``)
and with ``Ledger(source="digest")``. For each, the first request of a fresh app (every
URL's record is made) and a steady one (the records exist and the content is the same:
looked up, none changed) are timed, best of ``--repeats``; the ratios are to the same
request without a ledger. ``Ledger(source="guard")`` costs what ``"digest"`` does at
render time (its digests come from the guard's verdicts), plus the probes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from benchmarks.run import asgi_request
from sitemap_middleware import ASGISitemapMiddleware, Ledger, Renders, SitemapConfig

START = datetime(2024, 1, 1, tzinfo=timezone.utc)
CASES: dict[str, Ledger | None] = {
    "no ledger": None,
    "fields": Ledger(),
    "digest": Ledger(source="digest"),
}


class Generated:
    """An unversioned section over a list (each request reads it all again)."""

    def __init__(self, raw: list[dict[str, Any]]) -> None:
        self.raw = raw

    async def entries(self) -> AsyncIterator[dict[str, Any]]:
        for item in self.raw:
            yield item


def items(n: int, digests: bool) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        item: dict[str, Any] = {
            "loc": f"https://example.com/products/{i}",
            "lastmod": (START + timedelta(minutes=i)).isoformat(),
            "priority": 0.5,
        }
        if digests:
            item["digest"] = f"rev-{i}"
        out.append(item)
    return out


async def _home(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def _app(raw: list[dict[str, Any]], ledger: Ledger | None) -> ASGISitemapMiddleware:
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": Generated(raw)},
        renders=Renders(memory_bytes=0, plan_ttl=0),
        ledger=ledger,
    )
    return ASGISitemapMiddleware(_home, config=config)


def _get(loop: asyncio.AbstractEventLoop, app: Any) -> tuple[float, int]:
    chunks: list[bytes] = []
    started = time.perf_counter()
    loop.run_until_complete(asgi_request(app, "/sitemap.xml", on_chunk=chunks.append))
    took = time.perf_counter() - started
    return took, b"".join(chunks).count(b"<url>")


def measure(n: int, repeats: int) -> list[dict[str, Any]]:
    loop = asyncio.new_event_loop()
    best: dict[tuple[str, str], float] = {}
    try:
        for _ in range(repeats):  # the cases in alternation: drift hits each alike
            for name, ledger in CASES.items():
                raw = items(n, digests=ledger is not None and ledger.source == "digest")
                app = _app(raw, ledger)
                first, listed = _get(loop, app)
                steady, again = _get(loop, app)
                assert listed == again == n, (listed, again)
                for kind, took in (("first", first), ("steady", steady)):
                    key = (name, kind)
                    best[key] = min(best.get(key, took), took)
    finally:
        loop.close()
    rows = []
    for name in CASES:
        row: dict[str, Any] = {"case": name, "urls": n}
        for kind in ("first", "steady"):
            took = best[name, kind]
            row[f"{kind}_ms"] = round(took * 1000, 1)
            row[f"{kind}_x_off"] = round(took / best["no ledger", kind], 2)
            row[f"{kind}_us_per_url_over_off"] = round(
                (took - best["no ledger", kind]) / n * 1e6, 2
            )
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = measure(args.n, args.repeats)
    print(f"/sitemap.xml of {args.n:,} URLs, planned and rendered; best of {args.repeats}")
    print("| ledger | first ms | × none | µs/URL more | steady ms | × none | µs/URL more |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['case']} | {r['first_ms']} | {r['first_x_off']}× | "
            f"{r['first_us_per_url_over_off']} | {r['steady_ms']} | {r['steady_x_off']}× | "
            f"{r['steady_us_per_url_over_off']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
