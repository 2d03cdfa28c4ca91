"""WSGI middleware: drives the async core through a per-process blocking portal."""

from __future__ import annotations

import atexit
import io
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import anyio.to_thread
from anyio.from_thread import BlockingPortal

from .._config import SitemapConfig, Tenants
from .._engine.bodies import StoredBody
from .._engine.core import READ_HEADERS, RequestInfo
from .._engine.guard import PROBE_AGENT, PROBE_TIMEOUT, BodyDigest, Probe, ProbeAnswer
from .._engine.tenants import make_core
from .._sansio.indexable import HEAD_BYTES
from .._sansio.robots import AppRobots, AppRobotsRequest
from .portal import PortalBody, get_portal

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["WSGISitemapMiddleware"]

#: WSGI environ keys of the headers the core reads (CGI style: HTTP_ + upper, _ for -).
_ENVIRON_HEADERS = {name: "HTTP_" + name.upper().replace("-", "_") for name in READ_HEADERS}
#: robots.txt sub-requests (threads) that may wait for the app at once, per process.
_SUBREQUESTS = threading.BoundedSemaphore(8)
#: Guard probes given up on whose thread is still in the app, per middleware, at most.
_STUCK_PROBES = 8
#: What a probe's environ takes of the latest request's (the server's, not the visitor's).
_PROBE_ENVIRON_KEYS = frozenset(
    {"wsgi.errors", "wsgi.version", "wsgi.multithread", "wsgi.multiprocess", "wsgi.run_once"}
    | {"wsgi.file_wrapper", "SERVER_SOFTWARE", "GATEWAY_INTERFACE"}
)
#: Warm-ups under way in this process: cancelled at exit (a hanging provider would keep
#: the portal, which waits for its tasks, from stopping), forgotten in a forked child.
_WARMING: weakref.WeakSet[Future[None]] = weakref.WeakSet()


class WSGISitemapMiddleware:
    """Serve ``/robots.txt``, ``/sitemap.xml``, the index and its pages; pass the rest on.

    Flask::

        app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=SitemapConfig(
            base_url="https://example.com", sections={"pages": ["/", "/about"]},
        ))

    Providers are async; they run on one event loop per process (an anyio blocking
    portal started on first use), not on the loop of Flask's async views. Bodies stream
    in batches through the portal; when the server calls ``close()`` (client gone) the
    provider's iterator is closed. Call :meth:`close` when shutting the app down to
    release what the configuration holds open (a :class:`RedisRenderStore`'s connections).

    ``Renders(warm_up=True)``: WSGI has no start-up to hook, so every section is planned
    in the background from the first request this middleware sees (any path), once per
    process (each forked worker its own); a server's start-up hook (gunicorn's
    ``post_worker_init``) may call :meth:`warm_up` to start it before any request.

    :param app: the WSGI application to wrap.
    :param config: the :class:`SitemapConfig`, or :class:`Tenants` for several sites.
    :param portal: an anyio ``BlockingPortal`` to use instead of the per-process one.
    """

    def __init__(
        self,
        app: WSGIApplication,
        *,
        config: SitemapConfig | Tenants,
        portal: BlockingPortal | None = None,
    ) -> None:
        self.app = app
        self.core = make_core(config)
        self._portal = portal
        self._template: WSGIEnvironment | None = None  # the latest request's (guard probes)
        self.core.probe_with(wsgi_probe(app, lambda: self._template))
        self._warms = _warms_up(config)
        self._warming: tuple[int, Future[None]] | None = None  # (pid, the warm-up task)
        self._warm_lock = threading.Lock()

    def warm_up(self) -> None:
        """Plan every section in the background now (``Renders(warm_up=True)``; else
        nothing), once per process: what the first request does anyway."""
        if not self._warms:
            return
        with self._warm_lock:
            if self._warming is not None and self._warming[0] == os.getpid():
                return
            task = (self._portal or get_portal()).start_task_soon(self.core.warm_up)
            self._warming = (os.getpid(), task)
            _WARMING.add(task)

    def close(self) -> None:
        """Release held resources on the portal's loop (WSGI has no shutdown hook); a
        warm-up still planning stops."""
        warming = self._warming
        if warming is not None and warming[0] == os.getpid():
            warming[1].cancel()
        (self._portal or get_portal()).call(self.core.aclose)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if self._warms and (self._warming is None or self._warming[0] != os.getpid()):
            self.warm_up()
        root_path = _decoded(environ.get("SCRIPT_NAME", ""))
        request = RequestInfo(
            environ.get("REQUEST_METHOD", "GET"),
            root_path + _decoded(environ.get("PATH_INFO", "")),
            {k: environ[v] for k, v in _ENVIRON_HEADERS.items() if v in environ},
            root_path,
            environ.get("REMOTE_ADDR") or None,
            environ.get("QUERY_STRING", ""),
        )
        target = self.core.route(request)
        if target is None:
            return self.app(environ, start_response)
        self._template = environ
        portal = self._portal or get_portal()
        app_robots = None
        if (ask := self.core.app_robots_request(target, request)) is not None:
            app_robots = fetch_app_robots(self.app, environ, ask)
        reply = None if ask is not None else self.core.respond_now(target, request)
        if reply is None:  # not stored (a stored render answers now: no hop to the loop)
            reply = portal.call(self.core.respond, target, request, app_robots)
        start_response(_status_line(reply.status), reply.headers)
        if reply.body is None:
            return []
        if isinstance(reply.body, StoredBody):  # whole in memory: the server sends it as is
            return [reply.body.data]
        return PortalBody(portal, reply.body)


