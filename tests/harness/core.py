"""Building a core and asking it, in process: the request as the adapters hand it over,
the reply and its body.

``make_config``/``make_core`` are the one recipe for a site (``https://example.com`` unless
``base_url`` says otherwise); a test that needs more (a clock, a probe) builds on them.
"""

from __future__ import annotations

from typing import Any

from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine.core import Reply, RequestInfo, SitemapCore

__all__ = [
    "BASE",
    "Clock",
    "Reply",
    "RequestInfo",
    "SitemapCore",
    "collect",
    "fetch",
    "header",
    "make_config",
    "make_core",
    "revalidated_together",
]

#: The base URL of the sites tests build.
BASE = "https://example.com"


def make_config(sections: dict[str, Any], *, base_url: str = BASE, **kwargs: Any) -> SitemapConfig:
    """``SitemapConfig(base_url=..., sections=..., **kwargs)``."""
    return SitemapConfig(base_url=base_url, sections=sections, **kwargs)


def make_core(sections: dict[str, Any], *, base_url: str = BASE, **kwargs: Any) -> SitemapCore:
    """The core of :func:`make_config`'s site."""
    return SitemapCore(make_config(sections, base_url=base_url, **kwargs))


async def collect(reply: Reply) -> bytes:
    if reply.body is None:
        return b""
    return b"".join([chunk async for chunk in reply.body])


async def fetch(
    core: SitemapCore, path: str, method: str = "GET", **headers: str
) -> tuple[Reply, bytes]:
    """Route and answer one request through the core; returns the reply and its body."""
    request = RequestInfo(
        method, path, {k.replace("_", "-").lower(): v for k, v in headers.items()}
    )
    target = core.route(request)
    assert target is not None, f"{path} is not ours"
    reply = await core.respond(target, request)
    return reply, await collect(reply)


def header(reply: Reply, name: str) -> str | None:
    for key, value in reply.headers:
        if key.lower() == name.lower():
            return value
    return None


async def revalidated_together(
    core: SitemapCore, path: str, etag: str, times: int = 30
) -> list[int]:
    """The statuses of ``times`` concurrent GETs of ``path`` with If-None-Match: ``etag``."""
    import anyio

    statuses: list[int] = []

    async def revalidate() -> None:
        reply, _ = await fetch(core, path, if_none_match=etag)
        statuses.append(reply.status)

    async with anyio.create_task_group() as group:
        for _ in range(times):
            group.start_soon(revalidate)
    return statuses


class Clock:
    """A wall clock tests move by hand (``clock.now += 61``)."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


async def crawled_urls(core: SitemapCore) -> list[str]:
    """The URLs of every page ``/sitemap_index.xml`` lists, each page answering 200 and
    valid (a crawler's view of the whole site)."""
    from .documents import check_document, child_urls, page_urls

    reply, body = await fetch(core, "/sitemap_index.xml")
    assert reply.status == 200, body
    urls: list[str] = []
    for child in child_urls(check_document(body)):
        reply, page = await fetch(core, child.removeprefix(BASE))
        assert reply.status == 200, (child, page)
        urls.extend(page_urls(check_document(page)))
    return urls
