"""What tests serve: a provider that records how it is used, a list a test may change
between requests, a store that records being closed, an entry with every extension."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any

from sitemap_middleware import (
    Alternate,
    Image,
    NewsArticle,
    SitemapEntry,
    Video,
)
from sitemap_middleware.providers import ProviderVersion
from sitemap_middleware.stores import MemoryRenderStore


class CountingProvider:
    """A provider with every capability that records how it is used."""

    def __init__(
        self,
        count: int,
        *,
        host: str = "https://example.com",
        versioned: bool = True,
        countable: bool = True,
        fail_after: int | None = None,
        hang_after: int | None = None,
        healthy_passes: int = 0,
    ) -> None:
        self.n = count
        self.host = host
        self.versioned = versioned
        self.countable = countable
        self.fail_after = fail_after
        self.hang_after = hang_after
        #: Passes that run normally before fail_after/hang_after apply: 1 lets the page
        #: plan (one measuring pass) succeed, so the failure hits the served page.
        self.healthy_passes = healthy_passes
        self.iterations = 0
        self.entries_yielded = 0
        self.closed = 0

    def _entry(self, i: int) -> SitemapEntry:
        return SitemapEntry(
            f"{self.host}/products/{i}?ref=a&b={i}",
            lastmod=datetime(2024, 1, 1 + i % 28, tzinfo=timezone.utc),
            changefreq="daily",
            priority=0.5,
        )

    async def _gen(self, start: int, stop: int) -> AsyncIterator[SitemapEntry]:
        import anyio

        self.iterations += 1
        faulty = self.iterations > self.healthy_passes
        try:
            for i in range(start, stop):
                if faulty and self.fail_after is not None and i >= self.fail_after:
                    raise RuntimeError(f"database went away at row {i}")
                if faulty and self.hang_after is not None and i >= self.hang_after:
                    await anyio.sleep_forever()
                self.entries_yielded += 1
                yield self._entry(i)
                if i % 256 == 0:
                    await anyio.sleep(0)  # let disconnects and cancellation in
        finally:
            self.closed += 1

    def entries(self) -> AsyncIterator[SitemapEntry]:
        return self._gen(0, self.n)

    def page(self, offset: int, limit: int) -> AsyncIterator[SitemapEntry]:
        return self._gen(offset, min(self.n, offset + limit))

    async def count(self) -> int:
        if not self.countable:
            raise AssertionError("count() used on a provider that disabled it")
        return self.n

    async def version(self) -> ProviderVersion:
        if not self.versioned:
            return ProviderVersion()
        return ProviderVersion(
            token=f"v{self.n}", last_modified=datetime(2024, 1, 28, tzinfo=timezone.utc)
        )


class ListProvider:
    """A generator provider over a list a test may change between requests (no version:
    every pass reads it as it is now)."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    async def entries(self) -> Any:
        for item in list(self.items):
            yield item


class RecordingStore(MemoryRenderStore):
    """An in-process RenderStore that records whether it was closed."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


#: Text that must come out escaped wherever it is written (markup, quotes, an ampersand).
EVIL = "<script>alert('x')</script> & \"quoted\" <b>bold</b>"


def rich_entry(label: str = "x") -> SitemapEntry:
    """An entry with every field and extension, its texts :data:`EVIL`."""
    return SitemapEntry(
        f"/rich/{label}?a=1&b='2'",
        lastmod="2024-03-04T05:06:07+00:00",
        changefreq="weekly",
        priority=0.7,
        images=[Image("/img/1.png"), Image("https://cdn.example.net/2.png")],
        videos=[
            Video(
                thumbnail_loc="/t.jpg",
                title=EVIL[:100],
                description=EVIL,
                content_loc="/v.mp4",
                duration=185,
                tags=[EVIL[:50]],
                uploader=EVIL,
                uploader_info="/people/1",
                family_friendly=True,
                restriction=("allow", ("DE", "FR")),
            )
        ],
        news=NewsArticle(
            publication_name=EVIL, language="en", publication_date="2024-03-04", title=EVIL
        ),
        alternates=[Alternate("de", "/de/rich"), Alternate("x-default", "/rich")],
    )