def _warms_up(config: SitemapConfig | Tenants) -> bool:
    """Whether some site of ``config`` plans at start-up (``Renders(warm_up=True)``)."""
    sites = config.sites.values() if isinstance(config, Tenants) else [config]
    return any(site.renders.warm_up for site in sites)


@atexit.register  # before the portal's own (registered first, run last): see _WARMING
def _stop_warming() -> None:
    for task in list(_WARMING):
        task.cancel()


os.register_at_fork(after_in_child=_WARMING.clear)  # (the parent's loop is not ours)


def _decoded(path: str) -> str:
    """A WSGI path as Unicode: WSGI hands over the UTF-8 bytes as latin-1 text (PEP 3333)."""
    try:
        return path.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return path  # not UTF-8: matches none of our (UTF-8) routes, passes through


def fetch_app_robots(
    app: WSGIApplication, environ: WSGIEnvironment, ask: AppRobotsRequest
) -> AppRobots:
    """GET the wrapped app's own robots.txt, bounded in time and size.

    The app runs in a thread of its own, so an app that hangs costs that thread, not
    this request: after ``ask.timeout`` robots.txt answers 503.
    """
    answer: list[AppRobots] = []
    deadline = time.monotonic() + ask.timeout
    # Each app that hangs keeps its thread: at most this many at once, then 503 at once.
    if not _SUBREQUESTS.acquire(blocking=False):
        return AppRobots.failed("too many robots.txt sub-requests are still waiting for the app")

    def run() -> None:
        try:
            answer.append(_read_app_robots(app, environ, ask, deadline))
        except Exception as exc:  # the app's failure is reported as robots.txt's 503
            answer.append(AppRobots.failed(f"{type(exc).__name__}: {exc}"))
        finally:
            _SUBREQUESTS.release()

    worker = threading.Thread(target=run, name="sitemap-app-robots", daemon=True)
    worker.start()
    worker.join(ask.timeout)
    return answer[0] if answer else AppRobots.failed(f"no answer within {ask.timeout:g} s")


def _read_app_robots(
    app: WSGIApplication, environ: WSGIEnvironment, ask: AppRobotsRequest, deadline: float
) -> AppRobots:
    inner = {
        k: v
        for k, v in environ.items()
        if not (k.startswith("HTTP_") and k[5:].lower().replace("_", "-") in ask.drop_headers)
    }
    inner["QUERY_STRING"] = ""
    answer = call_app(app, inner, ask.max_bytes, deadline, ask.timeout)
    if answer.status is None:
        return AppRobots.failed(answer.problem)
    return AppRobots(answer.status, answer.body)


