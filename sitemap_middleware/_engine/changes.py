"""The changes sitemap as a document: the recently changed entries of its sections.

It reads every entry of its sections once, keeping at most ``Changes.limit`` in a heap
(``_sansio/changes.py``), and renders a urlset with the pages' writer, before the
headers: its ETag is the bytes' (no Last-Modified), so the core's 304, HEAD and gzip
apply as to every document. The window moves with the clock while versions stand still,
so versions alone cannot validate it; when every section reports one, the render is
kept per base URL until a version changes or its oldest entry leaves the window (what
it lists cannot change before either), and a revalidation reads no entry.

Nothing changed: 404 (the sitemap XSD wants at least one ``<url>``). The index lists
it (first) while a planned page of its sections has a lastmod within the
window: see :func:`changes_lastmod`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import ProviderError
from .._feed_settings import Changes
from .._logs import logger
from .._sansio.changes import RecentN
from .._sansio.etag import content_etag, version_parts
from .._sansio.models import SitemapEntry
from .._sansio.routing import Target
from .._sansio.urls import BaseURL
from .._sansio.urlset_writer import UrlsetWriter
from .._sansio.values import to_datetime
from .answer import XML_TYPE, Document, HTTPError
from .bodies import bytes_body, opened
from .feeds import FeedDocuments
from .planning import SectionPlan, page_room, section_version, stylesheet_href
from .urlsets import render_failed

__all__ = ["ChangesDocuments", "changes_lastmod", "changes_sections"]

#: Base URLs whose render is kept (one each): hosts are few, but never unbounded.
MAX_KEPT = 64


def changes_sections(config: SitemapConfig, changes: Changes) -> list[_ResolvedSection]:
    """The sections a changes sitemap reads (``None``: every section)."""
    if changes.sections is None:
        return list(config.resolved_sections)
    found = [config.section(name) for name in changes.sections]
    return [section for section in found if section is not None]


class ChangesDocuments:
    """Builds the changes sitemap's :class:`Document`."""

    def __init__(self, config: SitemapConfig, feeds: FeedDocuments) -> None:
        assert config.changes is not None
        self.config, self.changes, self._feeds = config, config.changes, feeds
        self.now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
        #: base prefix -> (versions, valid until, bytes, ETag)
        self._kept: dict[str, tuple[object, datetime | None, bytes, str]] = {}

    async def get(self, target: Target, base: BaseURL) -> Document:
        config, changes = self.config, self.changes
        sections = changes_sections(config, changes)
        now = self.now()
        try:
            versions = [await section_version(config, s) for s in sections]
        except ProviderError as exc:
            raise render_failed(config, changes.name, exc) from None
        parts = [version_parts(v) for v in versions]
        versioned = all(p is not None for p in parts)
        kept = self._kept.get(base.prefix) if versioned else None
        if kept is not None and kept[0] == parts and (kept[1] is None or now < kept[1]):
            data, etag = kept[2], kept[3]
        else:
            data, until = await self._render(sections, base, now)
            etag = content_etag(changes.name, data, changes.key)
            if versioned:
                if len(self._kept) >= MAX_KEPT:
                    self._kept.pop(next(iter(self._kept)))
                self._kept[base.prefix] = (parts, until, data, etag)
        if not data:  # the XSD wants a <url>: an empty urlset would be invalid
            raise HTTPError(404, f"Not Found: no URL changed in the last {changes.hours:g} hours")
        return Document(XML_TYPE, etag, None, lambda: opened(bytes_body(data)))

    async def _render(
        self, sections: Sequence[_ResolvedSection], base: BaseURL, now: datetime
    ) -> tuple[bytes, datetime | None]:
        """The urlset (``b""``: nothing changed) and when its oldest entry leaves the
        window (``None``: never, before a version changes)."""
        changes = self.changes
        recent = RecentN(changes.limit, now - changes.window)

        def take(loc: str, tail: str, entry: SitemapEntry | None) -> bool:
            recent.offer((loc, tail, entry))
            return True

        await self._feeds.read(changes.name, sections, base, take)
        if recent.undated:
            logger.info(
                "sitemap %r: left out %d entries without lastmod", changes.name, recent.undated
            )
        newest = recent.newest()
        if not newest:
            return b"", None
        config = self.config
        writer = UrlsetWriter(
            label=changes.name,
            resolve=base.join_if_relative,
            max_urls=changes.limit,
            max_bytes=config.max_bytes_per_page,
            stylesheet_href=stylesheet_href(config, base),
            room=page_room(config, base),
        )
        writer.cap = True  # what fits a file (bytes, 1,000 news); the rest is older
        items = [item for _, item in newest]
        text = writer.open([entry for _, _, entry in items if entry is not None])
        text += writer.urls(items) + writer.close()
        return text.encode("utf-8"), newest[-1][0] + changes.window


def changes_lastmod(
    config: SitemapConfig, plans: Sequence[SectionPlan], now: datetime | None = None
) -> datetime | None:
    """The index lastmod of the changes sitemap, or ``None`` to leave it out: the newest
    planned page lastmod of its sections, when within the window (no entry is read)."""
    changes = config.changes
    if changes is None:
        return None
    since = (now or datetime.now(timezone.utc)) - changes.window
    names = {section.name for section in changes_sections(config, changes)}
    stamps = [
        to_datetime(page.lastmod)
        for plan in plans
        if plan.name in names
        for page in plan.pages
        if page.lastmod is not None
    ]
    newest = max(stamps, default=None)
    return newest if newest is not None and newest >= since else None
