"""Stored renders: stale-while-revalidate, stale-if-error, first-seen Last-Modified."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import datetime, timezone

import anyio
import pytest
from werkzeug.http import http_date

from sitemap_middleware import ConfigurationError, Renders
from sitemap_middleware._caches.store import RenderMeta
from sitemap_middleware.providers import ProviderVersion
from sitemap_middleware.stores import MemoryRenderStore
from tests.harness.core import Clock, RequestInfo, SitemapCore, collect, fetch, header, make_core

pytestmark = pytest.mark.anyio
asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"])


class Flaky:
    """A versioned provider (token only, no time) that can be made to fail or change."""

    def __init__(self, n: int = 30) -> None:
        self.n = n
        self.token = "v1"
        self.fail_version = False
        self.fail_entries = False
        self.passes = 0

    async def entries(self) -> AsyncIterator[str]:
        self.passes += 1
        if self.fail_entries:
            raise RuntimeError("database went away")
        for i in range(self.n):
            yield f"/item/{i}?a=1&b={self.token}"

    async def version(self) -> ProviderVersion:
        if self.fail_version:
            raise RuntimeError("database went away")
        return ProviderVersion(token=self.token)


def _core(provider: Flaky, **renders: object) -> SitemapCore:
    return make_core(
        {"p": provider},
        renders=Renders(**renders),  # type: ignore[arg-type]
    )


async def test_first_seen_time_is_last_modified_and_answers_if_modified_since(
    clock: Clock,
) -> None:
    """A provider with a token but no time: Last-Modified is when this version was first
    seen; it stays put while the version does, moves when it changes, and gives 304s."""
    provider = Flaky()
    core = _core(provider)
    first, _ = await fetch(core, "/sitemap.xml")
    seen = http_date(datetime.fromtimestamp(clock.now, timezone.utc))
    assert header(first, "Last-Modified") == seen
    clock.now += 500
    again, _ = await fetch(core, "/sitemap.xml", if_modified_since=seen)
    assert again.status == 304
    provider.token = "v2"
    changed, _ = await fetch(core, "/sitemap.xml", if_modified_since=seen)
    assert changed.status == 200
    assert header(changed, "Last-Modified") == http_date(
        datetime.fromtimestamp(clock.now, timezone.utc)
    )


class Ahead(Flaky):
    """A provider whose lastmod is ahead of our clock (scheduled content, a skewed host)."""

    async def version(self) -> ProviderVersion:
        ahead = datetime(2100, 1, 1, tzinfo=timezone.utc)
        return ProviderVersion(token=self.token, last_modified=ahead)


async def test_a_lastmod_ahead_of_the_clock_never_dates_older_content_as_new(
    clock: Clock,
) -> None:
    """A provider time in the future once counted as "now" on every reply: old content,
    revalidated a second later, was sent a date its replacement then got too (a stale
    304). The first-seen stamp dates it instead: it holds while the content does."""
    provider = Ahead()
    core = _core(provider)
    first, _ = await fetch(core, "/sitemap.xml")
    held = header(first, "Last-Modified")
    assert held == http_date(datetime.fromtimestamp(clock.now, timezone.utc))
    clock.now += 1
    again, _ = await fetch(core, "/sitemap.xml")
    later = header(again, "Last-Modified")
    assert later is not None
    provider.token = "v2"  # changed within the second of that request
    changed, _ = await fetch(core, "/sitemap.xml", if_modified_since=later)
    assert changed.status == 200
    assert later == held  # the same content, the same date


async def test_two_instances_on_one_store_agree_on_last_modified(clock: Clock) -> None:
    """Cores sharing a store answer the same Last-Modified, whichever saw it first."""
    store = MemoryRenderStore()
    one, two = _core(Flaky(), store=store), _core(Flaky(), store=store)
    a, _ = await fetch(one, "/sitemap.xml")
    clock.now += 90
    b, _ = await fetch(two, "/sitemap.xml")
    assert header(a, "Last-Modified") == header(b, "Last-Modified") is not None
    assert header(a, "ETag") == header(b, "ETag")


async def test_stale_if_error_serves_the_last_render_with_its_validators(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    """The provider fails (metadata, or entries of a new version): the stored render
    answers 200 with its old validators and 304s, until ttl + stale_if_error has passed."""
    provider = Flaky()
    core = _core(provider, stale_if_error=600)
    good, body = await fetch(core, "/sitemap.xml")
    assert "stale-if-error=600" in (header(good, "Cache-Control") or "")
    provider.fail_version = True
    clock.now += 300
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        stale, again = await fetch(core, "/sitemap.xml")
    assert stale.status == 200 and again == body
    assert header(stale, "ETag") == header(good, "ETag")
    assert header(stale, "Last-Modified") == header(good, "Last-Modified")
    assert "stale-if-error" in caplog.text
    etag = header(good, "ETag")
    assert etag is not None
    cached, _ = await fetch(core, "/sitemap.xml", if_none_match=etag)
    assert cached.status == 304
    provider.fail_version, provider.fail_entries, provider.token = False, True, "v2"
    failed_render, again = await fetch(core, "/sitemap.xml")
    assert failed_render.status == 200 and again == body
    assert header(failed_render, "ETag") == etag
    clock.now += 301
    gone, _ = await fetch(core, "/sitemap.xml")
    assert gone.status == 503


async def test_without_stale_if_error_a_failing_provider_gets_503(clock: Clock) -> None:
    """stale-if-error is opt-in: by default a failing provider still answers 503."""
    provider = Flaky()
    core = _core(provider)
    await fetch(core, "/sitemap.xml")
    provider.fail_version = True
    reply, _ = await fetch(core, "/sitemap.xml")
    assert reply.status == 503


async def test_ttl_answers_without_asking_the_provider(clock: Clock) -> None:
    """Within ttl a stored render answers and the provider is not asked anything."""
    provider = Flaky()
    core = _core(provider, ttl=60)
    first, body = await fetch(core, "/sitemap-p-1.xml")
    provider.fail_version = True  # would be a 503 if asked
    clock.now += 59
    again, same = await fetch(core, "/sitemap-p-1.xml")
    # One pass, for the first request: its page's plan (which its render replays).
    assert again.status == 200 and same == body and provider.passes == 1


async def test_ttl_counts_from_when_the_provider_was_asked_not_from_the_last_byte(
    clock: Clock,
) -> None:
    """A client that takes 50 s to read a page does not keep its render fresh until 110 s
    after the provider was asked (ttl=60): 61 s after, the provider is asked again."""
    provider = Flaky()
    core = _core(provider, ttl=60)
    request = RequestInfo("GET", "/sitemap-p-1.xml", {})
    target = core.route(request)
    assert target is not None
    slow = await core.respond(target, request)  # asked at 0 s ...
    clock.now += 50
    await collect(slow)  # ... read out (and stored) at 50 s
    provider.token = "v2"
    clock.now += 11
    again, body = await fetch(core, "/sitemap-p-1.xml")
    assert b"b=v2" in body and header(again, "ETag") != header(slow, "ETag")


@asyncio_only
async def test_stale_while_revalidate_answers_at_once_and_refreshes_once(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    """Past ttl, within stale_while_revalidate: the old render answers and one refresh
    renders the new version in the background; the next request gets it."""
    provider = Flaky()
    core = _core(provider, ttl=10, stale_while_revalidate=100)
    first, body = await fetch(core, "/sitemap-p-1.xml")
    assert "stale-while-revalidate=100" in (header(first, "Cache-Control") or "")
    provider.token = "v2"
    clock.now += 50
    with caplog.at_level(logging.INFO, "sitemap_middleware"):
        replies = [await fetch(core, "/sitemap-p-1.xml") for _ in range(3)]
    assert all(reply.status == 200 and data == body for reply, data in replies)
    assert "stale-while-revalidate" in caplog.text
    with anyio.fail_after(5):
        while core._refreshes._running:
            await anyio.sleep(0.01)
    # The first plan, one refresh's plan (each render replays what its plan read).
    assert provider.passes == 2
    fresh, data = await fetch(core, "/sitemap-p-1.xml")
    assert b"b=v2" in data and header(fresh, "ETag") != header(first, "ETag")
    await core.aclose()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ttl": -1}, "Renders.ttl must be"),
        ({"stale_if_error": "60"}, "Renders.stale_if_error must be"),
        ({"stale_while_revalidate": float("nan")}, "Renders.stale_while_revalidate must be"),
        ({"max_bytes": 10}, "Renders.max_bytes must be"),
        ({"lock_ttl": 0}, "Renders.lock_ttl must be"),
        ({"store": object()}, "Renders.store must implement RenderStore"),
    ],
)
def test_bad_renders_settings_are_refused(kwargs: dict[str, object], message: str) -> None:
    """Each bad value is a ConfigurationError naming the setting and the value."""
    with pytest.raises(ConfigurationError, match=message):
        Renders(**kwargs)  # type: ignore[arg-type]


async def test_a_version_changed_within_the_second_never_earns_a_stale_304(
    clock: Clock,
) -> None:
    """Two versions first seen within one whole second: the second is stamped a second
    later and not sent until then, so a bare If-Modified-Since from the first never
    gets a 304 for the second."""
    provider = Flaky()
    core = _core(provider)
    clock.now = 1_700_000_000.2
    first, _ = await fetch(core, "/sitemap.xml")
    since = header(first, "Last-Modified")
    assert since is not None
    clock.now = 1_700_000_000.7
    provider.token = "v2"
    second, _ = await fetch(core, "/sitemap.xml", if_modified_since=since)
    assert second.status == 200


class DatedOnly:
    """A provider whose version is a time only (no token), as GenericSitemap's."""

    def __init__(self) -> None:
        self.slug = "a"

    async def entries(self) -> AsyncIterator[str]:
        for i in range(3):
            yield f"/{self.slug}/{i}"

    async def version(self) -> ProviderVersion:
        return ProviderVersion(last_modified=datetime(2024, 1, 1, tzinfo=timezone.utc))