def call_app(
    app: WSGIApplication,
    inner: WSGIEnvironment,
    max_bytes: int,
    deadline: float,
    timeout: float,
    gone: threading.Event | None = None,
    whole: BodyDigest | None = None,
) -> ProbeAnswer:
    """GET ``inner`` from the app in this thread: status, headers and the first bytes
    (robots.txt's sub-request and the guard's probes, :func:`wsgi_probe`; a probe reads
    the whole body into ``whole``, its digest)."""
    captured: list[str] = []
    headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []  # what the app writes with write(), then what it returns

    def start_response(
        status: str, response_headers: list[tuple[str, str]], exc_info: object = None
    ) -> object:
        captured[:] = [status]
        headers[:] = response_headers
        return chunks.append  # PEP 3333's write(): legacy apps send their body through it

    inner = dict(inner, REQUEST_METHOD="GET", CONTENT_LENGTH="0")
    inner["wsgi.input"] = io.BytesIO(b"")
    inner.pop("CONTENT_TYPE", None)
    result = app(inner, start_response)  # type: ignore[arg-type]
    size = sum(len(chunk) for chunk in chunks)
    if whole is not None:
        for chunk in chunks:
            whole.update(chunk)
    try:
        for chunk in result:
            if size <= max_bytes:
                chunks.append(chunk)
            size += len(chunk)
            if whole is not None:
                whole.update(chunk)
            if size > max_bytes and (whole is None or whole.full):
                break
            if time.monotonic() > deadline or (gone is not None and gone.is_set()):
                return ProbeAnswer(None, problem=f"no complete answer within {timeout:g} s")
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    if not captured:
        return ProbeAnswer(None, problem="the app did not call start_response")
    status = int(captured[0].split(" ", 1)[0])
    digest = whole.value() if whole is not None else None
    return ProbeAnswer(status, headers, b"".join(chunks), digest=digest)


def wsgi_probe(app: WSGIApplication, template: Callable[[], WSGIEnvironment | None]) -> Probe:
    """The guard's GET of one listed URL through ``app``, in a worker thread (an environ
    like the latest request's that reached us, with the URL's path and host). A probe the
    guard gave up on (``Guard.timeout``) keeps its thread while the app holds it: at most
    :data:`_STUCK_PROBES` such threads at once, then probes go unanswered."""
    stuck = _Stuck()

    async def probe(url: str) -> ProbeAnswer:
        parts = urlsplit(url)
        base = template() or {}
        # The server's, never the visitor's: no REMOTE_USER, REMOTE_ADDR, cookie or a
        # session an outer middleware put in the environ.
        inner: dict[str, Any] = {k: v for k, v in base.items() if k in _PROBE_ENVIRON_KEYS}
        inner.update(
            SCRIPT_NAME="",
            PATH_INFO=unquote(parts.path or "/").encode("utf-8").decode("latin-1"),
            QUERY_STRING=parts.query,
            HTTP_HOST=parts.netloc,
            HTTP_ACCEPT="text/html,*/*;q=0.8",
            HTTP_USER_AGENT=PROBE_AGENT,
            SERVER_NAME=parts.hostname or "localhost",
            SERVER_PORT=str(parts.port or (443 if parts.scheme == "https" else 80)),
            SERVER_PROTOCOL="HTTP/1.1",
        )
        inner["wsgi.url_scheme"] = parts.scheme
        inner.setdefault("wsgi.errors", sys.stderr)
        inner.setdefault("wsgi.version", (1, 0))
        inner.setdefault("wsgi.multithread", True)
        inner.setdefault("wsgi.multiprocess", False)
        inner.setdefault("wsgi.run_once", False)
        deadline = time.monotonic() + PROBE_TIMEOUT
        if stuck.full():
            return ProbeAnswer(None, problem="earlier probes are still waiting for the app")
        call = _ProbeCall(stuck)
        try:
            return await anyio.to_thread.run_sync(
                lambda: call.run(app, inner, deadline), abandon_on_cancel=True
            )
        finally:
            call.leave()

    return probe


class _Stuck:
    """How many probes the guard gave up on still hold a thread in the app."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    def full(self) -> bool:
        with self.lock:
            return self.count >= _STUCK_PROBES


class _ProbeCall:
    """One probe's thread; counted in :class:`_Stuck` from when the guard leaves it
    (its timeout) until the app lets it go, and told to stop reading the body."""

    def __init__(self, stuck: _Stuck) -> None:
        self._stuck = stuck
        self._gone = threading.Event()
        self._done = self._left = False

    def run(self, app: WSGIApplication, inner: WSGIEnvironment, deadline: float) -> ProbeAnswer:
        try:
            return call_app(
                app, inner, HEAD_BYTES, deadline, PROBE_TIMEOUT, self._gone, BodyDigest()
            )
        finally:
            with self._stuck.lock:
                self._done = True
                self._stuck.count -= self._left

    def leave(self) -> None:
        self._gone.set()
        with self._stuck.lock:
            self._left = not self._done
            self._stuck.count += self._left


def _status_line(status: int) -> str:
    return f"{status} {HTTPStatus(status).phrase}"
