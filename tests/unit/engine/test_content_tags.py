"""ETags from rendered bytes: ``Renders(etag="content")`` (``_engine/content_tags.py``)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.http import http_date

from sitemap_middleware import HTTPSettings, Ledger, Renders, SitemapConfig
from sitemap_middleware._engine import shared
from sitemap_middleware._engine.core import RequestInfo, SitemapCore
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import Clock, collect, fetch, header, make_core

pytestmark = pytest.mark.anyio


class Rows:
    """An unversioned provider whose rows a test may change; counts its passes."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.passes = 0

    async def entries(self) -> AsyncIterator[str]:
        self.passes += 1
        for i, url in enumerate(list(self.urls)):
            if i % 100 == 0:
                await anyio.sleep(0)  # rows come in batches: concurrent requests interleave
            yield url


def _core(provider: Any, renders: dict[str, Any] | None = None, **options: Any) -> SitemapCore:
    return make_core({"p": provider}, renders=Renders(etag="content", **(renders or {})), **options)


async def test_a_render_tagged_by_its_bytes_answers_for_content_ttl(clock: Clock) -> None:
    """Within content_ttl the stored render answers unasked; past it the page is rendered
    again for its tag: the same bytes keep their ETag and date, new bytes move both."""
    provider = Rows(["/a", "/b"])
    core = _core(provider, renders={"content_ttl": 60, "plan_ttl": 0})  # plans not kept
    first, body = await fetch(core, "/sitemap-p-1.xml")
    etag, date = header(first, "ETag"), header(first, "Last-Modified")
    assert etag is not None and date is not None and provider.passes == 1
    clock.now += 59
    again, same = await fetch(core, "/sitemap-p-1.xml")
    assert (header(again, "ETag"), same, provider.passes) == (etag, body, 1)
    assert again.cache == "hit"
    clock.now += 2
    later, same = await fetch(core, "/sitemap-p-1.xml")
    assert (header(later, "ETag"), same, provider.passes) == (etag, body, 2)
    assert header(later, "Last-Modified") == date
    fresh, _ = await fetch(core, "/sitemap-p-1.xml", if_none_match=etag)
    assert fresh.status == 304 and provider.passes == 2  # touched: fresh again
    provider.urls.append("/c")
    clock.now += 61
    changed, new = await fetch(core, "/sitemap-p-1.xml", if_none_match=etag)
    assert changed.status == 200 and b"https://example.com/c" in new
    assert header(changed, "ETag") not in (None, etag)
    assert header(changed, "Last-Modified") != date


class Versioned(Rows):
    """A provider with a version token: its ETag never comes from its bytes."""

    def __init__(self, urls: list[str]) -> None:
        super().__init__(urls)
        self.token = "v1"

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=self.token)


async def test_versioned_documents_are_asked_as_ever(clock: Clock) -> None:
    """etag="content" leaves a versioned document alone: its version's ETag, asked at every
    request (ttl 0), whatever content_ttl says."""
    provider = Versioned(["/a"])
    core = _core(provider, renders={"content_ttl": 3600})
    first, _ = await fetch(core, "/sitemap-p-1.xml")
    provider.token, provider.urls = "v2", ["/b"]
    again, body = await fetch(core, "/sitemap-p-1.xml")
    assert b"https://example.com/b" in body
    assert header(again, "ETag") not in (None, header(first, "ETag"))


async def test_concurrent_requests_share_one_render_and_one_tag() -> None:
    """Requests for an unversioned page while it renders read one render (one provider
    pass) and answer one ETag."""
    provider = Rows([f"/item/{i}" for i in range(3000)])
    core = _core(provider)
    await fetch(core, "/sitemap_index.xml")  # planned: the page's render reads once more
    planned = provider.passes
    tags: list[str | None] = []

    async def one() -> None:
        reply, _ = await fetch(core, "/sitemap-p-1.xml")
        tags.append(header(reply, "ETag"))

    async with anyio.create_task_group() as group:
        for _ in range(8):
            group.start_soon(one)
    assert provider.passes == planned + 1
    assert len(tags) == 8 and len(set(tags)) == 1 and tags[0] is not None


class Dated(Rows):
    """A provider whose version has a time but no token: no ETag from its versions."""

    async def version(self) -> ProviderVersion:
        return ProviderVersion(last_modified=datetime(2024, 5, 1, tzinfo=timezone.utc))


