"""Pure ASGI middleware (no BaseHTTPMiddleware): guard, decide, delegate."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._config import SitemapConfig, Tenants
from .._engine.bodies import StoredBody
from .._engine.core import READ_HEADERS, Reply, RequestInfo
from .._engine.guard import PROBE_AGENT, PROBE_TIMEOUT, BodyDigest, Probe, ProbeAnswer
from .._engine.tenants import make_core
from .._logs import logger
from .._sansio.indexable import HEAD_BYTES
from .._sansio.robots import AppRobots, AppRobotsRequest

__all__ = ["ASGISitemapMiddleware"]

#: READ_HEADERS as ASGI names them (lower-case bytes; repeated ones joined with ", ").
_READ = frozenset(name.encode("latin-1") for name in READ_HEADERS)


def request_info(scope: Scope) -> RequestInfo:
    """The request as the core reads it: method, full decoded path, mount, our headers,
    the peer's address and the query."""
    values: dict[str, str] = {}
    for key, raw in scope["headers"]:  # one pass, whatever READ_HEADERS holds
        if key in _READ:
            name, value = key.decode("latin-1"), raw.decode("latin-1")
            values[name] = f"{values[name]}, {value}" if name in values else value
    root_path: str = scope.get("root_path", "")
    path: str = scope["path"]
    if (mounted := _stripped_mount(scope, path)) is not None:
        root_path, path = mounted
    elif root_path and not path.startswith(root_path):
        path = root_path + path  # servers and routers before ASGI's "full path" rule
    client = scope.get("client")
    query = scope.get("query_string", b"").decode("latin-1")
    return RequestInfo(scope["method"], path, values, root_path, client and client[0], query)


def _stripped_mount(scope: Scope, path: str) -> tuple[str, str] | None:
    """(mount, full path) when a router cut its mount off ``path`` but left ``raw_path``
    whole, setting no ``root_path`` (Litestar's ``is_mount``, which also appends a ``/``
    to what is left): the mount is what ``raw_path`` has before ``path``."""
    raw = scope.get("raw_path")
    if not raw:
        return None
    full = unquote(raw.split(b"?", 1)[0].decode("latin-1"))
    for tail in (path, path[:-1] if path.endswith("/") else None):
        if tail is not None and len(full) > len(tail) and full.endswith(tail):
            mount = full[: len(full) - len(tail)]
            if mount.startswith("/") and not mount.endswith("/"):
                return mount, full
            return None
    return None


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
    holds open, such as a :class:`RedisRenderStore`'s connections.

    Security: URLs are built from ``config.base_url``; the ``Host`` header is read only
    when ``config.hosts`` (:class:`TrustedHosts`) opts in, and then only allow-listed hosts pass.

    :param app: the ASGI application to wrap.
    :param config: the :class:`SitemapConfig`, or :class:`Tenants` for several sites.
    """

    def __init__(self, app: ASGIApp, *, config: SitemapConfig | Tenants) -> None:
        self.app = app
        self.core = make_core(config)
        self._template: Scope | None = None  # the latest request's scope (guard probes)
        self.core.probe_with(asgi_probe(app, lambda: self._template, PROBE_TIMEOUT))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            warming = anyio.CancelScope()  # a warm-up still planning at shutdown stops
            failed: Exception | None = None
            async with anyio.create_task_group() as group:
                try:
                    await self.app(scope, receive, self._lifespan_send(send, group, warming))
                except Exception as exc:  # raised as the app raised it, not in a group
                    failed = exc
                warming.cancel()
            if failed is not None:
                raise failed
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = request_info(scope)
        target = self.core.route(request)
        if target is None:
            await self.app(scope, receive, send)
            return
        self._template = scope
        if (ask := self.core.app_robots_request(target, request)) is None:
            reply = self.core.respond_now(target, request) or await self.core.respond(
                target, request
            )
            await send_reply(reply, receive, send)
            return
        # The app runs beside us: robots.txt is answered once the app's file is complete
        # or app_timeout has passed, whatever the app does next (a background task, a
        # worker thread no cancellation reaches). It then has app_timeout more to finish.
        async with anyio.create_task_group() as group:
            app_robots = await fetch_app_robots(self.app, scope, ask, group)
            reply = await self.core.respond(target, request, app_robots)
            await send_reply(reply, receive, send)
            group.cancel_scope.deadline = anyio.current_time() + ask.timeout

    def _lifespan_send(self, send: Send, group: TaskGroup, warming: anyio.CancelScope) -> Send:
        """Warm plans up once the app has started (``Renders(warm_up=True)``), in the
        background; close our resources on the server's loop before the app reports
        shutdown."""

        async def warm_up() -> None:
            with warming:
                await self.core.warm_up()

        async def lifespan_send(message: Message) -> None:
            if message["type"] == "lifespan.startup.complete":
                group.start_soon(warm_up)
            elif message["type"] == "lifespan.shutdown.complete":
                warming.cancel()
                await self.core.aclose()
            await send(message)

        return lifespan_send


async def fetch_app_robots(
    app: ASGIApp, scope: Scope, ask: AppRobotsRequest, group: TaskGroup
) -> AppRobots:
    """GET the wrapped app's own robots.txt, behaving like a real client (see :func:`ask_app`)."""
    extensions = scope.get("extensions") or {}
    inner = dict(
        scope,
        method="GET",
        # No pathsend/zerocopysend: we need the bytes themselves.
        extensions={k: v for k, v in extensions.items() if not k.startswith("http.response.")},
        headers=[
            (k, v)
            for k, v in scope["headers"]
            if k.decode("latin-1").lower() not in ask.drop_headers
        ],
    )
    answer = await ask_app(app, inner, ask.timeout, ask.max_bytes, group)
    if answer.status is None:
        return AppRobots.failed(answer.problem)
    return AppRobots(answer.status, answer.body)


