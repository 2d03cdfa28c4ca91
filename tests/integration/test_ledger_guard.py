"""The content ledger dated by the pages the guard fetches, through real servers (issue
27, item 5, ``Ledger(source="guard")``): a page whose body changes while its provider's
lastmod does not gets a new lastmod; a provider lastmod that moves while the page does
not is held. uvicorn (ASGI) and werkzeug (WSGI): each adapter digests the whole body."""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from flask import Flask
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Guard,
    Ledger,
    SitemapConfig,
    WSGISitemapMiddleware,
)
from sitemap_middleware.providers import ProviderVersion
from tests.harness.ports import bound_socket
from tests.harness.servers import serve_uvicorn, serve_werkzeug

BASE = "https://example.com"
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
#: Polls of the sitemap while the background probes run (each a full request).
POLLS = 500


class Site:
    """The pages (bodies by path, probes counted) and their provider (lastmods by path,
    a version token of them)."""

    def __init__(self) -> None:
        self.bodies = {"/a": "a, first edition", "/b": "b, the only edition"}
        self.lastmods: dict[str, datetime | None] = {"/a": START, "/b": None}
        self.probes: Counter[str] = Counter()
        self._lock = threading.Lock()

    def html(self, path: str, agent: str) -> str:
        if agent == "sitemap-middleware-guard":
            with self._lock:
                self.probes[path] += 1
        # long enough that a probe reads it in several chunks past the head it keeps
        return f"<!doctype html><title>{path}</title><p>{self.bodies[path]}</p>" + "x" * 70_000

    async def entries(self) -> AsyncIterator[dict[str, Any]]:
        for path, lastmod in list(self.lastmods.items()):
            yield {"loc": path} if lastmod is None else {"loc": path, "lastmod": lastmod}

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=hashlib.sha256(repr(self.lastmods).encode()).hexdigest())


def _config(site: Site) -> SitemapConfig:
    return SitemapConfig(
        base_url=BASE,
        sections={"pages": site},
        # verdicts expire at once: every request sweeps the pages into probes again
        guard=Guard(ttl=1e-6, retry=1e-6, max_probes_per_minute=None),
        ledger=Ledger(source="guard"),
    )


def _asgi(site: Site) -> AbstractContextManager[str]:
    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(site.html(request.url.path, request.headers.get("user-agent", "")))

    app = Starlette(routes=[Route(p, page) for p in site.bodies])
    return serve_uvicorn(ASGISitemapMiddleware(app, config=_config(site)), bound_socket())


def _wsgi(site: Site) -> AbstractContextManager[str]:
    app = Flask("ledgered")

    def page(path: str) -> Any:
        from flask import request

        return site.html("/" + path, request.headers.get("User-Agent", ""))

    app.add_url_rule("/<path:path>", "page", page)
    app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=_config(site))  # type: ignore[method-assign]
    return serve_werkzeug(app, bound_socket())


def _lastmods(client: httpx.Client, url: str) -> dict[str, str | None]:
    response = client.get(url + "/sitemap.xml")
    assert response.status_code == 200
    found = re.findall(r"<url><loc>([^<]+)</loc>(?:<lastmod>([^<]+)</lastmod>)?", response.text)
    return {loc[len(BASE) :]: (lastmod or None) for loc, lastmod in found}


def _until(condition: Callable[[], bool]) -> None:
    """Ask again until ``condition`` holds (each ask a real request; no clock involved)."""
    for _ in range(POLLS):
        if condition():
            return
        threading.Event().wait(0.02)
    raise AssertionError("never happened")


@pytest.fixture(params=["uvicorn", "werkzeug"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Site, str]]:
    site = Site()
    with (_asgi if request.param == "uvicorn" else _wsgi)(site) as url:
        yield site, url


def test_lastmod_moves_exactly_when_the_page_does(served: tuple[Site, str]) -> None:
    site, url = served
    seen: list[dict[str, str | None]] = []
    with httpx.Client() as client:

        def read() -> dict[str, str | None]:
            seen.append(_lastmods(client, url))
            return seen[-1]

        # before any probe: as the provider gives them; then /b is dated when first seen
        assert read() == {"/a": "2024-01-01T00:00:00+00:00", "/b": None}
        _until(lambda: read()["/b"] is not None)
        first = seen[-1]
        assert first["/a"] == "2024-01-01T00:00:00+00:00"
        # /a's page changes; its provider's lastmod does not: /a is dated anew, /b not
        seen.clear()
        site.bodies["/a"] = "a, second edition"
        _until(lambda: read()["/a"] != first["/a"])
        edited = seen[-1]
        assert edited["/a"] is not None and edited["/a"] >= first["/b"]  # type: ignore[operator]
        assert {m["/b"] for m in seen} == {first["/b"]}
        # /b's provider moves its lastmod on; its page stays: held at when it was first
        # seen, over many more probes of it; /a (unchanged since) never moves either
        seen.clear()
        site.lastmods["/b"] = datetime.now(timezone.utc) + timedelta(days=1)
        probed = site.probes["/b"]
        _until(lambda: bool(read()) and site.probes["/b"] >= probed + 5)
        assert seen[-1] == edited
        assert all(m == edited for m in seen), seen