async def test_a_page_too_big_to_tag_leaves_its_render_on_a_304() -> None:
    """A page over max_bytes is sent on from where tagging stopped; a 304 (its provider's
    date, trusted) opens and closes that body, so its render does not linger."""
    provider = Dated([f"/item/{i}" for i in range(200)])
    core = _core(
        provider,
        renders={"max_bytes": 1024},
        http=HTTPSettings(trust_provider_times=True),
    )
    since = http_date(datetime(2024, 6, 1, tzinfo=timezone.utc))
    request = RequestInfo("GET", "/sitemap-p-1.xml", {"if-modified-since": since})
    target = core.route(request)
    assert target is not None
    reply = await core.respond(target, request)
    assert reply.status == 304 and header(reply, "ETag") is None
    assert len(core._shared.once.flights) == 0


async def test_a_render_tagged_by_its_bytes_is_dated_when_its_providers_were_read(
    clock: Clock,
) -> None:
    """content_ttl counts from the provider pass, not from when the first reader finished
    reading: a client that takes 50 s to read the page does not keep its render fresh
    until 110 s after the providers were read."""
    provider = Rows(["/a", "/b"])
    core = _core(provider, renders={"content_ttl": 60, "plan_ttl": 0})
    request = RequestInfo("GET", "/sitemap-p-1.xml", {})
    target = core.route(request)
    assert target is not None
    slow = await core.respond(target, request)  # read at 0 s ...
    clock.now += 50
    body = await collect(slow)  # ... and read out (and stored) at 50 s
    provider.urls.append("/c")
    clock.now += 11
    later, new = await fetch(core, "/sitemap-p-1.xml")
    assert provider.passes == 2 and b"https://example.com/c" in new
    assert header(later, "ETag") != header(slow, "ETag") and new != body


async def test_a_render_tagged_again_with_the_same_bytes_is_dated_when_read(
    clock: Clock,
) -> None:
    """The same bytes found again (the stored render's meta touched) answer for content_ttl
    from that provider pass too, gzip readers included."""
    provider = Rows(["/a"])
    core = _core(provider, renders={"content_ttl": 60, "plan_ttl": 0})
    await fetch(core, "/sitemap-p-1.xml")
    clock.now += 61
    request = RequestInfo("GET", "/sitemap-p-1.xml", {"accept-encoding": "gzip"})
    target = core.route(request)
    assert target is not None
    slow = await core.respond(target, request)  # the providers are read at 61 s
    assert provider.passes == 2
    clock.now += 50
    await collect(slow)
    provider.urls.append("/b")
    clock.now += 11  # 61 s after that pass
    _, new = await fetch(core, "/sitemap-p-1.xml")
    assert provider.passes == 3 and b"https://example.com/b" in new


# -- content_ttl and the content ledger: a property ------------------------------------

#: The deals page's provider lastmod: fixed, whatever the deal on show.
DEAL_LASTMOD = "2024-06-01T09:00:00+00:00"
_DEAL_SECONDS = 1_717_232_400  # DEAL_LASTMOD


