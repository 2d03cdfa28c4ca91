"""The apps ``benchmarks/warm.py`` serves: ours from a warm store, and the same bytes as
static files, for uvicorn (``--factory``) and gunicorn (``module:function()``).

Environment: ``WARM_STORE`` (``memory`` or a ``redis://`` URL), ``WARM_TTL`` (seconds a
stored render answers without asking the provider; 0: the version is checked per
request), ``WARM_STATIC_DIR`` (the directory the static apps serve under ``/static``).
"""

from __future__ import annotations

import os
from typing import Any

from benchmarks.common import config

N = 50_000


def _renders() -> Any:
    from sitemap_middleware import Renders

    store = os.environ.get("WARM_STORE", "memory")
    ttl = float(os.environ.get("WARM_TTL", "3600"))
    if store == "memory":
        return Renders(ttl=ttl, memory_bytes=256 * 1024 * 1024, max_bytes=16 * 1024 * 1024)
    from sitemap_middleware.stores import RedisRenderStore

    return Renders(store=RedisRenderStore(store, timeout=5.0), ttl=ttl, max_bytes=16 * 1024 * 1024)


def _sitemap_config() -> Any:
    return config(N, page=N, renders=_renders())


async def _home_asgi(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"home"})


def _home_wsgi(environ: Any, start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"home"]


def asgi_ours() -> Any:
    from sitemap_middleware import ASGISitemapMiddleware

    return ASGISitemapMiddleware(_home_asgi, config=_sitemap_config())


def wsgi_ours() -> Any:
    from sitemap_middleware import WSGISitemapMiddleware

    return WSGISitemapMiddleware(_home_wsgi, config=_sitemap_config())


def asgi_static() -> Any:
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    static = StaticFiles(directory=os.environ["WARM_STATIC_DIR"])
    return Starlette(routes=[Mount("/static", static)])


def wsgi_static() -> Any:
    from werkzeug.middleware.shared_data import SharedDataMiddleware

    return SharedDataMiddleware(_home_wsgi, {"/static": os.environ["WARM_STATIC_DIR"]})
