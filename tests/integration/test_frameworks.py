"""The same middleware under every framework users run, through its real server.

Each framework's app (tests/frameworks/<name>_app.py) has its own pages (``/``,
``/about``) and is wrapped as that framework's users wrap it; a second instance of the
site is mounted under ``/shop``. One server process per framework serves both: uvicorn
for ASGI apps (Sanic's included: the middleware wraps its ASGI callable), gunicorn for
WSGI apps. The docs' "Frameworks and servers" table lists the same.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from tests.frameworks.common import PREFIX
from tests.harness.documents import (
    check_atom,
    check_document,
    child_urls,
    page_urls,
    require_schemas,
)
from tests.harness.ports import free_port

BASE = "https://example.com"
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Framework:
    server: str  # uvicorn or gunicorn
    mount: str  # how the second site is mounted (the docs' table says the same)


FRAMEWORKS = {
    "starlette": Framework("uvicorn", "Mount"),
    "fastapi": Framework("uvicorn", "app.mount (sub-application)"),
    "litestar": Framework("uvicorn", "@asgi(is_mount=True)"),
    "quart": Framework("uvicorn", "root_path"),
    "falcon_asgi": Framework("uvicorn", "root_path"),
    "sanic": Framework("uvicorn", "root_path"),
    "django_asgi": Framework("uvicorn", "root_path"),
    "flask": Framework("gunicorn", "DispatcherMiddleware (SCRIPT_NAME)"),
    "falcon_wsgi": Framework("gunicorn", "DispatcherMiddleware (SCRIPT_NAME)"),
    "django_wsgi": Framework("gunicorn", "DispatcherMiddleware (SCRIPT_NAME)"),
    "bottle": Framework("gunicorn", "Bottle.mount"),
    "pyramid": Framework("gunicorn", "DispatcherMiddleware (SCRIPT_NAME)"),
}


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(20)


def _argv(name: str, port: int) -> list[str]:
    target = f"tests.frameworks.{name}_app:app"
    if FRAMEWORKS[name].server == "uvicorn":
        # Lifespan on, so a middleware that broke the app's startup fails the start;
        # Django's ASGI handler does not speak lifespan.
        lifespan = "off" if name == "django_asgi" else "on"
        return [
            *(sys.executable, "-m", "uvicorn", f"--lifespan={lifespan}", "--log-level=warning"),
            *("--host=127.0.0.1", f"--port={port}", target),
        ]
    return [
        *(sys.executable, "-m", "gunicorn", "--workers=1", "--worker-class=gthread"),
        *("--threads=4", f"--bind=127.0.0.1:{port}", "--log-level=warning", target),
    ]


@pytest.fixture(scope="module")
def servers(request: pytest.FixtureRequest) -> Iterator[dict[str, Server]]:
    """Every selected framework's server, started at once (their imports overlap)."""
    names = {
        item.callspec.params["site"]
        for item in request.session.items
        if item.nodeid.startswith(request.node.nodeid + "::") and hasattr(item, "callspec")
    }
    started: dict[str, Server] = {}
    try:
        for name in FRAMEWORKS:
            if name in names:
                port = free_port()
                argv = _argv(name, port)
                process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL)
                started[name] = Server(f"http://127.0.0.1:{port}", process)
        yield started
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(scope="module", params=list(FRAMEWORKS))
def site(request: pytest.FixtureRequest, servers: dict[str, Server]) -> Iterator[httpx.Client]:
    """One server process per framework, and a client for it; every test below reads it."""
    server = servers[request.param]
    with httpx.Client(base_url=server.url, timeout=10) as client:
        deadline = time.monotonic() + 60
        while True:
            try:
                client.get("/robots.txt", timeout=1)
                break
            except httpx.TransportError:
                if server.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{request.param}: the server did not start") from None
                time.sleep(0.05)
        yield client
    server.stop()


def _get(site: httpx.Client, path: str, **headers: str) -> httpx.Response:
    response = site.get(path, headers=headers)
    assert response.status_code == 200, (path, response.status_code, response.text[:300])
    return response


def _type(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";")[0]


def _children(root: str) -> list[str]:
    return [f"{root}/sitemap-{page}.xml" for page in ("products-1", "products-2", "pages-1")]


