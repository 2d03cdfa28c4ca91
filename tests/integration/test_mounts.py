"""Mounted apps and several sites through real servers (issue #15, items 1 and 2).

Mounts: Starlette ``Mount``, FastAPI sub-applications, ``uvicorn --root-path``, werkzeug's
``DispatcherMiddleware`` and gunicorn with ``SCRIPT_NAME``. Sites: one middleware, two
host names, each with its own base URL, sections and robots rules.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from flask import Flask
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Robots,
    RobotsGroup,
    SitemapConfig,
    Tenants,
    WSGISitemapMiddleware,
)
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.ports import bound_socket, free_port
from tests.harness.servers import serve_uvicorn, serve_werkzeug, serving

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment


def _shop_config() -> SitemapConfig:
    # No prefix in the configuration: the mount supplies it.
    return SitemapConfig(
        base_url="https://example.com",
        sections={
            "products": [f"/products/{i}" for i in range(5)],
            "pages": ["/", "https://example.com/elsewhere"],  # outside the mount: left out
        },
        max_urls_per_page=3,
        html=True,
    )


def _home(request: Any) -> PlainTextResponse:
    return PlainTextResponse("home")


def _check_mounted(url: str, prefix: str, outside: int = 404) -> None:
    """The documents answer under the mount and every URL in them carries the prefix."""
    root = f"https://example.com{prefix}"
    index = httpx.get(f"{url}{prefix}/sitemap.xml", timeout=10)
    assert index.status_code == 200, index.text
    children = child_urls(check_document(index.content))
    assert children == [f"{root}/sitemap-products-{n}.xml" for n in (1, 2)] + [
        f"{root}/sitemap-pages-1.xml"
    ]
    listed: list[str] = []
    for child in children:
        page = httpx.get(url + child.removeprefix("https://example.com"), timeout=10)
        assert page.status_code == 200
        listed += page_urls(check_document(page.content))
    assert sorted(listed) == sorted([f"{root}/products/{i}" for i in range(5)] + [f"{root}/"])
    _check_mounted_views(url, prefix)
    # Outside the mount the sub-app's documents do not exist.
    assert httpx.get(f"{url}/sitemap.xml", timeout=10).status_code == outside


def _check_mounted_views(url: str, prefix: str) -> None:
    """The HTML views answer under the mount; their links stay below it (#14)."""
    view_url = f"{url}{prefix}/sitemap.html"
    index = httpx.get(view_url, timeout=10)
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    hrefs = {urljoin(view_url, href) for href in re.findall(r'href="([^"]+)"', index.text)}
    pages = sorted(h for h in hrefs if h.endswith(".html"))
    assert pages == [
        f"{url}{prefix}/sitemap-{name}.html" for name in ("pages-1", "products-1", "products-2")
    ]
    page = httpx.get(pages[1], timeout=10)
    assert page.status_code == 200
    assert f'href="https://example.com{prefix}/products/0"' in page.text


def test_starlette_mount() -> None:
    """Starlette Mount('/shop'): served at /shop/sitemap.xml with /shop URLs."""
    shop = Starlette(routes=[Route("/", _home)])
    shop.add_middleware(ASGISitemapMiddleware, config=_shop_config())
    app = Starlette(routes=[Mount("/shop", app=shop)])
    with serve_uvicorn(app, bound_socket()) as url:
        _check_mounted(url, "/shop")


def test_fastapi_sub_application() -> None:
    """A FastAPI sub-application mounted with app.mount('/api/v1', sub)."""
    sub = FastAPI()
    sub.add_middleware(ASGISitemapMiddleware, config=_shop_config())
    app = FastAPI()
    app.mount("/api/v1", sub)
    with serve_uvicorn(app, bound_socket()) as url:
        _check_mounted(url, "/api/v1")


def test_uvicorn_root_path() -> None:
    """uvicorn --root-path /prefix behind a proxy that strips the prefix."""
    app = Starlette(routes=[Route("/", _home)])
    app.add_middleware(ASGISitemapMiddleware, config=_shop_config())
    sock = bound_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", root_path="/prefix"))
    import threading

    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.01)
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        # The proxy strips /prefix: the request arrives as /sitemap.xml.
        response = httpx.get(f"{url}/sitemap-pages-1.xml", timeout=10)
        assert page_urls(check_document(response.content)) == ["https://example.com/prefix/"]
        index = httpx.get(f"{url}/sitemap_index.xml", timeout=10)
        assert child_urls(check_document(index.content))[0] == (
            "https://example.com/prefix/sitemap-products-1.xml"
        )
    finally:
        server.should_exit = True
        thread.join(10)


