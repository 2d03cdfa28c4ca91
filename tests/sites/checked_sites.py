"""Sites for the checker: a clean one, one whose listed pages misbehave, a broken one.

``selfcheck_asgi`` / ``selfcheck_wsgi`` are importable as ``tests.sites.checked_sites:NAME`` for
``sitemap-middleware check --app`` and ``export --app``.
"""

from __future__ import annotations

import gzip
from datetime import datetime, timedelta, timezone
from functools import cache
from typing import Any

from flask import Flask, redirect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from werkzeug.http import http_date

from sitemap_middleware import (
    Alternate,
    ASGISitemapMiddleware,
    SitemapConfig,
    SitemapEntry,
    WSGISitemapMiddleware,
)
from tests.harness.providers import CountingProvider

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def clean_sections(base: str) -> dict[str, Any]:
    """Reciprocal hreflang pairs, distinct lastmods, two pages of products."""
    pairs = []
    for n in range(3):
        en, de = f"/en/{n}", f"/de/{n}"
        links = [Alternate("en", en), Alternate("de", de), Alternate("x-default", en)]
        pairs += [
            SitemapEntry(
                en, lastmod=datetime(2024, 1, 1 + n, tzinfo=timezone.utc), alternates=links
            ),
            SitemapEntry(
                de, lastmod=datetime(2024, 2, 1 + n, tzinfo=timezone.utc), alternates=links
            ),
        ]
    return {"pages": pairs, "products": CountingProvider(1500, host=base)}


def _page(title: str, head: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>{title}</title>{head}</head><body>{title}</body></html>"
    )


# -- the self-check app: listed pages with the problems Search Console reports ----------

LISTED = ["/ok", "/moved", "/missing", "/hidden", "/meta-hidden", "/copy", "/relative-canonical"]
SELFCHECK_CONFIG = SitemapConfig(
    base_url="https://shop.example", sections={"pages": LISTED}, indexnow_key="selfcheck-key-01"
)


async def _ok(request: Request) -> HTMLResponse:
    return HTMLResponse(_page("ok", f'<link rel="canonical" href="{request.url}">'))


async def _moved(request: Request) -> RedirectResponse:
    return RedirectResponse("/ok", 301)


async def _hidden(request: Request) -> HTMLResponse:
    return HTMLResponse(_page("hidden"), headers={"X-Robots-Tag": "googlebot: noindex, nofollow"})


async def _meta_hidden(request: Request) -> HTMLResponse:
    return HTMLResponse(_page("meta", '<meta name="robots" content="noindex,follow">'))


async def _copy(request: Request) -> HTMLResponse:
    return HTMLResponse(_page("copy", '<link rel="canonical" href="https://shop.example/ok">'))


async def _relative(request: Request) -> HTMLResponse:
    return HTMLResponse(_page("rel", '<link rel="canonical" href="/relative-canonical">'))


_selfcheck = Starlette(
    routes=[
        Route("/ok", _ok),
        Route("/moved", _moved),
        Route("/hidden", _hidden),
        Route("/meta-hidden", _meta_hidden),
        Route("/copy", _copy),
        Route("/relative-canonical", _relative),
    ]
)
_selfcheck.add_middleware(ASGISitemapMiddleware, config=SELFCHECK_CONFIG)
selfcheck_asgi = _selfcheck

selfcheck_flask = Flask("selfcheck")


@selfcheck_flask.get("/ok")
def _flask_ok() -> str:
    return _page("ok", '<link rel="canonical" href="https://shop.example/ok">')


@selfcheck_flask.get("/moved")
def _flask_moved() -> Any:
    return redirect("/ok", 301)


@selfcheck_flask.get("/hidden")
def _flask_hidden() -> Any:
    return _page("hidden"), 200, {"X-Robots-Tag": "noindex"}


@selfcheck_flask.get("/meta-hidden")
def _flask_meta() -> str:
    return _page("meta", '<META NAME="googlebot" CONTENT="NOINDEX">')


@selfcheck_flask.get("/copy")
def _flask_copy() -> str:
    return _page("copy", '<link rel="canonical" href="/ok">')


@selfcheck_flask.get("/relative-canonical")
def _flask_relative() -> str:
    return _page("rel", '<link rel="canonical" href="/relative-canonical">')


selfcheck_flask.wsgi_app = WSGISitemapMiddleware(  # type: ignore[method-assign]
    selfcheck_flask.wsgi_app, config=SELFCHECK_CONFIG
)
selfcheck_wsgi = selfcheck_flask


# -- the broken site: every rule the checker knows, broken once --------------------------


@cache
def _bomb() -> bytes:
    """60 MB of zeros in ~60 KB of gzip: more than any sitemap may be."""
    return gzip.compress(b"\0" * 60_000_000, 1)


def _urlset(urls: list[str], extra_ns: str = "") -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        + extra_ns
        + ">\n"
        + "".join(urls)
        + "</urlset>\n"
    )


