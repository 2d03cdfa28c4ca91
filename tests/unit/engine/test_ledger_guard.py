"""The content ledger dated by the guard's fetched bodies (issue 27, item 5:
``Ledger(source="guard")``): until a URL is probed it is written as its provider gives
it; its first body digest starts its record (and moves the section's version); later
bodies move its lastmod exactly when they differ; a fleet shares the digests with the
verdicts. Servers: tests/integration/test_ledger_guard.py."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from sitemap_middleware import Guard, Ledger, SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._engine.guard import ProbeAnswer, judge
from sitemap_middleware._exceptions import ConfigurationError
from sitemap_middleware._sansio.guard import Verdict
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import fetch, header, make_config

BASE = "https://example.com"
HTML = [("content-type", "text/html; charset=utf-8")]
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
T0 = 1_750_000_000


class Pages:
    """The app (page bodies by path, answered to probes) and the provider (lastmods by
    path, with a version token of them)."""

    def __init__(self, lastmods: dict[str, datetime | None]) -> None:
        self.lastmods = lastmods
        self.bodies = {path: f"<html><body>{path} v1</body></html>" for path in lastmods}
        self.status: dict[str, int] = {}
        self.asked: list[str] = []

    async def entries(self) -> AsyncIterator[dict[str, Any]]:
        for path, lastmod in self.lastmods.items():
            yield {"loc": path} if lastmod is None else {"loc": path, "lastmod": lastmod}

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=hashlib.sha256(repr(self.lastmods).encode()).hexdigest())

    async def probe(self, url: str) -> ProbeAnswer:
        path = url[len(BASE) :]
        self.asked.append(path)
        return ProbeAnswer(self.status.get(path, 200), HTML, self.bodies[path].encode())


def _core(pages: Pages, clock: list[int], **kwargs: Any) -> SitemapCore:
    guard = kwargs.pop("guard", Guard(ttl=1e-6, retry=1e-6, max_probes_per_minute=None))
    config = make_config(
        {"p": pages}, base_url=BASE, guard=guard, ledger=Ledger(source="guard"), **kwargs
    )
    assert config.ledger_book is not None
    config.ledger_book.clock = lambda: clock[0]
    core = SitemapCore(config)
    core.probe_with(pages.probe)
    return core


def lastmods(body: bytes) -> dict[str, str | None]:
    found = re.findall(r"<url><loc>([^<]+)</loc>(?:<lastmod>([^<]+)</lastmod>)?", body.decode())
    return {loc[len(BASE) :]: (lastmod or None) for loc, lastmod in found}


async def _get(core: SitemapCore) -> tuple[dict[str, str | None], str | None]:
    reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200
    return lastmods(body), header(reply, "etag")


async def _probed(core: SitemapCore) -> tuple[dict[str, str | None], str | None]:
    """Requests (each notes every URL for a probe: verdicts expire at once) and their
    probes, twice (a probe in flight at the first may have read a page before it
    changed; none is at the second), then a request."""
    assert core.guard is not None
    for _ in range(2):
        await _get(core)
        await core.guard.settled()
    return await _get(core)


def test_the_guard_source_needs_a_guard() -> None:
    with pytest.raises(ConfigurationError, match=r"source='guard'.*Guard"):
        SitemapConfig(base_url=BASE, sections={"p": ["/"]}, ledger=Ledger(source="guard"))
    with pytest.raises(ConfigurationError, match="source"):
        Ledger(source="body")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_lastmod_moves_exactly_when_the_fetched_body_does() -> None:
    pages = Pages({"/a": START, "/b": None})
    clock = [T0]
    core = _core(pages, clock)
    # not probed yet: written as the provider gives them
    written, etag = await _get(core)
    assert written == {"/a": "2024-01-01T00:00:00+00:00", "/b": None}
    # the first digests: /a keeps its provider's word, /b is dated when first seen;
    # the section's version (ETag) moves as they arrive
    clock[0] += 60
    dated, dated_etag = await _probed(core)
    first_b = "2025-06-15T15:07:40+00:00"
    assert dated == {"/a": "2024-01-01T00:00:00+00:00", "/b": first_b}
    assert dated_etag != etag
    # /a's page changes, its provider's lastmod does not: dated when the probe saw it
    clock[0] += 3600
    pages.bodies["/a"] = "<html><body>/a v2</body></html>"
    edited, edited_etag = await _probed(core)
    assert edited == {"/a": "2025-06-15T16:07:40+00:00", "/b": first_b}
    assert edited_etag != dated_etag
    # /b's provider bumps its lastmod, its page is the same: held (and counted)
    clock[0] += 3600
    pages.lastmods["/b"] = START + timedelta(days=600)
    touched, _ = await _probed(core)
    assert touched == edited
    book = core.config.ledger_book
    assert book is not None and book.held("p")[0] == 1
    # probes that get no page (a 503) or another answer keep the last known content
    pages.status["/a"] = 503
    clock[0] += 60
    assert (await _probed(core))[0] == edited
    # and a page that comes back as it was is the same content: nothing moves
    pages.status.clear()
    again, again_etag = await _probed(core)
    assert again == edited
    assert again_etag == (await _probed(core))[1]
    await core.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_digest_that_arrives_moves_the_version_once() -> None:
    """Between a digest's arrival and the next plan the version names it; once the plan
    has written it, the version is steady (requests keep getting the same ETag)."""
    pages = Pages({"/a": None})
    clock = [T0]
    core = _core(pages, clock, guard=Guard(ttl=3600, max_probes_per_minute=None))
    _, etag = await _get(core)
    assert core.guard is not None
    await core.guard.settled()
    tags = [(await _get(core))[1] for _ in range(3)]
    assert etag not in tags and tags[1] == tags[2]
    assert pages.asked == ["/a"]  # ttl=3600: one probe
    await core.aclose()


def test_a_verdict_carries_its_body_digest_and_old_records_still_read() -> None:
    answer = ProbeAnswer(200, HTML, b"<html>same</html>")
    guard = Guard()
    one, two = judge(BASE + "/", answer, 1.0, guard), judge(BASE + "/", answer, 2.0, guard)
    assert one.digest is not None and one.digest == two.digest
    assert (
        judge(BASE + "/", ProbeAnswer(404, HTML, b"<html>same</html>"), 1.0, guard).digest is None
    )
    assert Verdict.from_bytes(one.to_bytes()) == one
    assert Verdict.from_bytes(b'["", 1.0, 2.0, false]') == Verdict("", 1.0, 2.0)
    for foreign in (b'["", 1.0, 2.0, false, -1]', b'["", 1.0, 2.0, false, "x"]'):
        assert Verdict.from_bytes(foreign) is None
    # a body past what a probe keeps (its adapter's digest of the whole body wins)
    whole = ProbeAnswer(200, HTML, b"x" * 10, digest=12345)
    assert judge(BASE + "/", whole, 1.0, guard).digest == 12345
