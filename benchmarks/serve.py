"""Serve a benchmark app in this process: ``python -m benchmarks.serve KIND PORT [N] [PAGE]``.

KIND: ``asgi`` (uvicorn), ``wsgi`` (werkzeug, threaded, with a Flask app), ``static-asgi``
/ ``static-wsgi`` (pre-rendered bytes: the server floor), or a peer name from peers.py.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import os
import sys
from typing import Any

#: Path answered by the asgi/wsgi benchmark apps with this process's memory figures.
MEMORY_PATH = "/__memory"


def memory_figures() -> bytes:
    """Python blocks and RSS after a full collection and a malloc_trim.

    Trimming hands freed heap pages back to the kernel, so RSS measures what is still
    allocated rather than where glibc happened to place it; allocated blocks count live
    Python objects, which a per-request leak would grow by at least one each.
    """
    gc.collect()
    libc_name = ctypes.util.find_library("c")
    if libc_name:
        ctypes.CDLL(libc_name).malloc_trim(0)
    from benchmarks.common import rss_kib

    figures = {"rss_kib": rss_kib(os.getpid()), "blocks": sys.getallocatedblocks()}
    return json.dumps(figures).encode()


def _with_memory_asgi(app: Any) -> Any:
    async def probed(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != MEMORY_PATH:
            await app(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": memory_figures()})

    return probed


def _static_asgi(body: bytes) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/xml")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return app


def _static_wsgi(body: bytes) -> Any:
    def app(environ: Any, start_response: Any) -> list[bytes]:
        start_response(
            "200 OK", [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))]
        )
        return [body]

    return app


def build(kind: str, n: int, page: int) -> tuple[str, Any]:
    from benchmarks import common, floor

    if kind == "asgi":
        return "asgi", _with_memory_asgi(common.asgi_app(n, page))
    if kind == "wsgi":
        from flask import Flask

        flask_app = Flask("bench")

        @flask_app.get("/")
        def home() -> str:
            return "home page"

        @flask_app.get(MEMORY_PATH)
        def memory() -> bytes:
            return memory_figures()

        from sitemap_middleware import WSGISitemapMiddleware

        middleware = WSGISitemapMiddleware(flask_app.wsgi_app, config=common.config(n, page=page))
        flask_app.wsgi_app = middleware  # type: ignore[method-assign]
        return "wsgi", flask_app
    body = floor.render(common.raw_items(min(n, page))).encode()
    if kind == "static-asgi":
        return "asgi", _static_asgi(body)
    if kind == "static-wsgi":
        return "wsgi", _static_wsgi(body)
    from benchmarks import peers

    return peers.app(kind, n)


def main() -> None:
    kind, port = sys.argv[1], int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 50_000
    page = int(sys.argv[4]) if len(sys.argv) > 4 else 50_000
    flavour, app = build(kind, n, page)
    print("ready", flush=True)
    if flavour == "asgi":
        import uvicorn

        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    else:
        import logging

        from werkzeug.serving import run_simple

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        run_simple("127.0.0.1", port, app, threaded=True)


if __name__ == "__main__":
    main()
