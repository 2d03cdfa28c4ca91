"""The WSGI middleware in process, checked by werkzeug's lint and wsgiref's validator."""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pytest
from flask import Flask
from werkzeug.test import Client

from sitemap_middleware import Renders, Robots, SitemapConfig, WSGISitemapMiddleware
from tests.harness.core import make_config
from tests.harness.documents import check_document, page_urls
from tests.harness.providers import CountingProvider, RecordingStore
from tests.harness.wsgi import linted_client

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment


def _app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [f"app saw {environ['PATH_INFO']}".encode()]


def _client(sections: dict[str, Any] | None = None, app: Any = _app, **kwargs: Any) -> Client:
    config = make_config(sections or {"p": ["/a"]}, **kwargs)
    wrapped = WSGISitemapMiddleware(app, config=config)
    return linted_client(wrapped)


def test_serves_sitemap_and_passes_other_paths() -> None:
    """Our paths are answered; others reach the app."""
    client = _client({"p": CountingProvider(1200)})
    response = client.get("/sitemap-p-1.xml")
    assert response.status_code == 200 and "Content-Length" not in response.headers
    assert len(page_urls(check_document(response.data))) == 1200
    assert client.get("/about").data == b"app saw /about"


def test_conditional_304_and_head_pass_lint() -> None:
    """304 carries no entity headers and HEAD has no body (LintMiddleware checks both)."""
    provider = CountingProvider(10)
    client = _client({"p": provider})
    first = client.get("/sitemap-p-1.xml", headers={"Accept-Encoding": "gzip"})
    etag = first.headers["ETag"]
    again = client.get(
        "/sitemap-p-1.xml", headers={"Accept-Encoding": "gzip", "If-None-Match": etag}
    )
    assert again.status_code == 304 and again.data == b""
    head = client.head("/sitemap-p-1.xml")
    assert head.status_code == 200 and head.data == b""
    assert provider.iterations == 1  # the GET's plan, its page written from it; HEAD: stored
    assert gzip.decompress(first.data).startswith(b"<?xml")


@pytest.mark.parametrize(
    "headers",
    [
        {"If-Modified-Since": "garbage"},
        {"If-None-Match": '"unterminated'},
        {"Accept-Encoding": "gzip;q=nope,;;"},
        {"If-None-Match": "W/", "If-Modified-Since": "Mon, 99 Foo 9999 99:99:99 GMT"},
    ],
    ids=repr,
)
def test_malformed_headers_never_cause_500(headers: dict[str, str]) -> None:
    """Malformed conditional or encoding headers count as absent."""
    assert _client().get("/sitemap.xml", headers=headers).status_code == 200


def test_close_stops_the_provider() -> None:
    """Closing the WSGI iterable early (client gone) closes the provider's generator."""
    provider = CountingProvider(50_000)
    config = SitemapConfig(base_url="https://example.com", sections={"p": provider})
    middleware = WSGISitemapMiddleware(_app, config=config)
    environ = {"REQUEST_METHOD": "HEAD", "PATH_INFO": "/sitemap-p-1.xml", "SCRIPT_NAME": ""}
    b"".join(middleware(environ, lambda status, headers, exc_info=None: lambda data: None))
    closed, yielded = provider.closed, provider.entries_yielded  # the page is planned
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/sitemap-p-1.xml", "SCRIPT_NAME": ""}
    body = middleware(environ, lambda status, headers, exc_info=None: lambda data: None)
    iterator = iter(body)
    next(iterator)
    body.close()  # type: ignore[attr-defined]
    assert provider.closed == closed + 1 and provider.entries_yielded - yielded < 50_000


def test_close_releases_the_render_store_and_it_serves_304s() -> None:
    """close() (a shutdown hook's job) closes the render store on the portal's loop."""
    cache = RecordingStore()
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": lambda: ["/a"]},
        renders=Renders(etag="content", store=cache),
    )
    middleware = WSGISitemapMiddleware(_app, config=config)
    client = linted_client(middleware)
    etag = client.get("/sitemap-p-1.xml").headers["ETag"]
    assert len(cache._items) == 1
    assert client.get("/sitemap-p-1.xml", headers={"If-None-Match": etag}).status_code == 304
    middleware.close()
    assert cache.closed == 1


def test_method_not_allowed() -> None:
    """POST to a sitemap path is 405 with Allow."""
    response = _client().post("/sitemap.xml")
    assert response.status_code == 405 and response.headers["Allow"] == "GET, HEAD"


def test_flask_wsgi_app_and_append_robots() -> None:
    """Wrapping flask_app.wsgi_app serves sitemaps beside Flask routes and keeps its robots.txt."""
    app = Flask(__name__)

    @app.get("/")
    def home() -> str:
        return "home"

    @app.get("/robots.txt")
    def robots() -> tuple[str, int, dict[str, str]]:
        return "User-agent: *\nDisallow: /admin\n", 200, {"Content-Type": "text/plain"}

    config = SitemapConfig(
        base_url="https://example.com", sections={"pages": ["/"]}, robots=Robots(mode="append")
    )
    app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=config)  # type: ignore[method-assign]
    client = app.test_client()
    assert client.get("/").text == "home"
    assert page_urls(check_document(client.get("/sitemap.xml").data)) == ["https://example.com/"]
    assert client.get("/robots.txt").text == (
        "User-agent: *\nDisallow: /admin\n\nSitemap: https://example.com/sitemap.xml\n"
    )


def test_script_name_prefix() -> None:
    """Mounted under SCRIPT_NAME, the full path (SCRIPT_NAME + PATH_INFO) is matched."""
    config = SitemapConfig(base_url="https://example.com/shop", sections={"p": ["/a"]})
    middleware = WSGISitemapMiddleware(_app, config=config)
    response = linted_client(middleware).get(
        "/sitemap.xml", environ_overrides={"SCRIPT_NAME": "/shop"}
    )
    assert page_urls(check_document(response.data)) == ["https://example.com/shop/a"]


def test_html_views_under_wsgi_lint_gzip_and_304() -> None:
    """The HTML views pass werkzeug's lint and wsgiref's validator: 200, gzip, then 304."""
    client = _client({"p": CountingProvider(30)}, html=True)
    response = client.get("/sitemap-p-1.html", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200 and response.headers["Content-Encoding"] == "gzip"
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    assert gzip.decompress(response.data).count(b'<th scope="row"') == 30
    again = client.get(
        "/sitemap-p-1.html",
        headers={"Accept-Encoding": "gzip", "If-None-Match": response.headers["ETag"]},
    )
    assert again.status_code == 304 and again.data == b""
    index = client.get("/sitemap.html")
    assert index.status_code == 200 and b'href="sitemap-p-1.html"' in index.data
