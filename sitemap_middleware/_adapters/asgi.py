"""Pure ASGI middleware (no BaseHTTPMiddleware): guard, decide, delegate."""

from __future__ import annotations

import anyio
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._config import SitemapConfig
from .._engine.core import MAX_APP_ROBOTS, READ_HEADERS, Reply, RequestInfo, SitemapCore
from .._engine.stream import logger
from .._sansio.routing import Kind

__all__ = ["ASGISitemapMiddleware"]


def request_info(method: str, path: str, headers: Headers) -> RequestInfo:
    values = {}
    for name in READ_HEADERS:
        found = headers.getlist(name)
        if found:
            values[name] = ", ".join(found)
    return RequestInfo(method.upper(), path, values)


class ASGISitemapMiddleware:
    """Serve ``/robots.txt``, ``/sitemap.xml``, the index and its pages; pass the rest on.

    Starlette / FastAPI::

        app.add_middleware(ASGISitemapMiddleware, config=SitemapConfig(
            base_url="https://example.com", sections={"pages": ["/", "/about"]},
        ))

    Any ASGI app::

        app = ASGISitemapMiddleware(app, config=config)

    Responses stream; when the client disconnects the provider's iterator is closed at
    once. On lifespan shutdown (after the app's own) it closes what the configuration
    holds open, such as a :class:`RedisRenderCache`'s connections.

    Security: URLs are built from ``config.base_url``; the ``Host`` header is read only
    when ``config.trusted_hosts`` opts in, and then only allow-listed hosts pass.

    :param app: the ASGI application to wrap.
    :param config: the :class:`SitemapConfig`.
    """

    def __init__(self, app: ASGIApp, *, config: SitemapConfig) -> None:
        if not isinstance(config, SitemapConfig):
            raise TypeError(f"config must be a SitemapConfig, got {type(config).__name__}")
        self.app = app
        self.core = SitemapCore(config)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, self._closing_on_shutdown(send))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = request_info(scope["method"], scope["path"], Headers(scope=scope))
        target = self.core.route(request)
        if target is None:
            await self.app(scope, receive, send)
            return
        if target.kind is Kind.ROBOTS:
            app_robots = None
            if self.core.config.robots_mode == "append" and request.method in ("GET", "HEAD"):
                app_robots = await self._app_robots(scope)
            reply = await self.core.respond_robots(request, app_robots)
        else:
            reply = await self.core.respond(target, request)
        await send_reply(reply, receive, send)

    def _closing_on_shutdown(self, send: Send) -> Send:
        """Close our resources on the server's loop before the app reports shutdown."""

        async def closing_send(message: Message) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                await self.core.aclose()
            await send(message)

        return closing_send

    async def _app_robots(self, scope: Scope) -> str | None:
        """The wrapped app's own robots.txt, if it serves one (GET, 200, small)."""
        status = 0
        chunks: list[bytes] = []
        size = 0

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
                if size <= MAX_APP_ROBOTS:
                    chunks.append(message.get("body", b""))

        inner = dict(scope, method="GET")
        # The app must not gzip what we are going to append to.
        inner["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]
        await self.app(inner, receive, send)
        if status != 200 or size > MAX_APP_ROBOTS:
            return None
        return b"".join(chunks).decode("utf-8", "replace")


async def send_reply(reply: Reply, receive: Receive, send: Send) -> None:
    """Send a reply, streaming its body; stop and close it if the client goes away."""
    await send(
        {
            "type": "http.response.start",
            "status": reply.status,
            "headers": [
                (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers
            ],
        }
    )
    body = reply.body
    if body is None:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    error: BaseException | None = None
    try:
        async with anyio.create_task_group() as group:

            async def cancel_on_disconnect() -> None:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        group.cancel_scope.cancel()
                        return

            group.start_soon(cancel_on_disconnect)
            try:
                async for chunk in body:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except OSError:
                # ASGI 2.4: send() raises OSError once the client is gone. Normal; stop.
                logger.debug("client disconnected mid-stream")
            except Exception as exc:  # re-raised below, outside the task group
                error = exc
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await body.aclose()  # type: ignore[attr-defined]
    if error is not None:
        # Headers are out: raising makes the server drop the connection, so the
        # truncated body can never pass for a complete sitemap.
        raise error
