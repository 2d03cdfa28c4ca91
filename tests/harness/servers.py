"""Real servers on 127.0.0.1: uvicorn, hypercorn (ASGI) and werkzeug (WSGI) in a thread of
the test's process, or any server command in a process of its own (``serving``).

Run as a script (``python -m tests.harness.servers asgi|wsgi``) it serves the demo
test app in its own process and prints its port: used to compare ETags across processes.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from flask import Flask
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from werkzeug.serving import BaseWSGIServer, make_server

from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig, WSGISitemapMiddleware
from tests.harness.core import make_config
from tests.harness.ports import bound_socket

#: The repository's root: the working directory of server processes.
ROOT = Path(__file__).resolve().parents[2]


def asgi_app(config: SitemapConfig) -> Starlette:
    async def home(request: Any) -> PlainTextResponse:
        return PlainTextResponse("home page")

    app = Starlette(routes=[Route("/", home)])
    app.add_middleware(ASGISitemapMiddleware, config=config)
    return app


def wsgi_app(config: SitemapConfig) -> Flask:
    app = Flask("integration")

    @app.get("/")
    def home() -> str:
        return "home page"

    app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=config)  # type: ignore[method-assign]
    return app


@contextmanager
def serve_uvicorn(app: Any, sock: socket.socket, **options: Any) -> Iterator[str]:
    # lifespan="auto": the shutdown event lets the middleware close what it holds open.
    # log_config=None: uvicorn's records reach the root logger, so tests see them.
    # options: more of uvicorn.Config's (forwarded_allow_ips, ...).
    server = uvicorn.Server(uvicorn.Config(app, lifespan="auto", log_config=None, **options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn failed to start")
        threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def serve_hypercorn(app: Any, sock: socket.socket) -> Iterator[str]:
    import asyncio
    import logging

    from hypercorn.asyncio import serve as hypercorn_serve
    from hypercorn.config import Config

    port = sock.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # hypercorn takes the reserved socket over
    config.errorlog = logging.getLogger("hypercorn.error")  # to the root logger, as is
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    def run() -> None:
        loop.run_until_complete(hypercorn_serve(app, config, shutdown_trigger=stop.wait))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    while True:  # started once it accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if not thread.is_alive():
                raise RuntimeError("hypercorn failed to start") from None
            threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()


@contextmanager
def serve_werkzeug(app: Any, sock: socket.socket) -> Iterator[str]:
    port = sock.getsockname()[1]
    sock.close()  # werkzeug binds its own; the port was only reserved to build the URL
    server: BaseWSGIServer = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        thread.join(10)


@contextmanager
def serve(server: str, config: SitemapConfig, sock: socket.socket | None = None) -> Iterator[str]:
    """``config`` behind a Starlette app (uvicorn, hypercorn) or a Flask app (werkzeug)."""
    sock = sock or bound_socket()
    if server == "uvicorn":
        with serve_uvicorn(asgi_app(config), sock) as url:
            yield url
    elif server == "hypercorn":
        with serve_hypercorn(asgi_app(config), sock) as url:
            yield url
    else:
        app = wsgi_app(config)
        try:
            with serve_werkzeug(app, sock) as url:
                yield url
        finally:
            app.wsgi_app.close()  # type: ignore[attr-defined]  # what a shutdown hook does


@dataclass
class Server:
    url: str
    pid: int


@contextmanager
def serving(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[Server]:
    """Run ``argv`` (a server that listens on 127.0.0.1:``port``) until it answers."""
    process = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})}
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "/robots.txt", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{argv[:3]} did not start serving") from None
                time.sleep(0.05)
        yield Server(url, process.pid)
    finally:
        process.terminate()
        process.wait(20)


def _standalone_sections() -> dict[str, Any]:
    from tests.harness.providers import CountingProvider

    return {"products": CountingProvider(1500), "pages": ["/", "/about"]}


if __name__ == "__main__":  # pragma: no cover - run in a subprocess by the tests
    server = "uvicorn" if sys.argv[1] == "asgi" else "werkzeug"
    config = make_config(_standalone_sections(), max_urls_per_page=1000)
    with serve(server, config) as url:
        print(url, flush=True)
        sys.stdin.read()  # serve until the test closes our stdin
