"""The indexability guard's rules (issue 27, item 4): verdicts, the exclusion step,
versions and ETags, explain, settings. Servers: tests/integration/test_guard.py."""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware import Guard, Renders, SitemapConfig
from sitemap_middleware._adapters.asgi import asgi_probe
from sitemap_middleware._adapters.wsgi import wsgi_probe
from sitemap_middleware._caches.store import ValueStore
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._engine.guard import ProbeAnswer
from sitemap_middleware._exceptions import ConfigurationError
from sitemap_middleware._ops.explain import explain
from sitemap_middleware._providers.base import ProviderVersion
from sitemap_middleware._sansio.guard import GuardBook, Verdict
from sitemap_middleware.stores import MemoryRenderStore
from tests.harness.core import fetch, header, make_config, make_core

BASE = "https://example.com"
HTML = [("content-type", "text/html; charset=utf-8")]


class Versioned:
    """A provider with a version token: plans and ETags are kept per version."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    async def entries(self) -> AsyncIterator[str]:
        for path in self.paths:
            yield path

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


class FakeApp:
    """Answers probes from a table of ``path -> ProbeAnswer`` (200 HTML otherwise)."""

    def __init__(self, answers: dict[str, ProbeAnswer]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, url: str) -> ProbeAnswer:
        path = url[len(BASE) :]
        self.asked.append(path)
        if path == "/raises":
            raise RuntimeError("boom")
        return self.answers.get(path, ProbeAnswer(200, HTML, b"<html></html>"))


def _core(paths: list[str], app: FakeApp, **kwargs: Any) -> SitemapCore:
    guard = kwargs.pop("guard", Guard(max_probes_per_minute=None))
    config = make_config({"pages": Versioned(paths)}, base_url=BASE, guard=guard, **kwargs)
    core = SitemapCore(config)
    core.probe_with(app)
    return core


async def _listed(core: SitemapCore) -> tuple[list[str], str | None]:
    reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200
    return [u[len(BASE) :] for u in re.findall(r"<loc>([^<]+)</loc>", body.decode())], header(
        reply, "etag"
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_verdict_moves_the_sections_etag_and_leaves_the_url_out_in_its_place() -> None:
    app = FakeApp({"/gone": ProbeAnswer(404, HTML, b"")})
    core = _core(["/", "/gone", "/fine"], app)
    assert core.guard is not None
    before, etag = await _listed(core)
    assert before == ["/", "/gone", "/fine"]  # the first answer never waits for probes
    await core.guard.settled()
    after, moved = await _listed(core)
    assert after == ["/", "/fine"] and moved != etag
    again, same = await _listed(core)
    assert again == after and same == moved  # no new probe: verdicts are kept
    assert sorted(app.asked) == ["/", "/fine", "/gone"]
    # The URL is an indexable page again: the quarantine (and the ETag) are as before.
    core.config.guard_book.settle(BASE + "/gone", "pages", Verdict("", 0.0, 2e9))  # type: ignore[union-attr]
    restored, etag_again = await _listed(core)
    assert restored == before and etag_again == etag
    await core.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_urls_left_out_on_purpose_are_never_probed() -> None:
    """A URL an exclude pattern or our robots.txt leaves out is not listed anyway: the
    guard spends no probe on it (nor asks the app for a disallowed /admin/ page)."""
    from sitemap_middleware import Robots, RobotsGroup, Section

    app = FakeApp({"/tmp/x": ProbeAnswer(404, HTML, b"")})
    config = SitemapConfig(
        base_url=BASE,
        sections={"pages": Section(Versioned(["/", "/tmp/x", "/admin/"]), exclude=["/tmp/*"])},
        robots=Robots(groups=[RobotsGroup(disallow=["/admin/"])]),
        guard=Guard(max_probes_per_minute=None),
    )
    core = SitemapCore(config)
    core.probe_with(app)
    assert core.guard is not None
    assert (await _listed(core))[0] == ["/"]
    await core.guard.settled()
    assert app.asked == ["/"]
    assert config.guard_book is not None and config.guard_book.verdict(BASE + "/tmp/x") is None
    await core.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_server_errors_and_failed_probes_are_reported_never_left_out() -> None:
    app = FakeApp({"/busy": ProbeAnswer(503), "/limited": ProbeAnswer(429)})
    core = _core(["/", "/busy", "/limited", "/raises"], app)
    assert core.guard is not None
    await _listed(core)
    await core.guard.settled()
    listed, _ = await _listed(core)
    assert listed == ["/", "/busy", "/limited", "/raises"]
    book = core.config.guard_book
    assert book is not None
    verdict = book.verdict(BASE + "/raises")
    assert verdict is not None and verdict.transient and "RuntimeError: boom" in verdict.said
    busy = book.verdict(BASE + "/busy")
    assert busy is not None and busy.transient and busy.until - busy.at == 300.0
    await core.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_report_mode_moves_nothing_crawlers_read() -> None:
    app = FakeApp({"/gone": ProbeAnswer(404)})
    core = _core(["/", "/gone"], app, guard=Guard(action="report", max_probes_per_minute=None))
    assert core.guard is not None
    before = await _listed(core)
    await core.guard.settled()
    assert await _listed(core) == before
    assert [u for u, _ in core.config.guard_book.quarantined("pages")] == [BASE + "/gone"]  # type: ignore[union-attr]
    await core.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_explain_says_what_the_guard_found_and_when() -> None:
    """explain reads the verdicts a shared store keeps (here an in-process store marked
    shared, standing in for Redis)."""
    store = MemoryRenderStore()
    store.shared = True
    app = FakeApp({"/gone": ProbeAnswer(404)})
    core = _core(["/", "/gone"], app, renders=Renders(store=store))
    assert core.guard is not None
    await _listed(core)
    await core.guard.settled()
    await core.aclose()
    config = SitemapConfig(
        base_url=BASE,
        sections={"pages": Versioned(["/", "/gone"])},
        guard=Guard(),
        renders=Renders(store=store),
    )
    fine, gone = await explain(config, ["/", "/gone"])
    assert fine.listed and not fine.left_out
    assert len(gone.left_out) == 1
    assert re.fullmatch(
        r"section 'pages': left out by the guard: answered 404 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
        gone.left_out[0],
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_the_in_process_store_keeps_values_until_they_expire() -> None:
    store = MemoryRenderStore()
    assert isinstance(store, ValueStore)
    await store.save_values({"a": b"1", "b": b"2"}, 60)
    await store.save_values({"c": b"3"}, 0.0)  # expired at once
    assert await store.values(["a", "x", "b", "c"]) == [b"1", None, b"2", None]


def test_guard_settings_are_checked() -> None:
    for bad in (
        {"action": "drop"},
        {"ttl": 0},
        {"concurrency": 0},
        {"max_probes_per_minute": 0},
        {"timeout": -1},
    ):
        with pytest.raises(ConfigurationError):
            Guard(**bad)
    with pytest.raises(ConfigurationError, match="guard must be a Guard"):
        SitemapConfig(base_url=BASE, sections={"s": ["/"]}, guard="on")  # type: ignore[arg-type]


def test_a_stored_verdict_round_trips_and_foreign_bytes_are_none() -> None:
    verdict = Verdict("answered 404", 1.5, 3601.5)
    assert Verdict.from_bytes(verdict.to_bytes()) == verdict
    foreign_bytes = (b"", b"nope", b'["a", 1]', b"[1, 2, 3, false]", b"[" * 100_000)
    for foreign in (*foreign_bytes, b'["x", 1, Infinity, false]', b'["x", NaN, 2, false]'):
        assert Verdict.from_bytes(foreign) is None


URLS = st.sampled_from([f"{BASE}/{c}" for c in "abcdef"])
VERDICTS = st.sampled_from(["", "answered 404", "said noindex (X-Robots-Tag)"])


@settings(max_examples=80, deadline=None, derandomize=True)
@given(steps=st.lists(st.tuples(URLS, VERDICTS, st.booleans()), max_size=30))
def test_the_token_names_exactly_the_quarantined_set(
    steps: list[tuple[str, str, bool]],
) -> None:
    """Over any sequence of verdicts: a URL is left out exactly while its latest verdict
    quarantines it; the section's token changes exactly when that set does (equal sets,
    equal tokens, whatever the order that built them); transient verdicts quarantine
    nothing."""
    book, tokens = GuardBook("exclude"), dict[frozenset[str], str]()
    quarantined: set[str] = set()
    for url, said, transient in steps:
        before = book.token("s")
        changed = book.settle(url, "s", Verdict(said, 0.0, 1.0, transient))
        if said and not transient:
            quarantined.add(url)
        else:
            quarantined.discard(url)
        assert changed == (book.token("s") != before)
        key = frozenset(quarantined)
        assert tokens.setdefault(key, book.token("s")) == book.token("s")
        assert (book.token("s") == "") == (not quarantined)
        locs = sorted({u for u, _, _ in steps})
        assert [locs[i] for i in book.left_out("s", locs)] == sorted(quarantined)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_probe_carries_none_of_the_latest_visitors_identity() -> None:
    # The template is the latest request's scope/environ: an outer session or auth
    # middleware's keys, the client's address and REMOTE_USER are the visitor's.
    seen: dict[str, Any] = {}

    async def asgi_app(scope: Any, receive: Any, send: Any) -> None:
        seen.update(scope)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"<html></html>"})

    visitor = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "server": ("example.com", 443),
        "state": {"pool": "shared"},
        "client": ("203.0.113.9", 5555),
        "session": {"user_id": 42},
        "user": "alice",
        "auth": ["authenticated"],
        "path_params": {"id": "7"},
    }
    answer = await asgi_probe(asgi_app, lambda: visitor, 10.0)(BASE + "/page")
    assert answer.status == 200
    assert seen["state"] == {"pool": "shared"} and seen["server"] == ("example.com", 443)
    assert not {"client", "session", "user", "auth", "path_params"} & set(seen)

    environ: dict[str, Any] = {}

    def wsgi_app(env: Any, start_response: Any) -> list[bytes]:
        environ.update(env)
        start_response("200 OK", [])
        return [b"<html></html>"]

    latest = {
        "REMOTE_USER": "alice",
        "AUTH_TYPE": "Basic",
        "REMOTE_ADDR": "203.0.113.9",
        "beaker.session": {"uid": 42},
        "HTTP_COOKIE": "s=1",
        "SERVER_SOFTWARE": "gunicorn",
    }
    answer = await wsgi_probe(wsgi_app, lambda: latest)(BASE + "/page")
    assert answer.status == 200 and environ["SERVER_SOFTWARE"] == "gunicorn"
    assert environ["PATH_INFO"] == "/page" and environ["HTTP_HOST"] == "example.com"
    assert not set(latest) - {"SERVER_SOFTWARE"} & set(environ)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_wsgi_probes_of_pages_that_hang_hold_a_bounded_number_of_threads() -> None:
    # Each probe the guard gave up on kept its worker thread in the app: 40 pages that
    # hang held 40 threads, a guarded site of many such pages ever more.
    release = threading.Event()
    inside = 0
    most = 0
    lock = threading.Lock()

    def hanging(environ: Any, start_response: Any) -> list[bytes]:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        try:
            release.wait()
        finally:
            with lock:
                inside -= 1
        start_response("200 OK", [])
        return [b""]

    paths = [f"/p{i}" for i in range(40)]
    guard = Guard(timeout=0.01, concurrency=4, max_probes_per_minute=None)
    core = make_core({"pages": paths}, base_url=BASE, guard=guard)
    core.probe_with(wsgi_probe(hanging, lambda: None))
    assert core.guard is not None
    try:
        await _listed(core)
        await core.guard.settled()
        assert core.guard.probes == 40
        verdict = core.config.guard_book.verdict(BASE + "/p39")  # type: ignore[union-attr]
        assert verdict is not None and verdict.transient
        assert most <= 8 + guard.concurrency
    finally:
        release.set()
        await core.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_expired_verdicts_are_probed_again_while_the_version_holds() -> None:
    """A page that turns 404 after its verdict was made: the section's version never
    moved, so its plan and render were kept and nothing noted its URLs again; the
    verdict's ttl meant nothing. Requests now sweep expired verdicts into probes."""
    app = FakeApp({})
    core = _core(["/", "/later"], app, guard=Guard(ttl=1e-6, max_probes_per_minute=None))
    assert core.guard is not None
    await _listed(core)
    await core.guard.settled()
    listed, _ = await _listed(core)
    assert listed == ["/", "/later"]
    app.answers["/later"] = ProbeAnswer(404, HTML, b"")
    for _ in range(2):  # (a probe in flight at the first may have read the page before)
        await _listed(core)  # the sweep notes both (their verdicts expired)
        await core.guard.settled()
    listed, _ = await _listed(core)
    assert listed == ["/"]
    await core.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_shared_verdict_from_a_clock_ahead_holds_no_longer_than_the_ttl() -> None:
    """A fleet member whose clock runs a year ahead saved a verdict good "until" next
    year: adopted as is, it stayed fresh for a year, and the sweep (oldest verdicts
    first, stopping at the first fresh one) never reached the verdicts settled after it,
    so a page that turned 404 stayed listed. A stored verdict holds for ``ttl`` at most."""
    import time

    store = MemoryRenderStore()
    store.shared = True
    ahead = time.time() + 365 * 86_400
    await store.save_values({f"guard|{BASE}/skewed": Verdict("", ahead, ahead).to_bytes()}, 60)
    app = FakeApp({})
    guard = Guard(ttl=1e-6, max_probes_per_minute=None)
    core = _core(["/skewed", "/page"], app, guard=guard, renders=Renders(store=store))
    assert core.guard is not None
    await _listed(core)
    await core.guard.settled()
    verdict = core.config.guard_book.verdict(BASE + "/skewed")  # type: ignore[union-attr]
    assert verdict is not None and verdict.until <= time.time() + 1
    app.answers["/page"] = ProbeAnswer(404, HTML, b"")
    for _ in range(2):
        await _listed(core)
        await core.guard.settled()
    listed, _ = await _listed(core)
    assert listed == ["/skewed"]
    await core.aclose()
