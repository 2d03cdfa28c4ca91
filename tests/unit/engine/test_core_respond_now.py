"""``SitemapCore.respond_now``: a fresh render in the in-process store answers without
awaiting (no portal hop for WSGI), exactly as ``respond`` answers it, and nothing else."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware import Renders, SitemapConfig, WSGISitemapMiddleware
from sitemap_middleware._engine.core import Reply, RequestInfo, SitemapCore
from tests.harness.core import make_core
from tests.harness.providers import CountingProvider

pytestmark = pytest.mark.anyio
PAGE = "/sitemap-p-1.xml"


def _core(**renders: Any) -> SitemapCore:
    return make_core({"p": CountingProvider(300)}, renders=Renders(**({"ttl": 60.0} | renders)))


async def _body(reply: Reply) -> bytes:
    if reply.body is None:
        return b""
    return b"".join([chunk async for chunk in reply.body])


async def _warm(core: SitemapCore) -> dict[str, str]:
    """Render and store the page in both encodings; the validators each was sent with."""
    tags = {}
    for encoding in ("identity", "gzip"):
        request = RequestInfo("GET", PAGE, {"accept-encoding": encoding})
        reply = await core.respond(core.route(request), request)  # type: ignore[arg-type]
        await _body(reply)
        headers = dict(reply.headers)
        tags[encoding] = headers["ETag"]
        tags["modified"] = headers["Last-Modified"]
    return tags


async def test_a_stored_page_answers_now_and_a_cold_one_does_not() -> None:
    core = _core()
    request = RequestInfo("GET", PAGE, {"accept-encoding": "gzip"})
    target = core.route(request)
    assert target is not None
    assert core.respond_now(target, request) is None  # nothing stored yet
    await _warm(core)
    now = core.respond_now(target, request)
    assert now is not None and now.status == 200 and now.cache == "hit"


async def test_nothing_answers_now_without_a_render_ttl_or_for_robots() -> None:
    core = _core(ttl=0.0)  # every request asks the provider's version: never now
    await _warm(core)
    request = RequestInfo("GET", PAGE, {})
    assert core.respond_now(core.route(request), request) is None  # type: ignore[arg-type]
    core = _core()
    await _warm(core)
    request = RequestInfo("GET", "/robots.txt", {})
    target = core.route(request)
    assert target is not None and core.respond_now(target, request) is None


_HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "accept-encoding": st.sampled_from(["gzip", "identity", "gzip;q=0", "br", "*", ""]),
        "if-none-match": st.sampled_from(["*", '"nope"', "identity", "gzip", "both", 'W/"x"']),
        "if-modified-since": st.sampled_from(["modified", "Tue, 01 Jan 2999 00:00:00 GMT", "x"]),
        "host": st.sampled_from(["example.com", "EXAMPLE.com:443"]),
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(method=st.sampled_from(["GET", "HEAD", "POST"]), headers=_HEADERS)
def test_what_answers_now_is_what_respond_answers(method: str, headers: dict[str, str]) -> None:
    """Whenever respond_now answers, respond answers the same status, headers and bytes."""

    async def check() -> None:
        core = _core()
        tags = await _warm(core)
        sent = dict(headers)
        if (tag := sent.get("if-none-match")) in tags or tag == "both":
            sent["if-none-match"] = (
                f"{tags['identity']}, {tags['gzip']}" if tag == "both" else tags[str(tag)]
            )
        if sent.get("if-modified-since") == "modified":
            sent["if-modified-since"] = tags["modified"]
        request = RequestInfo(method, PAGE, sent)
        target = core.route(request)
        assert target is not None
        now = core.respond_now(target, request)
        later = await core.respond(target, request)
        if now is None:
            return
        assert (now.status, now.headers, now.cache) == (later.status, later.headers, later.cache)
        assert await _body(now) == await _body(later)

    anyio.run(check)


def test_a_warm_wsgi_request_makes_no_portal_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the WSGI adapter a stored page costs no hop to the event loop thread."""
    from werkzeug.test import Client

    config = SitemapConfig(
        base_url="http://localhost",
        sections={"p": CountingProvider(300, host="http://localhost")},
        renders=Renders(ttl=60.0),
    )

    def home(environ: Any, start_response: Any) -> list[bytes]:
        start_response("404 Not Found", [])
        return []

    app = WSGISitemapMiddleware(home, config=config)
    client = Client(app)
    first = client.get(PAGE, headers={"Accept-Encoding": "gzip"})
    assert first.status_code == 200
    request = RequestInfo("GET", PAGE, {"accept-encoding": "gzip", "host": "localhost"})
    target = app.core.route(request)
    assert target is not None
    for _ in range(500):  # the render is stored once compressed, beside the response
        if app.core.respond_now(target, request) is not None:
            break
        time.sleep(0.01)
    from sitemap_middleware._adapters import portal

    calls: list[object] = []
    real = portal.get_portal()

    def hop(*args: object, **kwargs: object) -> object:
        calls.append(args)
        raise AssertionError("a stored page went through the portal")

    monkeypatch.setattr(real, "call", hop)
    again = client.get(PAGE, headers={"Accept-Encoding": "gzip"})
    assert again.status_code == 200 and again.data == first.data
    etag = again.headers["ETag"]
    assert (
        client.get(PAGE, headers={"If-None-Match": etag, "Accept-Encoding": "gzip"}).status_code
        == 304
    )
    assert calls == []


def test_peeking_from_threads_never_breaks_the_loops_store_calls() -> None:
    """Request threads peek while the loop saves and evicts (a store of a few bodies):
    no call on either side fails (found by a hostile review: 'OrderedDict mutated during
    iteration' in save(), which backed the store off)."""
    import sys
    import threading

    from sitemap_middleware._caches.store import MemoryRenderStore, RenderMeta

    store = MemoryRenderStore(max_bytes=3000)
    keys = [f"k{i}" for i in range(40)]
    stop = threading.Event()
    errors: list[BaseException] = []

    def peek() -> None:
        while not stop.is_set():
            for key in keys:
                try:
                    found = store.peek(key)
                except Exception as exc:  # pragma: no cover - the failure looked for
                    errors.append(exc)
                    continue
                if found is not None:
                    assert found[0].etag == key and found[1].startswith(key.encode())

    async def save() -> None:
        for round_ in range(150):
            for key in keys:
                body = (key + "-" * 1000).encode()
                meta = RenderMeta(key, "application/xml", None, time.time(), len(body), "")
                try:
                    await store.save(key, meta, body, 60)
                    await store.meta(keys[round_ % 40])
                except Exception as exc:  # pragma: no cover - the failure looked for
                    errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: the race shows within a second
    threads = [threading.Thread(target=peek) for _ in range(4)]
    try:
        for thread in threads:
            thread.start()
        anyio.run(save)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        sys.setswitchinterval(interval)
    assert errors == []
    assert store._size == sum(len(i[2]) + len(i[3] or b"") for i in store._items.values())