class DatedToken(Flaky):
    """A token that changes with content and a newest lastmod that a delete leaves put."""

    async def version(self) -> ProviderVersion:
        return ProviderVersion(
            token=self.token, last_modified=datetime(2024, 1, 1, tzinfo=timezone.utc)
        )


async def test_a_time_alone_never_serves_a_stored_render_of_other_content() -> None:
    """A version with a time but no token cannot tell a rename from no change: no ETag
    from it, so GET always serves the current entries (never a stored older render)."""
    provider = DatedOnly()
    core = make_core({"p": provider})
    first, body = await fetch(core, "/sitemap-p-1.xml")
    assert b"/a/2" in body and header(first, "ETag") is None
    provider.slug = "b"  # a rename that leaves the newest lastmod where it was
    for path in ("/sitemap-p-1.xml", "/sitemap.xml"):
        _, again = await fetch(core, path)
        assert b"/b/2" in again and b"/a/2" not in again


async def test_if_modified_since_never_answers_304_for_changed_content_without_a_store() -> None:
    """Last-Modified is never older than the content's first sight, even when no render
    is stored (too big, evicted, another process): a bare If-Modified-Since from before a
    change gets 200."""
    provider = DatedToken()
    core = _core(provider, memory_bytes=0)  # nothing is ever stored
    first, _ = await fetch(core, "/sitemap-p-1.xml")
    since = header(first, "Last-Modified")
    assert since is not None
    await anyio.sleep(1.05)  # the next version is first seen in a later second
    provider.token = "v2"
    again, _ = await fetch(core, "/sitemap-p-1.xml", if_modified_since=since)
    assert again.status == 200