def test_every_document_kind(site: httpx.Client) -> None:
    """robots.txt, sitemap.xml, the index, a page, its .xml.gz, text, HTML, XSL, feed and
    llms.txt answer 200 with their content types and parse as crawlers parse them."""
    robots = _get(site, "/robots.txt")
    assert _type(robots) == "text/plain"
    assert f"Sitemap: {BASE}/sitemap.xml" in robots.text.splitlines()
    for name in ("sitemap.xml", "sitemap_index.xml"):
        index = _get(site, f"/{name}")
        assert _type(index) == "application/xml"
        assert child_urls(check_document(index.content)) == _children(BASE)
    page = _get(site, "/sitemap-products-1.xml")
    assert _type(page) == "application/xml"
    assert page_urls(check_document(page.content)) == [f"{BASE}/products/{i}" for i in range(3)]
    assert page_urls(check_document(_get(site, "/sitemap-pages-1.xml").content)) == [
        f"{BASE}/",
        f"{BASE}/about",
    ]
    packed = _get(site, "/sitemap-products-1.xml.gz", **{"Accept-Encoding": "identity"})
    assert _type(packed) == "application/gzip" and gzip.decompress(packed.content) == page.content
    text = _get(site, "/sitemap-products-2.txt")
    assert _type(text) == "text/plain"
    assert text.text.splitlines() == [f"{BASE}/products/{i}" for i in (3, 4)]
    view = _get(site, "/sitemap.html")
    assert _type(view) == "text/html" and "sitemap-products-1.html" in view.text
    assert f"{BASE}/products/0" in _get(site, "/sitemap-products-1.html").text
    assert _type(_get(site, "/sitemap.xsl")) == "text/xsl"
    feed = _get(site, "/feed.atom")
    assert _type(feed) == "application/atom+xml"
    assert len(check_atom(feed.content).findall("{http://www.w3.org/2005/Atom}entry")) == 5
    llms = _get(site, "/llms.txt")
    assert _type(llms) == "text/markdown" and f"({BASE}/products/4)" in llms.text


def test_documents_valid_against_the_xsds(site: httpx.Client) -> None:
    """Every sitemap document, fetched through the framework, is valid against the XSDs."""
    require_schemas()  # check_document validates only when the schemas are there
    for name in ("sitemap.xml", *(url.rsplit("/", 1)[1] for url in _children(BASE))):
        check_document(_get(site, f"/{name}").content)
    check_document(_get(site, f"{PREFIX}/sitemap.xml").content)


def test_gzip_negotiation_and_304(site: httpx.Client) -> None:
    """gzip when asked (and not otherwise), Vary, and a 304 on If-None-Match."""
    url = "/sitemap-products-1.xml"
    with site.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as zipped:
        raw = b"".join(zipped.iter_raw())
    plain = site.get(url, headers={"Accept-Encoding": "identity"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert gzip.decompress(raw) == plain.content
    assert "accept-encoding" in zipped.headers["vary"].lower()
    for response in (zipped, plain):
        again = site.get(
            url,
            headers={
                "Accept-Encoding": response.headers.get("content-encoding", "identity"),
                "If-None-Match": response.headers["etag"],
            },
        )
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == response.headers["etag"]
    robots = site.get("/robots.txt")
    again = site.get("/robots.txt", headers={"If-None-Match": robots.headers["etag"]})
    assert again.status_code == 304


def test_the_apps_own_routes_pass_through(site: httpx.Client) -> None:
    """The app still answers its own pages, at the root and under the mount."""
    for path in ("/", "/about", f"{PREFIX}/about"):
        response = _get(site, path)
        assert _type(response) == "text/html"
        assert ("about page" if path.endswith("about") else "home page") in response.text
    assert site.get("/no-such-page").status_code == 404


def test_mounted_site_serves_prefixed_urls(site: httpx.Client) -> None:
    """Under the mount: the documents answer, every URL in them carries the prefix, and
    the HTML view's links stay below it."""
    root = f"{BASE}{PREFIX}"
    index = _get(site, f"{PREFIX}/sitemap.xml")
    assert child_urls(check_document(index.content)) == _children(root)
    listed: list[str] = []
    for child in _children(root):
        listed += page_urls(check_document(_get(site, child.removeprefix(BASE)).content))
    assert listed == [f"{root}/products/{i}" for i in range(5)] + [f"{root}/", f"{root}/about"]
    packed = _get(site, f"{PREFIX}/sitemap-pages-1.xml.gz", **{"Accept-Encoding": "identity"})
    assert page_urls(check_document(gzip.decompress(packed.content)))[0] == f"{root}/"
    text = _get(site, f"{PREFIX}/sitemap-pages-1.txt")
    assert text.text.splitlines() == [f"{root}/", f"{root}/about"]
    view_url = f"{str(site.base_url).rstrip('/')}{PREFIX}/sitemap.html"
    view = _get(site, view_url)
    links = {urljoin(view_url, href) for href in re.findall(r'href="([^"]+)"', view.text)}
    assert sorted(link for link in links if link.endswith(".html")) == [
        view_url.replace("sitemap.html", f"sitemap-{name}.html")
        for name in ("pages-1", "products-1", "products-2")
    ]
    feed = check_atom(_get(site, f"{PREFIX}/feed.atom").content)
    hrefs = [link.get("href") for link in feed.iter("{http://www.w3.org/2005/Atom}link")]
    assert hrefs and all(href.startswith(f"{root}/") for href in hrefs)