class Deals:
    """One page whose content (its digest) a test changes while its lastmod never moves;
    records each read of the provider: (when, the digest it gave)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.digest = "a"
        self.reads: list[tuple[float, str]] = []

    def __call__(self) -> list[dict[str, str]]:
        self.reads.append((self.clock.now, self.digest))
        return [{"loc": "/deals/today", "lastmod": DEAL_LASTMOD, "digest": self.digest}]


def _written_after_each_read(reads: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """What the ledger writes after each read (its rule, restated): the provider's
    lastmod until the digest first changes, then the time of each change (at least a
    second after the previous one)."""
    written: list[tuple[float, str]] = []
    digest, stamp = None, 0
    for at, seen in reads:
        if digest is None:
            stamp = _DEAL_SECONDS
        elif seen != digest:
            stamp = max(int(at), stamp + 1)
        digest = seen
        when = datetime.fromtimestamp(stamp, timezone.utc)
        written.append((at, when.strftime("%Y-%m-%dT%H:%M:%S+00:00")))
    return written


@given(
    content_ttl=st.sampled_from([1.0, 7.0, 60.0]),
    swr=st.sampled_from([0.0, 10.0]),
    steps=st.lists(
        st.tuples(
            st.sampled_from([0, 1, 3, 6, 9, 30, 59, 61, 75]),  # seconds before the request
            st.sampled_from([None, None, "a", "b", "c"]),  # the deal on show (None: as was)
            st.sampled_from([0, 0, 0, 2, 30, 50]),  # seconds the client takes to read it
        ),
        min_size=1,
        max_size=25,
    ),
)
@settings(max_examples=100, deadline=None)
def test_a_deal_is_served_as_read_within_content_ttl(
    content_ttl: float, swr: float, steps: list[tuple[int, str | None, int]]
) -> None:
    """Whatever the requests' timing: a page tagged by its bytes answers as some read of
    its provider within ``content_ttl`` found it (within ``content_ttl`` plus
    stale-while-revalidate when served stale), slow readers included, and its lastmod is
    the one the ledger wrote at that read. So the written lastmod moves within
    ``content_ttl`` (+ the stale window) of a change that stays."""
    clock = Clock()
    clock.now = 1_750_000_000.0  # in June 2025: after the deal's provider lastmod
    real = shared.wall_clock
    shared.wall_clock = clock
    try:
        # asyncio: stale-while-revalidate refreshes in a background task
        anyio.run(_deals_served_as_read, clock, content_ttl, swr, steps, backend="asyncio")
    finally:
        shared.wall_clock = real


async def _deals_served_as_read(
    clock: Clock, content_ttl: float, swr: float, steps: list[tuple[int, str | None, int]]
) -> None:
    deals = Deals(clock)
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"deals": deals},
        renders=Renders(etag="content", content_ttl=content_ttl, stale_while_revalidate=swr),
        ledger=Ledger(source="digest"),
    )
    assert config.ledger_book is not None
    config.ledger_book.clock = clock
    core = SitemapCore(config)
    request = RequestInfo("GET", "/sitemap-deals-1.xml", {})
    target = core.route(request)
    assert target is not None
    for wait, deal, reading in steps:
        clock.now += wait
        if deal is not None:
            deals.digest = deal
        asked = clock.now
        reply = await core.respond(target, request)
        clock.now += reading  # a slow client: the render is stored when it is read out
        (lastmod,) = re.findall(r"<lastmod>([^<]+)</lastmod>", (await collect(reply)).decode())
        while core._refreshes._running:  # a stale answer's background refresh, done now
            await anyio.sleep(0)
        window = content_ttl + (swr if reply.cache == "stale" else 0.0)
        current = {
            text for at, text in _written_after_each_read(deals.reads) if asked - at < window
        }
        assert lastmod in current, (asked, reply.cache, lastmod, deals.reads)
        if reply.cache == "stale" and clock.now - asked < content_ttl:
            # Its refresh (dated when this request asked) replaced it: the next answer is
            # that read's.
            again, body = await fetch(core, "/sitemap-deals-1.xml")
            assert again.cache == "hit", again.cache
            written = _written_after_each_read(deals.reads)[-1][1]
            assert f"<lastmod>{written}</lastmod>".encode() in body
    await core.aclose()


async def test_the_ledger_dates_what_each_read_finds(clock: Clock) -> None:
    """A deal that turns every 3 s through three offers, polled every 7 s (content_ttl
    60): the provider is read at 0, 63 and 126 s, and each read finds the offer of 0 s
    again (9 s cycle, 63 = 7 x 9), so the ledger has seen no change and the lastmod rightly
    stays. Polled every 10 s, the read at 60 s finds another offer: the lastmod moves then."""
    for every, reads, moved in ((7, [0, 63, 126], None), (10, [0, 60, 120], 60)):
        start = clock.now = 1_750_000_001.0  # in June 2025, two seconds into an offer
        deals = Deals(clock)
        config = SitemapConfig(
            base_url="https://example.com",
            sections={"deals": deals},
            renders=Renders(etag="content"),
            ledger=Ledger(source="digest"),
        )
        assert config.ledger_book is not None
        config.ledger_book.clock = clock
        core = SitemapCore(config)
        seen: set[str] = set()
        while clock.now - start <= 133:
            deals.digest = "abc"[int(clock.now // 3) % 3]
            _, body = await fetch(core, "/sitemap-deals-1.xml")
            seen.update(re.findall(r"<lastmod>([^<]+)</lastmod>", body.decode()))
            clock.now += every
        assert [at - start for at, _ in deals.reads] == reads
        if moved is None:
            assert len({digest for _, digest in deals.reads}) == 1 and seen == {DEAL_LASTMOD}
        else:
            assert len({digest for _, digest in deals.reads}) > 1
            when = datetime.fromtimestamp(start + moved, timezone.utc)
            assert when.strftime("%Y-%m-%dT%H:%M:%S+00:00") in seen
