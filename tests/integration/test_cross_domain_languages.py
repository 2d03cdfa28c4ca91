"""Languages on three hosts behind one middleware, through real servers and `check`.

example.com (en), de.example.com (de) and example.fr (fr) share one provider: each host's
sitemap lists its own language, every URL with the whole set of alternates across hosts.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from typing import Any

import anyio
import httpx
import pytest
from flask import Flask
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Languages,
    Section,
    SitemapConfig,
    Tenants,
    WSGISitemapMiddleware,
)
from sitemap_middleware._ops.apps import client_for_app
from sitemap_middleware._ops.check import CheckOptions, run_check
from sitemap_middleware._ops.fetch import Fetcher
from sitemap_middleware._ops.findings import CheckReport
from tests.harness.documents import check_document, child_urls
from tests.harness.ports import bound_socket
from tests.harness.servers import serve_uvicorn, serve_werkzeug

SITES = {"en": "https://example.com/", "de": "https://de.example.com/", "fr": "https://example.fr/"}
XHTML = "{http://www.w3.org/1999/xhtml}link"
SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def _tenants() -> Tenants:
    languages = Languages(sites=SITES, x_default="en")
    products = [f"/products/{n}" for n in range(7)]
    return Tenants(
        sites={
            url.split("/")[2]: SitemapConfig(
                base_url=url,
                sections={"products": Section(products, languages=languages)},
                max_urls_per_page=3,  # an index and three pages per host
            )
            for url in SITES.values()
        }
    )


def _asgi() -> Starlette:
    async def home(request: Any) -> PlainTextResponse:
        return PlainTextResponse("home")

    app = Starlette(routes=[Route("/", home)])
    app.add_middleware(ASGISitemapMiddleware, config=_tenants())
    return app


def _listed(get: Any, host: str) -> dict[str, list[tuple[str, str]]]:
    """loc -> alternates of every URL the host lists, through its index."""
    index = get("/sitemap.xml", host)
    found: dict[str, list[tuple[str, str]]] = {}
    for child in child_urls(check_document(index)):
        assert child.startswith(f"https://{host}/"), child
        page = get(child.removeprefix(f"https://{host}"), host)
        check_document(page)  # XSD-valid
        for url in ET.fromstring(page).iter(f"{SM}url"):
            loc = url.findtext(f"{SM}loc") or ""
            assert loc not in found
            found[loc] = [
                (link.get("hreflang") or "", link.get("href") or "") for link in url.iter(XHTML)
            ]
    return found


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_three_hosts_list_their_language_through_a_server(
    server: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Three Host headers, one server: each lists its 7 URLs, each URL names all three
    hosts and x-default; nothing logged at WARNING or above."""
    if server == "uvicorn":
        context = serve_uvicorn(_asgi(), bound_socket())
    else:
        flask = Flask("languages")
        flask.wsgi_app = WSGISitemapMiddleware(flask.wsgi_app, config=_tenants())  # type: ignore[method-assign]
        context = serve_werkzeug(flask, bound_socket())
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"), context as base:

        def get(path: str, host: str) -> bytes:
            response = httpx.get(f"{base}{path}", headers={"Host": host}, timeout=10)
            assert response.status_code == 200, response.text
            return response.content

        for site in SITES.values():
            listed = _listed(get, site.split("/")[2])
            assert sorted(listed) == sorted(f"{site}products/{n}" for n in range(7))
            for loc, links in listed.items():
                path = loc.split("/", 3)[3]
                assert links == [
                    *((lang, f"{url}{path}") for lang, url in SITES.items()),
                    ("x-default", f"https://example.com/{path}"),
                ]
    assert [r for r in caplog.records if r.name.startswith("sitemap_middleware")] == []


def _check(start: str) -> CheckReport:
    async def main() -> CheckReport:
        async with client_for_app(_asgi()) as client:
            return await run_check(start, Fetcher(client, rate=0), CheckOptions(http_checks=False))

    return anyio.run(main)


@pytest.mark.parametrize("site", list(SITES.values()))
def test_check_of_each_host_finds_nothing_and_notes_the_other_hosts(site: str) -> None:
    """`check` of one host: no error, no warning (alternates may cross hosts); a note says
    the other hosts' reciprocity was not checked."""
    report = _check(site)
    assert report.count("error") == 0 and report.count("warning") == 0, report.format_text()
    assert report.urls == 7
    others = ", ".join(sorted(url.rstrip("/") for url in SITES.values() if url != site))
    notes = [note for note in report.notes if "other hosts" in note]
    assert notes == [
        f"14 hreflang alternates point at other hosts ({others}): allowed, but their "
        "reciprocity was not checked; check those hosts' sitemaps too"
    ]
