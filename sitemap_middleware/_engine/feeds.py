"""Feeds and llms.txt as documents: read from the sections' entry streams, bounded.

A feed reads every entry of its sections once, keeping the ``limit`` newest in a heap
(``_sansio/feeds.py``), so its memory is O(limit) whatever the sections hold; llms.txt
keeps the first ``limit`` entries of each heading. Both answer through the core like the
sitemaps (host, method, encoding, 304, HEAD, gzip). Validators:

- every section reports a version token: the ETag and Last-Modified come from the
  versions (as a page's), and a 304 reads no entry; the body is read when it opens;
- otherwise the document is rendered before the headers and its ETag is the bytes'
  (no Last-Modified: a time no provider vouches for is never sent).

A failing provider answers 503 before the status line; a feed with no dated entry 404.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._feed_settings import Feed, LlmsTxt
from .._logs import logger
from .._sansio.etag import content_etag, document_etag, version_parts
from .._sansio.feeds import (
    ATOM_TYPE,
    RSS_TYPE,
    FeedHead,
    NewestN,
    atom_feed,
    entry_title,
    item_of,
    rss_feed,
)
from .._sansio.llms import LLMS_TYPE, llms_head, llms_heading, llms_link
from .._sansio.models import SitemapEntry
from .._sansio.routing import Kind, Target
from .._sansio.urls import BaseURL
from .answer import Document, HTTPError
from .bodies import bytes_body, opened
from .planning import news_cutoff, section_version
from .stream import EntryStream
from .urlsets import render_failed

__all__ = ["FeedDocuments"]

Render = Callable[[], Awaitable[bytes]]
#: Entries without lastmod have no place in an order by recency: left out and counted.
LOG_UNDATED = "sitemap feed %r: left out %d entries without lastmod"
Take = Callable[[str, str, SitemapEntry | None], bool]


class FeedDocuments:
    """Builds the :class:`Document` of a feed or of llms.txt."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self._feeds = {feed.name: feed for feed in config.feeds}

    async def get(self, target: Target, base: BaseURL) -> Document:
        if target.kind is Kind.LLMS_TXT and self.config.llms_txt is not None:
            llms = self.config.llms_txt
            sections = self._sections(llms.all_sections())
            return await self._document(
                llms.name, llms.key, LLMS_TYPE, base, sections, lambda: self._llms(llms, base)
            )
        feed = self._feeds.get(target.name or "")
        if feed is None:  # pragma: no cover - routing names configured feeds only
            raise HTTPError(404, "Not Found")
        kind = ATOM_TYPE if feed.format == "atom" else RSS_TYPE
        sections = self._sections(feed.sections)
        return await self._document(
            feed.name, feed.key, kind, base, sections, lambda: self._feed(feed, base)
        )

    def _sections(self, names: Sequence[str]) -> list[_ResolvedSection]:
        found = [self.config.section(name) for name in names]
        return [section for section in found if section is not None]

    async def _document(
        self,
        name: str,
        key: str,
        content_type: str,
        base: BaseURL,
        sections: list[_ResolvedSection],
        render: Render,
    ) -> Document:
        config = self.config
        try:
            versions = [await section_version(config, s) for s in sections]
        except ProviderError as exc:
            raise render_failed(config, name, exc) from None
        parts = [version_parts(version) for version in versions]
        etag = document_etag(config.fingerprint, base.prefix, f"{name}|{key}", parts)
        if etag is not None:
            times = [v.last_modified for v in versions if v is not None and v.last_modified]
            modified = max(times) if times and len(times) == len(versions) else None

            async def open_later() -> AsyncIterator[bytes]:
                return bytes_body(await render())

            return Document(content_type, etag, modified, open_later)
        data = await render()  # bounded: at most the limit's entries
        etag = content_etag(name, data, key)
        return Document(content_type, etag, None, lambda: opened(bytes_body(data)))

    def _stream(self, section: _ResolvedSection, base: BaseURL) -> EntryStream:
        config = self.config
        return EntryStream(
            section.name,
            section.provider,
            base,
            timeout=config.provider_timeout,
            strict=config.strict,
            news_cutoff=news_cutoff(config, section),
            quiet=True,  # the sitemaps log invalid entries; a feed reads them again
            exclusion=section.exclusion,
        )

    async def read(
        self, name: str, sections: Sequence[_ResolvedSection], base: BaseURL, take: Take
    ) -> None:
        """Feed every admitted entry of ``sections`` to ``take`` until it returns False."""
        for section in sections:
            stream = self._stream(section, base)
            try:
                while batch := await stream.next_batch():
                    if not all(take(loc, tail, entry) for loc, tail, entry in batch):
                        return
            except (ProviderError, InvalidEntryError) as exc:  # (strict mode)
                raise render_failed(self.config, name, exc) from None
            finally:
                await stream.aclose()

    async def _feed(self, feed: Feed, base: BaseURL) -> bytes:
        newest = NewestN(feed.limit)
        undated = 0

        def take(loc: str, tail: str, entry: SitemapEntry | None) -> bool:
            nonlocal undated
            item = item_of(loc, tail, entry)
            if item is None:
                undated += 1
            else:
                newest.offer(item)
            return True

        await self.read(feed.name, self._sections(feed.sections), base, take)
        if undated:
            logger.info(LOG_UNDATED, feed.name, undated)
        items = newest.newest()
        if not items:
            raise HTTPError(404, "Not Found: this feed has no entry with a lastmod yet")
        title = feed.title or base.prefix.split("://", 1)[1].rstrip("/")
        head = FeedHead(
            title=title,
            self_url=base.file_url(feed.name),
            site_url=base.prefix,
            resolve=base.join_if_relative,
            author=feed.author or title,
            description=feed.description or title,
        )
        text = atom_feed(head, items) if feed.format == "atom" else rss_feed(head, items)
        return text.encode("utf-8")

    async def _llms(self, llms: LlmsTxt, base: BaseURL) -> bytes:
        out = [llms_head(llms.title, llms.summary)]
        for heading, names in llms.sections.items():
            out.append(llms_heading(heading))
            out += await self._links(llms, self._sections(names), base)
        return "".join(out).encode("utf-8")

    async def _links(
        self, llms: LlmsTxt, sections: Sequence[_ResolvedSection], base: BaseURL
    ) -> list[str]:
        """The first ``llms.limit`` entries of ``sections`` as links, in provider order."""
        links: list[str] = []

        def take(loc: str, tail: str, entry: SitemapEntry | None) -> bool:
            links.append(llms_link(entry_title(loc, entry), loc))
            return len(links) < llms.limit

        await self.read(llms.name, sections, base, take)
        return links
