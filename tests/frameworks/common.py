"""What every framework app shares: its two pages, the sitemap configuration, a mount."""

from __future__ import annotations

from datetime import datetime, timezone

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sitemap_middleware import Feed, LlmsTxt, SitemapConfig, SitemapEntry

#: Where the second instance of each site is mounted.
PREFIX = "/shop"
HOME = "<!doctype html><html><head><title>Home</title></head><body>home page</body></html>"
ABOUT = "<!doctype html><html><head><title>About</title></head><body>about page</body></html>"


def config() -> SitemapConfig:
    """Seven URLs, three a page: an index of three pages, and every other document kind."""
    products = [
        SitemapEntry(f"/products/{i}", lastmod=datetime(2024, 5, 1 + i, tzinfo=timezone.utc))
        for i in range(5)
    ]
    return SitemapConfig(
        base_url="https://example.com",
        sections={"products": products, "pages": ["/", "/about"]},
        max_urls_per_page=3,
        text_sitemaps=True,
        html=True,
        stylesheet=True,
        feeds=[Feed(name="feed.atom", sections=["products"], title="Products")],
        llms_txt=LlmsTxt(title="Example", sections={"Products": ["products"]}),
    )


def mount(
    root: ASGIApp, mounted: ASGIApp, prefix: str = PREFIX, *, mounted_lifespan: bool = True
) -> ASGIApp:
    """``mounted`` under ``prefix``, the rest to ``root``: the scope a server gives an app
    behind a prefix (``uvicorn --root-path``, ASGI's ``root_path``) for frameworks that
    have no mount of their own. The path stays whole, as ASGI requires. Both apps get
    the lifespan events, as each would from its own server, unless ``mounted_lifespan``
    is false (``mounted`` wraps the same app as ``root``)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "lifespan" and not mounted_lifespan:
            await root(scope, receive, send)
        elif scope["type"] == "lifespan":
            await _lifespans(root, mounted, scope, receive, send)
        elif scope["type"] == "http" and (path == prefix or path.startswith(prefix + "/")):
            await mounted(dict(scope, root_path=prefix), receive, send)
        else:
            await root(scope, receive, send)

    return app


async def _lifespans(
    root: ASGIApp, mounted: ASGIApp, scope: Scope, receive: Receive, send: Send
) -> None:
    """Each lifespan event goes to ``mounted`` first, then to ``root``, which answers."""
    to_mounted, mounted_receives = anyio.create_memory_object_stream[Message](1)
    mounted_sends, from_mounted = anyio.create_memory_object_stream[Message](1)

    async def root_receive() -> Message:
        message = await receive()
        await to_mounted.send(message)
        answer = await from_mounted.receive()
        if answer["type"].endswith(".failed"):
            await send(answer)
        return message

    async with anyio.create_task_group() as group:

        async def run_mounted() -> None:
            await mounted(dict(scope), mounted_receives.receive, mounted_sends.send)

        group.start_soon(run_mounted)
        await root(scope, root_receive, send)
        group.cancel_scope.cancel()