def _plain(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not here"]


def test_werkzeug_dispatcher_middleware() -> None:
    """werkzeug DispatcherMiddleware({'/shop': app}) sets SCRIPT_NAME; nothing to repeat."""
    shop = Flask("shop")
    shop.wsgi_app = WSGISitemapMiddleware(shop.wsgi_app, config=_shop_config())  # type: ignore[method-assign]
    app = DispatcherMiddleware(_plain, {"/shop": shop})
    with serve_werkzeug(app, bound_socket()) as url:
        _check_mounted(url, "/shop")


def test_gunicorn_behind_a_prefix() -> None:
    """gunicorn with SCRIPT_NAME=/shop (a proxy forwarding /shop/... unchanged)."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "gunicorn",
        "--workers=1",
        "--worker-class=gthread",
        "--threads=2",
        f"--bind=127.0.0.1:{port}",
        "--log-level=warning",
        "tests.integration.test_mounts:gunicorn_shop",
    ]
    with serving(argv, port, {"SCRIPT_NAME": "/shop"}) as server:
        # gunicorn itself refuses paths outside SCRIPT_NAME ("Configuration problem").
        _check_mounted(server.url, "/shop", outside=500)


def _gunicorn_shop() -> Flask:
    shop = Flask("shop")
    shop.wsgi_app = WSGISitemapMiddleware(shop.wsgi_app, config=_shop_config())  # type: ignore[method-assign]
    return shop


gunicorn_shop = _gunicorn_shop()


# -- several sites -------------------------------------------------------------------------


def _tenants() -> Tenants:
    shop = SitemapConfig(
        base_url="https://shop.example",
        sections={"products": ["/p/1", "/p/2"]},
        robots=Robots(groups=[RobotsGroup(disallow=["/cart"])]),
    )

    def resolve(host: str) -> SitemapConfig | None:
        if host != "blog.example":
            return None
        # A provider that receives its tenant: the resolver builds it for the host.
        return SitemapConfig(
            base_url=f"https://{host}", sections={"posts": [f"/{host}/post/{i}" for i in (1, 2, 3)]}
        )

    return Tenants(sites={"shop.example": shop}, resolve=resolve)


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_one_middleware_serves_two_sites(server: str) -> None:
    """Each host gets its own base URL, sections, robots rules and validators; unknown → 400."""
    if server == "uvicorn":
        app: Any = Starlette(routes=[Route("/", _home)])
        app.add_middleware(ASGISitemapMiddleware, config=_tenants())
        context = serve_uvicorn(app, bound_socket())
    else:
        flask = Flask("sites")
        flask.add_url_rule("/", "home", lambda: "home")
        flask.wsgi_app = WSGISitemapMiddleware(flask.wsgi_app, config=_tenants())  # type: ignore[method-assign]
        context = serve_werkzeug(flask, bound_socket())
    with context as url:
        shop = httpx.get(f"{url}/sitemap.xml", headers={"Host": "shop.example"}, timeout=10)
        blog = httpx.get(f"{url}/sitemap.xml", headers={"Host": "blog.example:8080"}, timeout=10)
        assert page_urls(check_document(shop.content)) == [
            "https://shop.example/p/1",
            "https://shop.example/p/2",
        ]
        assert page_urls(check_document(blog.content)) == [
            f"https://blog.example/blog.example/post/{i}" for i in (1, 2, 3)
        ]
        assert shop.headers["ETag"] != blog.headers["ETag"]
        robots = httpx.get(f"{url}/robots.txt", headers={"Host": "shop.example"}, timeout=10)
        assert "Disallow: /cart" in robots.text
        assert "Sitemap: https://shop.example/sitemap.xml" in robots.text
        robots = httpx.get(f"{url}/robots.txt", headers={"Host": "blog.example"}, timeout=10)
        assert "/cart" not in robots.text and "https://blog.example/sitemap.xml" in robots.text
        unknown = httpx.get(f"{url}/sitemap.xml", headers={"Host": "evil.example"}, timeout=10)
        assert unknown.status_code == 400 and "evil" not in unknown.text
        assert httpx.get(f"{url}/", headers={"Host": "evil.example"}, timeout=10).text == "home"
