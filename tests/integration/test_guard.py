"""The indexability guard through real servers (issue 27, item 4): an app with a 404, a
redirect, a noindex header, a meta noindex and a canonical elsewhere; the guard probes
them in process, off the request path, and the sitemap leaves them out."""

from __future__ import annotations

import os
import re
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from flask import Flask, Response, redirect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.routing import Route

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Guard,
    Renders,
    SitemapConfig,
    WSGISitemapMiddleware,
)
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.ops import PrometheusObserver
from sitemap_middleware.stores import RedisRenderStore
from tests.harness.ports import bound_socket
from tests.harness.servers import serve_uvicorn, serve_werkzeug

BASE = "https://example.com"
PATHS = ["/", "/gone", "/old", "/hidden", "/meta", "/copy", "/fine"]
GOOD = [BASE + "/", BASE + "/fine"]
PAGE = "<!doctype html><html><head>{head}<title>t</title></head><body>hi</body></html>"
#: Polls of the sitemap while the background probes run (each a full request).
POLLS = 400


def _page(head: str = "") -> str:
    return PAGE.format(head=head)


class Hits:
    """Probe requests the app saw, by path (the guard's User-Agent only)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def saw(self, path: str, agent: str) -> None:
        if agent == "sitemap-middleware-guard":
            with self._lock:
                self.counts[path] += 1


def starlette_app(hits: Hits) -> Starlette:
    async def page(request: Request) -> Any:
        path = request.url.path
        hits.saw(path, request.headers.get("user-agent", ""))
        assert request.headers["host"] == "example.com"
        if path == "/gone":
            return HTMLResponse(_page(), status_code=404)
        if path == "/old":
            return RedirectResponse("/fine", status_code=301)
        if path == "/hidden":
            return HTMLResponse(_page(), headers={"X-Robots-Tag": "noindex"})
        if path == "/meta":
            return HTMLResponse(_page('<meta name="robots" content="noindex,follow">'))
        if path == "/copy":
            return HTMLResponse(_page(f'<link rel="canonical" href="{BASE}/fine">'))
        return HTMLResponse(_page(f'<link rel="canonical" href="{BASE}{path}">'))

    return Starlette(routes=[Route(p, page) for p in PATHS])


def flask_app(hits: Hits) -> Flask:
    app = Flask("guarded")

    def page(path: str = "") -> Any:
        from flask import request

        full = "/" + path
        hits.saw(full, request.headers.get("User-Agent", ""))
        if full == "/gone":
            return _page(), 404
        if full == "/old":
            return redirect("/fine", 301)
        if full == "/hidden":
            return Response(_page(), headers={"X-Robots-Tag": "noindex"})
        if full == "/meta":
            return _page('<meta name="robots" content="noindex">')
        if full == "/copy":
            return _page(f'<link rel="canonical" href="{BASE}/fine">')
        return _page()

    app.add_url_rule("/", "home", page)
    app.add_url_rule("/<path:path>", "page", page)
    return app


def _config(**kwargs: Any) -> SitemapConfig:
    guard = kwargs.pop("guard", Guard(max_probes_per_minute=None))
    return SitemapConfig(base_url=BASE, sections={"pages": PATHS}, guard=guard, **kwargs)


def _locs(client: httpx.Client, url: str) -> list[str]:
    response = client.get(url + "/sitemap.xml")
    assert response.status_code == 200
    return re.findall(r"<loc>([^<]+)</loc>", response.text)


def _until(condition: Callable[[], bool]) -> None:
    """Ask again until ``condition`` holds (each ask a real request; no clock involved)."""
    for _ in range(POLLS):
        if condition():
            return
        threading.Event().wait(0.02)
    raise AssertionError("the guard never settled")


def _settles_to_the_good_pages(url: str, client: httpx.Client | None = None) -> None:
    with httpx.Client() as own:
        client = client or own
        first = _locs(client, url)
        assert first == [BASE + p for p in PATHS]  # no response waits for a probe
        _until(lambda: _locs(client, url) == GOOD)


def test_guard_leaves_out_what_is_not_an_indexable_page_asgi() -> None:
    """uvicorn: 404, redirect, X-Robots-Tag, meta noindex and canonical elsewhere are
    left out once probed; each URL probed once; the HTML view lists them; the metrics
    count them (entries_excluded reason "guard", probes by outcome)."""
    from prometheus_client import CollectorRegistry

    hits = Hits()
    registry = CollectorRegistry()
    observer = PrometheusObserver(registry=registry)
    app = ASGISitemapMiddleware(
        starlette_app(hits), config=_config(html=True, observers=[observer])
    )
    with serve_uvicorn(app, bound_socket()) as url, httpx.Client() as client:
        _settles_to_the_good_pages(url, client)
        view = client.get(url + "/sitemap.html").text
        metrics = (
            registry.get_sample_value(
                "sitemap_entries_excluded_total", {"section": "pages", "reason": "guard"}
            ),
            registry.get_sample_value(
                "sitemap_guard_probes_total", {"section": "pages", "outcome": "quarantined"}
            ),
            registry.get_sample_value(
                "sitemap_guard_probes_total", {"section": "pages", "outcome": "indexable"}
            ),
        )
    assert hits.counts == Counter(PATHS)
    assert "pages: 5 URLs quarantined by the guard" in view
    for path, said in [
        ("/gone", "answered 404"),
        ("/old", "redirected (301) to /fine"),
        ("/hidden", "said noindex (X-Robots-Tag)"),
        ("/meta", "said noindex (&lt;meta name=robots&gt;)"),
        ("/copy", f"declared canonical {BASE}/fine"),
    ]:
        assert f"{BASE}{path}" in view and said in view
    assert metrics == (5.0, 5.0, 2.0)


def test_guard_probes_through_the_wrapped_wsgi_app() -> None:
    """werkzeug + Flask: the WSGI adapter probes in a worker thread; same verdicts."""
    hits = Hits()
    app = flask_app(hits)
    app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=_config())  # type: ignore[method-assign]
    with serve_werkzeug(app, bound_socket()) as url:
        _settles_to_the_good_pages(url)
    assert hits.counts == Counter(PATHS)


def test_report_mode_lists_but_leaves_nothing_out() -> None:
    """Guard(action="report"): the sitemap is untouched; the HTML view reports."""
    hits = Hits()
    config = _config(guard=Guard(action="report", max_probes_per_minute=None), html=True)
    app = ASGISitemapMiddleware(starlette_app(hits), config=config)
    with serve_uvicorn(app, bound_socket()) as url, httpx.Client() as client:
        _locs(client, url)
        _until(lambda: "5 URLs quarantined by the guard" in client.get(url + "/sitemap.html").text)
        assert _locs(client, url) == [BASE + p for p in PATHS]


def test_a_fleet_sharing_redis_probes_each_url_once() -> None:
    """Two cores (two uvicorn servers) on one RedisRenderStore: the second adopts the
    first's verdicts from Redis and probes nothing."""
    redis_url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if not redis_url:
        pytest.skip("SITEMAP_TEST_REDIS_URL is not set")
    store = RedisRenderStore(redis_url, prefix=f"test-{uuid.uuid4().hex}:")
    hits = Hits()
    inner = starlette_app(hits)
    first = ASGISitemapMiddleware(inner, config=_config(renders=Renders(store=store)))
    second = ASGISitemapMiddleware(inner, config=_config(renders=Renders(store=store)))
    with serve_uvicorn(first, bound_socket()) as url:
        _settles_to_the_good_pages(url)
    assert hits.counts == Counter(PATHS)
    with serve_uvicorn(second, bound_socket()) as url:
        _settles_to_the_good_pages(url)
    assert hits.counts == Counter(PATHS)  # probed once, by the first
    core = second.core
    assert isinstance(core, SitemapCore) and core.guard is not None and core.guard.probes == 0