@asyncio_only
async def test_stale_log_lines_name_the_document_not_the_store_key(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    """Serving stale, and a failed background refresh, log the document's file name
    (``sitemap-p-1.xml``), not the store key (a fingerprint and a ``Target(...)`` repr)."""
    provider = Flaky()
    core = _core(provider, ttl=10, stale_while_revalidate=100, stale_if_error=600)
    await fetch(core, "/sitemap-p-1.xml")
    provider.token, provider.fail_entries = "v2", True  # the refresh's render fails
    clock.now += 50
    with caplog.at_level(logging.INFO, "sitemap_middleware"):
        await fetch(core, "/sitemap-p-1.xml")
        with anyio.fail_after(5):
            while core._refreshes._running:
                await anyio.sleep(0.01)
        provider.fail_version = True
        clock.now += 100  # past stale-while-revalidate, within stale-if-error
        reply, _ = await fetch(core, "/sitemap-p-1.xml")
    assert reply.status == 200
    messages = [
        r.getMessage()
        for r in caplog.records
        if "stored render" in r.getMessage() or "refresh failed" in r.getMessage()
    ]
    assert any("(stale-while-revalidate;" in m for m in messages), caplog.text
    assert any("(stale-if-error;" in m for m in messages), caplog.text
    assert any("background refresh failed" in m for m in messages), caplog.text
    for message in messages:
        assert message.startswith("sitemap sitemap-p-1.xml: "), message
        assert "Target(" not in message and core.config.fingerprint not in message, message
    await core.aclose()


class Evicting(MemoryRenderStore):
    """An in-process store whose bodies can be lost or damaged while their meta stays
    (what Redis's maxmemory LRU or a bad write does to a shared store)."""

    def __init__(self) -> None:
        super().__init__()
        self.damage: str | None = None

    async def body(self, key: str, meta: RenderMeta, *, gzip: bool = False) -> bytes | None:
        found = await super().body(key, meta, gzip=gzip)
        if found is None or self.damage is None:
            return found
        return None  # a lost or damaged body reads as None (the store checks its digest)


@pytest.mark.parametrize("damage", ["evicted", "damaged"])
async def test_a_lost_stored_body_within_ttl_is_a_miss_not_a_503(clock: Clock, damage: str) -> None:
    """With ttl > 0, a body gone from the store while its meta stays is rendered again."""
    provider = Flaky()
    store = Evicting()
    core = _core(provider, ttl=60, store=store)
    first, body = await fetch(core, "/sitemap-p-1.xml")
    assert first.status == 200
    store.damage = damage
    clock.now += 10
    again, same = await fetch(core, "/sitemap-p-1.xml")
    assert again.status == 200 and same == body
    assert header(again, "etag") == header(first, "etag")
    store.damage = None
    clock.now += 10
    third, stored = await fetch(core, "/sitemap-p-1.xml")  # stored again, as before
    assert third.status == 200 and stored == body


async def test_content_that_returns_to_an_earlier_version_is_stamped_anew(clock: Clock) -> None:
    """A -> B -> A: the second A is newer than B, so If-Modified-Since with B's date gets
    A whole (a 200), never a 304 with the old A stamp."""
    provider = Flaky()
    core = _core(provider)
    a, _ = await fetch(core, "/sitemap.xml")
    clock.now += 100
    provider.token = "v2"
    b, b_body = await fetch(core, "/sitemap.xml")
    b_date = header(b, "Last-Modified")
    assert b_date is not None and b_date != header(a, "Last-Modified")
    clock.now += 100
    provider.token = "v1"
    again, body = await fetch(core, "/sitemap.xml", if_modified_since=b_date)
    assert again.status == 200 and body != b_body
    assert header(again, "Last-Modified") != header(a, "Last-Modified")


class DatedDeleting:
    """A time-only version (as GenericSitemap's date_field gives): deleting an older item
    leaves the newest date where it was."""

    def __init__(self) -> None:
        self.items = ["/a", "/b", "/c"]

    async def entries(self) -> AsyncIterator[str]:
        for item in self.items:
            yield item

    async def version(self) -> ProviderVersion:
        return ProviderVersion(last_modified=datetime(2024, 1, 1, tzinfo=timezone.utc))


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-p-1.xml", "/sitemap_index.xml"])
async def test_a_time_only_version_never_answers_304_after_a_delete(path: str) -> None:
    """A time cannot tell that an older item was deleted: If-Modified-Since with the date
    sent gets the changed document (200), never a 304."""
    provider = DatedDeleting()
    core = make_core({"p": provider, "q": ["/x"]})
    first, body = await fetch(core, path)
    since = header(first, "Last-Modified") or "Mon, 01 Jan 2024 00:00:00 GMT"
    provider.items.remove("/b")
    again, _ = await fetch(core, path, if_modified_since=since)
    _, now = await fetch(core, path)
    # A 304 only for a body that did not change (the index lists pages: it may not).
    assert again.status == 200 or now == body, (again.status, path)
