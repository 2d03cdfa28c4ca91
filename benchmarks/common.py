"""The shared benchmark workload and the apps that serve it."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Renders,
    SitemapConfig,
    SitemapEntry,
    WSGISitemapMiddleware,
)
from sitemap_middleware.providers import ProviderVersion

BASE_URL = "https://example.com"
START = datetime(2024, 1, 1, tzinfo=timezone.utc)


def url(i: int) -> str:
    return f"{BASE_URL}/products/{i}?ref=a&b={i}"


def lastmod(i: int) -> datetime:
    return START + timedelta(minutes=i)


def raw_items(n: int) -> list[dict[str, Any]]:
    """The workload as plain dicts and strings (what an ORM query hands over)."""
    return [
        {"loc": url(i), "lastmod": lastmod(i).isoformat(), "changefreq": "daily", "priority": 0.5}
        for i in range(n)
    ]


def built_entries(n: int) -> list[SitemapEntry]:
    return [
        SitemapEntry(url(i), lastmod=lastmod(i), changefreq="daily", priority=0.5) for i in range(n)
    ]


class GeneratedProvider:
    """n entries with count, pages and a version: a well-behaved provider.

    ``mode``: ``"built"`` holds SitemapEntry objects, ``"raw"`` plain dicts (validated
    per request), ``"lazy"`` makes dicts on the fly (for huge n).
    """

    def __init__(self, n: int, *, mode: str = "built") -> None:
        self.n = n
        self._items: list[Any] | None = (
            built_entries(n) if mode == "built" else raw_items(n) if mode == "raw" else None
        )

    async def _slice(self, start: int, stop: int) -> AsyncIterator[Any]:
        if self._items is None:
            for i in range(start, stop):
                yield {
                    "loc": url(i),
                    "lastmod": lastmod(i).isoformat(),
                    "changefreq": "daily",
                    "priority": 0.5,
                }
            return
        for item in self._items[start:stop]:
            yield item

    def entries(self) -> AsyncIterator[Any]:
        return self._slice(0, self.n)

    def page(self, offset: int, limit: int) -> AsyncIterator[Any]:
        return self._slice(offset, min(self.n, offset + limit))

    async def count(self) -> int:
        return self.n

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=f"n={self.n}", last_modified=lastmod(self.n - 1))


def config(n: int, *, page: int = 50_000, mode: str = "built", **kwargs: Any) -> SitemapConfig:
    # Render benchmarks measure rendering: stored renders would answer repeats from memory.
    # SITEMAP_BENCH_STORE_BYTES turns the in-process store on for the servers that want it.
    store_bytes = int(os.environ.get("SITEMAP_BENCH_STORE_BYTES", "0"))
    kwargs.setdefault("renders", Renders(memory_bytes=store_bytes))
    return SitemapConfig(
        base_url=BASE_URL,
        sections={"products": GeneratedProvider(n, mode=mode)},
        max_urls_per_page=page,
        **kwargs,
    )


async def _home_asgi(scope: Any, receive: Any, send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/plain")],
        }
    )
    await send({"type": "http.response.body", "body": b"home page"})


def asgi_app(n: int, page: int = 50_000, **kwargs: Any) -> ASGISitemapMiddleware:
    return ASGISitemapMiddleware(_home_asgi, config=config(n, page=page, **kwargs))


def _home_wsgi(environ: Any, start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"home page"]


def wsgi_app(n: int, page: int = 50_000, **kwargs: Any) -> WSGISitemapMiddleware:
    return WSGISitemapMiddleware(_home_wsgi, config=config(n, page=page, **kwargs))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def rss_kib(pid: int) -> int:
    """Resident set size of a process, from /proc (Linux)."""
    return _status_kib(pid, "VmRSS")


def peak_rss_kib(pid: int) -> int:
    """Peak resident set size since start (or since clear_refs was written 5)."""
    return _status_kib(pid, "VmHWM")


async def core_get(core: Any, path: str, **headers: str) -> tuple[int, bytes, Any]:
    """One request through a SitemapCore in process: status, body as sent, cache status."""
    from sitemap_middleware._engine.core import RequestInfo

    request = RequestInfo("GET", path, {k.replace("_", "-"): v for k, v in headers.items()})
    target = core.route(request)
    assert target is not None, path
    reply = await core.respond(target, request)
    body = b"".join([chunk async for chunk in reply.body]) if reply.body is not None else b""
    return reply.status, body, reply.cache


async def core_reply_headers(core: Any, path: str, **headers: str) -> dict[str, str]:
    """The headers of one GET through a SitemapCore in process (lower-case names)."""
    from sitemap_middleware._engine.core import RequestInfo

    request = RequestInfo("GET", path, {k.replace("_", "-"): v for k, v in headers.items()})
    reply = await core.respond(core.route(request), request)
    if reply.body is not None:
        async for _ in reply.body:
            pass
    return {name.lower(): value for name, value in reply.headers}


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A README table: a header row, its rule, then one row per list of cells."""
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)