def _url(loc: str, lastmod: str | None = None, links: tuple[tuple[str, str], ...] = ()) -> str:
    parts = [f"<loc>{loc}</loc>"]
    if lastmod is not None:
        parts.append(f"<lastmod>{lastmod}</lastmod>")
    parts += [
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{href}"/>' for lang, href in links
    ]
    return "<url>" + "".join(parts) + "</url>\n"


def broken_app(base: str) -> Starlette:
    """A site whose robots.txt, index and sitemaps break every rule once (served at ``base``)."""
    xhtml = ' xmlns:xhtml="http://www.w3.org/1999/xhtml"'
    hour_ago = NOW - timedelta(hours=1)
    a_xml = _urlset(
        [
            _url(f"{base}/p1", "2024-06-01", (("en", f"{base}/p1"), ("de", f"{base}/p2"))),
            _url(f"{base}/p2", "2024-06-02", (("de", f"{base}/p2"), ("fr", f"{base}/p3"))),
            _url(f"{base}/p4", "2023-06-01", (("en", f"{base}/p1"),)),
            _url(f"{base}/private/x", "2023-01-01"),
            _url("https://elsewhere.example/page", "2023-01-02"),
            _url(f"{base}/future", (NOW + timedelta(days=2)).isoformat()),
            _url(f"{base}/recent", (NOW - timedelta(minutes=30)).isoformat()),
            _url(f"{base}/after-doc", "2024-03-01"),
            _url(f"{base}/bad-date", "yesterday"),
            _url(f"{base}/caf\u00e9", "2023-01-03"),
            _url(f"{base}/" + "x" * 2100, "2023-01-04"),
            _url(f"{base}/dup", "2023-01-05"),
        ],
        xhtml,
    )
    b_xml = _urlset([_url(f"{base}/{p}", "2024-02-02") for p in ("dup", "b1", "b2")])
    c_xml = _urlset([_url(f"{base}/c1", "2024-03-03")])
    many = _urlset([f"<url><loc>{base}/m/{i}</loc></url>\n" for i in range(50_001)])
    index = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"<sitemap><loc>{base}/a.xml</loc><lastmod>2024-01-01</lastmod></sitemap>\n"
        f"<sitemap><loc>{base}/b.xml</loc></sitemap>\n"
        f"<sitemap><loc>{base}/c.xml</loc></sitemap>\n"
        f"<sitemap><loc>{base}/nested-index.xml</loc></sitemap>\n"
        "<sitemap><loc>https://elsewhere.example/s.xml</loc></sitemap>\n"
        "</sitemapindex>\n"
    )
    nested = index.replace("</sitemapindex>", "").split("\n")[0:3]
    robots = "\n".join(
        [
            "User-agent: *",
            "Disallow: /private/",
            "Sitemap: /relative.xml",
            *(
                f"Sitemap: {base}/{name}"
                for name in (
                    "sitemap_index.xml",
                    "malformed.xml",
                    "missing.xml",
                    "wrong-root.xml",
                    "bomb.xml.gz",
                    "many.xml.gz",
                    "empty.xml",
                )
            ),
        ]
    )

    def xml(body: str, **headers: str) -> Response:
        return Response(body, media_type="application/xml", headers=headers)

    async def a(request: Request) -> Response:
        # Server clock an hour behind; Last-Modified older than what it lists; no 304.
        return xml(
            a_xml, Date=http_date(hour_ago), **{"Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"}
        )

    async def b(request: Request) -> Response:
        # gzip to everyone, no Vary; HEAD says text/plain; ETag but never a 304; text/html.
        content_type = "text/plain" if request.method == "HEAD" else "text/html"
        body = b"" if request.method == "HEAD" else gzip.compress(b_xml.encode())
        headers = {"Content-Encoding": "gzip", "ETag": '"b1"', "Content-Type": content_type}
        return Response(body, headers=headers)

    async def c(request: Request) -> Response:
        # Negotiates gzip, but without Vary; honest ETag and 304.
        headers = {"ETag": '"c1"', "Content-Type": "application/xml"}
        if request.headers.get("if-none-match") == '"c1"':
            return Response(status_code=304, headers=headers)
        body = c_xml.encode()
        if "gzip" in request.headers.get("accept-encoding", ""):
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        return Response(body, headers=headers)

    routes = [
        Route("/robots.txt", lambda r: PlainTextResponse(robots)),
        Route("/sitemap_index.xml", lambda r: xml(index)),
        Route("/nested-index.xml", lambda r: xml("\n".join(nested) + "\n</sitemapindex>\n")),
        Route("/a.xml", a),
        Route("/b.xml", b, methods=["GET", "HEAD"]),
        Route("/c.xml", c),
        Route("/malformed.xml", lambda r: xml("<urlset><url>")),
        Route("/wrong-root.xml", lambda r: xml("<html><body/></html>")),
        Route("/bomb.xml.gz", lambda r: Response(_bomb(), media_type="application/gzip")),
        Route(
            "/many.xml.gz",
            lambda r: Response(gzip.compress(many.encode(), 1), media_type="application/gzip"),
        ),
        Route("/empty.xml", lambda r: xml(_urlset([]))),
    ]
    return Starlette(routes=routes)
