"""The explain endpoint through real servers (uvicorn: ASGI, werkzeug: WSGI): the peer's
address, the query and the headers reach the core as the unit tests assume, and nothing
a client writes opens the endpoint to it: another machine, a forged Host, a forged
forwarded header all get the app's own 404.

Each server here believes any client's ``X-Forwarded-For`` (uvicorn's
``forwarded_allow_ips="*"``, werkzeug's ``ProxyFix``): a forged one becomes the peer's
address the app sees, the worst case; the endpoint must stay closed regardless.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from flask import Flask
from flask import request as flask_request
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from werkzeug.middleware.proxy_fix import ProxyFix

from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig, WSGISitemapMiddleware
from tests.harness.ports import bound_socket
from tests.harness.providers import ListProvider
from tests.harness.servers import serve_uvicorn, serve_werkzeug

PATH = "/sitemap-explain"
#: A loopback address that is not 127.0.0.1: another client, as far as the endpoint knows.
OTHER = "127.0.0.2"


def _config() -> SitemapConfig:
    pages = ListProvider(["/", "/about", {"loc": "/bad", "priority": 7}])
    return SitemapConfig(
        base_url="https://example.com", sections={"pages": pages}, explain_path=PATH
    )


def _asgi() -> Any:
    async def whoami(request: Request) -> PlainTextResponse:
        return PlainTextResponse(request.client.host if request.client else "")

    app = Starlette(routes=[Route("/whoami", whoami)])
    app.add_middleware(ASGISitemapMiddleware, config=_config())
    return app


def _wsgi() -> Flask:
    app = Flask("explain")

    @app.get("/whoami")
    def whoami() -> str:
        return flask_request.remote_addr or ""

    middleware = WSGISitemapMiddleware(app.wsgi_app, config=_config())
    app.wsgi_app = ProxyFix(middleware, x_for=1)  # type: ignore[method-assign]
    return app


@pytest.fixture(scope="module", params=["uvicorn", "werkzeug"])
def site(request: pytest.FixtureRequest) -> Iterator[str]:
    sock = bound_socket()
    if request.param == "uvicorn":
        with serve_uvicorn(_asgi(), sock, forwarded_allow_ips="*") as url:
            yield url
    else:
        app = _wsgi()
        try:
            with serve_werkzeug(app, sock) as url:
                yield url
        finally:
            app.wsgi_app.app.close()  # type: ignore[attr-defined]


@contextmanager
def _client(address: str = "127.0.0.1") -> Iterator[httpx.Client]:
    try:
        with socket.socket() as sock:
            sock.bind((address, 0))
    except OSError:
        pytest.skip(f"no {address} to connect from on this machine")
    with httpx.Client(transport=httpx.HTTPTransport(local_address=address)) as client:
        yield client


def _apps_404(client: httpx.Client, site: str) -> str:
    missing = client.get(f"{site}/no-such-page")
    assert missing.status_code == 404
    return missing.text


def test_this_machine_is_told_what_the_command_says(site: str) -> None:
    with _client() as client:
        got = client.get(f"{site}{PATH}", params=[("url", "/about"), ("url", "/bad")])
        assert got.status_code == 200, got.text
        assert got.text.splitlines()[:2] == [
            "/about",
            "  listed in sitemap-pages-1.xml (section 'pages', item 2)",
        ]
        assert "/bad\n  left out: section 'pages': invalid priority 7" in got.text
        assert got.headers["cache-control"] == "no-store"
        assert got.headers["x-robots-tag"] == "noindex"
        got = client.get(f"{site}{PATH}?url=/about", headers={"Accept": "application/json"})
        assert got.headers["content-type"] == "application/json"
        (about,) = json.loads(got.text)
        assert about["listed"] == [{"section": "pages", "file": "sitemap-pages-1.xml",
                                   "position": 1}]  # fmt: skip


def test_another_machine_gets_the_apps_404(site: str) -> None:
    with _client(OTHER) as client:
        assert client.get(f"{site}/whoami").text == OTHER
        got = client.get(f"{site}{PATH}?url=/about")
        assert (got.status_code, got.text) == (404, _apps_404(client, site))


def test_a_forged_host_gets_the_apps_404(site: str) -> None:
    """This machine, but a Host that names neither it nor the site: what a browser here
    sends for a page whose name was rebound to 127.0.0.1 (DNS rebinding)."""
    with _client() as client:
        got = client.get(f"{site}{PATH}?url=/about", headers={"Host": "evil.example"})
        assert (got.status_code, got.text) == (404, _apps_404(client, site))


@pytest.mark.parametrize(
    "forged",
    [
        {"X-Forwarded-For": "127.0.0.1"},
        {"Forwarded": "for=127.0.0.1"},
        {"X-Real-IP": "127.0.0.1"},
        {"X-Forwarded-For": "127.0.0.1", "Host": "localhost"},
    ],
)
def test_a_forged_forwarded_header_gets_the_apps_404(site: str, forged: dict[str, str]) -> None:
    with _client(OTHER) as client:
        if "X-Forwarded-For" in forged:  # the server took it for the peer's address
            assert client.get(f"{site}/whoami", headers=forged).text == "127.0.0.1"
        got = client.get(f"{site}{PATH}?url=/about", headers=forged)
        assert (got.status_code, got.text) == (404, _apps_404(client, site))


def test_a_request_a_proxy_here_relays_gets_the_apps_404(site: str) -> None:
    """A proxy on this machine connects from 127.0.0.1 for every visitor: its mark shuts
    the endpoint, whatever address it names."""
    with _client() as client:
        for relayed in ({"X-Forwarded-For": "192.0.2.9"}, {"Via": "1.1 proxy"}):
            got = client.get(f"{site}{PATH}?url=/about", headers=relayed)
            assert (got.status_code, got.text) == (404, _apps_404(client, site))
