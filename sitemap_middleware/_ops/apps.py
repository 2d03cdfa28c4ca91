"""Loading ``module:app`` and asking it in-process through httpx (no network).

ASGI apps go through ``httpx.ASGITransport``, started and stopped through their lifespan
as a server would (``asgi-lifespan``): an app that opens its database or creates its
tables at startup is asked only once that ran. WSGI apps (which have no lifespan) go
through ``httpx.WSGITransport`` run in a worker thread, so a slow view never blocks the
checker's loop.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx

__all__ = ["client_for_app", "interface_of", "load_app"]

Interface = Literal["asgi", "wsgi"]


def load_app(spec: str | object) -> object:
    """Import ``module:attribute`` (``attribute`` may be dotted); clear errors for typos.

    An app object (what ``manage.py sitemap`` passes) is taken as it is.
    """
    if not isinstance(spec, str):
        return spec
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"--app must look like 'module:app', got {spec!r}")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # as uvicorn and flask do: the app is local
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"--app {spec!r}: cannot import {module_name!r}: {exc}") from None
    target: object = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(
                f"--app {spec!r}: {module_name!r} has no attribute {attribute!r}"
                + _found_at(module)
            ) from None
    if not callable(target):
        raise ValueError(f"--app {spec!r} is a {type(target).__name__}, not an ASGI/WSGI app")
    return target


def _found_at(module: object) -> str:
    """Where ``module`` was imported from, when that is not the current directory: a
    file named like a module of Python's own (``site.py``, ``test.py``) is shadowed by it."""
    path = getattr(module, "__file__", None)
    name = getattr(module, "__name__", "")
    if "." in name or not path or Path(path).resolve().is_relative_to(Path.cwd().resolve()):
        return ""
    return f" (imported from {path}: is your file shadowed by a module of that name?)"


def interface_of(app: object) -> Interface:
    """ASGI if calling it gives a coroutine (``async def __call__``), else WSGI."""
    call = app if inspect.isfunction(app) or inspect.ismethod(app) else type(app).__call__
    return "asgi" if inspect.iscoroutinefunction(call) else "wsgi"


class _ThreadedWSGITransport(httpx.AsyncBaseTransport):
    """httpx's WSGITransport, run in a worker thread for an async client."""

    def __init__(self, app: Any) -> None:
        self._transport = httpx.WSGITransport(app=app)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()

        def call() -> tuple[httpx.Response, bytes]:
            response = self._transport.handle_request(request)
            try:  # the bytes as sent: a gzip body stays gzip
                return response, b"".join(response.iter_raw())
            finally:
                response.close()

        response, raw = await anyio.to_thread.run_sync(call)
        return httpx.Response(
            response.status_code, headers=response.headers, stream=_Raw(raw), request=request
        )


class _Raw(httpx.AsyncByteStream):
    """A body already in memory, streamed once (``content=`` would mark it read)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._data


#: Seconds an app's lifespan startup or shutdown may take (a server's default is similar).
LIFESPAN_TIMEOUT = 60.0


@asynccontextmanager
async def client_for_app(
    app: object,
    interface: Interface | None = None,
    *,
    base_url: str = "http://localhost",
    timeout: float | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """An ``httpx.AsyncClient`` whose requests the app answers in-process (redirects kept).

    An ASGI app runs its lifespan around the client's use; a startup that fails raises
    ``ValueError`` naming the error (the CLI's exit status 2). An app without lifespan
    support is asked as it is.
    """
    kind = interface or interface_of(app)
    client_timeout = httpx.Timeout(timeout) if timeout is not None else httpx.Timeout(5.0)
    if kind == "wsgi":
        async with httpx.AsyncClient(
            transport=_ThreadedWSGITransport(app),
            base_url=base_url,
            follow_redirects=False,
            timeout=client_timeout,
        ) as client:
            yield client
        return
    async with (
        _lifespan(app) as started,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=started),
            base_url=base_url,
            follow_redirects=False,
            timeout=client_timeout,
        ) as client,
    ):
        yield client


class _NoLifespan(Exception):
    """The app returned from the lifespan scope without reading it."""


def _returning_is_unsupported(app: Any) -> Any:
    """``app``, where returning from the lifespan scope without calling ``receive()``
    (``if scope["type"] != "http": return``) means no lifespan support, as uvicorn takes
    it; asgi-lifespan would wait for a startup that never comes."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        received = False

        async def tracking() -> Any:
            nonlocal received
            received = True
            return await receive()

        await app(scope, tracking, send)
        if scope.get("type") == "lifespan" and not received:
            raise _NoLifespan

    return wrapped


@asynccontextmanager
async def _lifespan(app: Any) -> AsyncIterator[Any]:
    from asgi_lifespan import LifespanManager, LifespanNotSupported

    manager = LifespanManager(
        _returning_is_unsupported(app),
        startup_timeout=LIFESPAN_TIMEOUT,
        shutdown_timeout=LIFESPAN_TIMEOUT,
    )
    try:
        await manager.__aenter__()
    except LifespanNotSupported:
        yield app
        return
    except Exception as exc:
        raise ValueError(f"the app's startup failed: {type(exc).__name__}: {exc}") from exc
    try:
        yield manager.app
    except BaseException as exc:
        await manager.__aexit__(type(exc), exc, exc.__traceback__)
        raise
    await manager.__aexit__(None, None, None)
