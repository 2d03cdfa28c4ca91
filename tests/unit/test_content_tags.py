"""ETags from rendered bytes: ``Renders(etag="content")`` (``_engine/content_tags.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any

import anyio
import pytest
from werkzeug.http import http_date

from sitemap_middleware import HTTPSettings, Renders, SitemapConfig
from sitemap_middleware._engine import shared
from sitemap_middleware._engine.core import RequestInfo, SitemapCore
from sitemap_middleware.providers import ProviderVersion
from tests.helpers import fetch, header

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


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(shared, "wall_clock", fake)
    return fake


def _core(provider: Any, renders: dict[str, Any] | None = None, **options: Any) -> SitemapCore:
    return SitemapCore(
        SitemapConfig(
            base_url="https://example.com",
            sections={"p": provider},
            renders=Renders(etag="content", **(renders or {})),
            **options,
        )
    )


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
