"""Servers that misbehave on purpose: bodies that drip, robots.txt and sitemaps that redirect.

Served by real uvicorn in the tests. A drip sends one byte every ``DRIP_EVERY`` seconds
for ``DRIP_BYTES`` bytes: no single read ever waits long, so only a deadline on the
whole request stops a client (a per-read timeout never fires).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

DRIP_EVERY = 0.1
#: 4 s of dripping: long past the 0.3 s deadlines the tests set, short enough that a
#: client without a deadline finishes (and the test fails) instead of hanging.
DRIP_BYTES = 40


async def _drip() -> AsyncIterator[bytes]:
    for _ in range(DRIP_BYTES):
        yield b" "
        await anyio.sleep(DRIP_EVERY)


def _urlset(base: str, paths: list[str]) -> str:
    urls = "".join(f"<url><loc>{base}{path}</loc></url>" for path in paths)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
    )


@dataclass
class HostileSite:
    """``robots_hops`` redirects before robots.txt answers (it lists /index.xml).

    /index.xml lists /old-sitemap.xml, which redirects (308) to /sitemap.xml; /loop.xml
    redirects to itself; /drip.xml drips. robots.txt disallows /private/.
    """

    base: str
    robots_hops: int = 0
    index_lists_target: bool = False  # the index lists /sitemap.xml too

    def app(self) -> Starlette:
        base = self.base

        async def robots(request: Request) -> Response:
            hop = int(request.path_params.get("hop", 0))
            if hop < self.robots_hops:
                return RedirectResponse(f"/robots-hop/{hop + 1}", 301)
            return PlainTextResponse(
                f"User-agent: *\nDisallow: /private/\nSitemap: {base}/index.xml\n"
            )

        async def index(request: Request) -> Response:
            paths = ["/old-sitemap.xml"] + (["/sitemap.xml"] if self.index_lists_target else [])
            children = "".join(f"<sitemap><loc>{base}{path}</loc></sitemap>" for path in paths)
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>'
                '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"{children}</sitemapindex>"
            )
            return Response(body, media_type="application/xml")

        async def sitemap(request: Request) -> Response:
            return Response(_urlset(base, ["/a", "/private/x"]), media_type="application/xml")

        async def drip(request: Request) -> Response:
            return StreamingResponse(_drip(), media_type="application/xml")

        return Starlette(
            routes=[
                Route("/robots.txt", robots),
                Route("/robots-hop/{hop:int}", robots),
                Route("/index.xml", index),
                Route("/old-sitemap.xml", lambda r: RedirectResponse("/sitemap.xml", 308)),
                Route("/sitemap.xml", sitemap),
                Route("/loop.xml", lambda r: RedirectResponse("/loop.xml", 301)),
                Route("/drip.xml", drip),
            ]
        )


def indexnow_hostile() -> Starlette:
    """An IndexNow endpoint that drips its 200 (/drip) or throttles with junk (/junk)."""

    async def drip(request: Request) -> Response:
        await request.body()
        return StreamingResponse(_drip(), media_type="text/plain")

    async def junk(request: Request) -> Response:
        await request.body()
        value = request.query_params.get("retry_after", "\u00b2")
        return Response(b"", 429, headers={"Retry-After": value})

    return Starlette(
        routes=[Route("/drip", drip, methods=["POST"]), Route("/junk", junk, methods=["POST"])]
    )