async def ask_app(
    app: ASGIApp,
    inner: Scope,
    timeout: float,
    max_bytes: int,
    group: TaskGroup,
    whole: BodyDigest | None = None,
) -> ProbeAnswer:
    """GET ``inner`` from the app in ``group``: its status, headers and first bytes (up to
    ``max_bytes + 1``), or no status and the problem. The app robots.txt sub-request and
    the guard's probes (:func:`asgi_probe`) both ask this way; a probe reads the whole
    body into ``whole`` (its digest), keeping the first bytes only.

    The request body comes once; after that ``receive()`` waits, and answers
    ``http.disconnect`` once the response is complete or we have read enough. A
    ``receive()`` that kept answering ``http.request`` would let Starlette's disconnect
    listener spin without ever yielding, freezing the whole server (ASGI spec 2.3).
    """
    status: int | None = None
    headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []
    size = 0
    done = anyio.Event()
    asked = complete = False

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status, size, complete
        if complete:
            # What an ASGI 2.4 server does once the client is gone: stops any app,
            # even one whose body never awaits (an endless generator).
            raise OSError("sub-request: read enough")
        if message["type"] == "http.response.start":
            status = message["status"]
            headers[:] = [
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", ())
            ]
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            if size <= max_bytes:
                chunks.append(body[: max_bytes + 1 - size])
            size += len(body)
            if whole is not None:
                whole.update(body)
            enough = size > max_bytes and (whole is None or whole.full)
            if not message.get("more_body", False) or enough:
                complete = True
                done.set()
                settled.set()
        await anyio.lowlevel.checkpoint()  # lets the time limit reach an app that never awaits

    settled = anyio.Event()  # the answer is complete, or the app has returned
    failure: list[str] = []

    async def run() -> None:
        try:
            await app(inner, receive, send)
        except Exception as exc:  # the app's failure is reported as the sub-request's
            if not complete:  # (after a complete answer it is only our OSError surfacing)
                failure.append(f"{type(exc).__name__}: {exc}")
        finally:
            settled.set()

    group.start_soon(run)
    with anyio.move_on_after(timeout):
        await settled.wait()
    done.set()  # from now on the app's receive() answers http.disconnect
    if failure:
        return ProbeAnswer(None, problem=failure[0])
    if status is None or not complete:
        return ProbeAnswer(None, problem=f"no complete answer within {timeout:g} s")
    digest = whole.value() if whole is not None else None
    return ProbeAnswer(status, headers, b"".join(chunks), digest=digest)


#: What a probe's scope takes of the latest request's.
PROBE_SCOPE_KEYS = ("asgi", "http_version", "server", "state")


def asgi_probe(app: ASGIApp, template: Callable[[], Scope | None], timeout: float) -> Probe:
    """The guard's GET of one listed URL through ``app`` (a scope like the latest request's
    that reached us: its server, state and extensions, with the URL's path and host)."""

    async def probe(url: str) -> ProbeAnswer:
        parts = urlsplit(url)
        raw_path = parts.path or "/"
        latest = template() or {"asgi": {"version": "3.0"}, "http_version": "1.1"}
        # The server's and the app's (lifespan state), never the visitor's: no client,
        # and no session, user or auth an outer middleware put in the scope.
        base = {k: latest[k] for k in PROBE_SCOPE_KEYS if k in latest}
        extensions = latest.get("extensions") or {}
        inner = dict(
            base,
            type="http",
            method="GET",
            scheme=parts.scheme,
            path=unquote(raw_path),
            raw_path=raw_path.encode("ascii", "replace"),
            query_string=parts.query.encode("ascii", "replace"),
            root_path="",
            headers=[
                (b"host", parts.netloc.encode("ascii", "replace")),
                (b"accept", b"text/html,*/*;q=0.8"),
                (b"user-agent", PROBE_AGENT.encode("ascii")),
            ],
            extensions={k: v for k, v in extensions.items() if not k.startswith("http.")},
        )
        async with anyio.create_task_group() as group:
            answer = await ask_app(app, inner, timeout, HEAD_BYTES, group, BodyDigest())
            group.cancel_scope.cancel()  # the app got http.disconnect; done with it
        return answer

    return probe


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
    if isinstance(body, StoredBody):  # whole in memory: nothing to cancel if the client goes
        with contextlib.suppress(OSError):  # ASGI 2.4: the client is gone
            async for chunk in body:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
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
