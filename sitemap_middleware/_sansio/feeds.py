"""Feeds: picking the newest entries in bounded memory, and writing Atom 1.0 / RSS 2.0.

Atom follows RFC 4287 (every entry: id, title, updated, link; the feed: id, title,
updated = its newest entry, author, a self link); RSS follows RSS 2.0 with an
``atom:link rel="self"``. Entries with videos carry Media RSS (``media:content`` with its
``media:thumbnail``). Dates come from each entry's lastmod: RFC 3339 for Atom, RFC 822 for
RSS (``werkzeug.http.http_date``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from werkzeug.http import http_date

from .extensions import Video
from .models import SitemapEntry
from .values import to_datetime
from .xml import escape, split_tail

__all__ = [
    "ATOM_TYPE",
    "MEDIA_NS",
    "RSS_TYPE",
    "FeedHead",
    "FeedItem",
    "NewestN",
    "atom_feed",
    "entry_title",
    "item_of",
    "rss_feed",
]

ATOM_TYPE = "application/atom+xml; charset=utf-8"
RSS_TYPE = "application/rss+xml; charset=utf-8"
ATOM_NS = "http://www.w3.org/2005/Atom"
MEDIA_NS = "http://search.yahoo.com/mrss/"


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One feed entry: its absolute URL, when it changed, its title and its videos."""

    loc: str
    updated: datetime  # aware
    title: str
    videos: tuple[Video, ...] = ()


def item_of(loc: str, tail: str, entry: SitemapEntry | None) -> FeedItem | None:
    """The feed item of an admitted entry, or ``None`` when it has no lastmod.

    Its title: see :func:`entry_title` (sitemap entries carry no page title).
    """
    if entry is not None and entry.lastmod is not None:
        updated = to_datetime(entry.lastmod)
    else:
        lastmod = split_tail(tail)[0]
        if not lastmod:
            return None
        updated = to_datetime(lastmod)
    videos = entry.videos if entry is not None else ()
    return FeedItem(loc, updated, entry_title(loc, entry), videos)


def entry_title(loc: str, entry: SitemapEntry | None) -> str:
    """An entry's title: its news article's, else its first video's, else its URL."""
    if entry is not None:
        if entry.news is not None:
            return entry.news.title
        if entry.videos:
            return entry.videos[0].title
    return loc


class NewestN:
    """The ``n`` newest of the items offered, in O(n) memory (a min-heap of n).

    Ties go to the item offered first, so the result is deterministic: newest first,
    then in the order offered.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self._heap: list[tuple[datetime, int, FeedItem]] = []
        self._offered = 0

    def offer(self, item: FeedItem) -> None:
        self._offered += 1
        key = (item.updated, -self._offered, item)
        if len(self._heap) < self.n:
            heapq.heappush(self._heap, key)
        elif key[:2] > self._heap[0][:2]:
            heapq.heapreplace(self._heap, key)

    def newest(self) -> list[FeedItem]:
        """The kept items, newest first."""
        return [item for _, _, item in sorted(self._heap, key=lambda k: k[:2], reverse=True)]


@dataclass(frozen=True, slots=True)
class FeedHead:
    """What a feed says about itself."""

    title: str
    self_url: str  # the feed's own URL (Atom id, rel="self")
    site_url: str  # the site it belongs to (rel="alternate", RSS <link>)
    resolve: Callable[[str], str]  # base-relative URLs (of videos) to absolute ones
    author: str
    description: str


def _rfc3339(value: datetime) -> str:
    text = value.astimezone(timezone.utc).isoformat()
    return text.removesuffix("+00:00") + "Z"


def _media(videos: Sequence[Video], resolve: Callable[[str], str]) -> str:
    """Media RSS for an entry's videos (relative URLs resolved against the base URL)."""
    parts = []
    for video in videos:
        content, player = video.content_loc, video.player_loc
        url = f' url="{escape(resolve(content))}"' if content else ""
        duration = f' duration="{video.duration}"' if video.duration is not None else ""
        player = f'<media:player url="{escape(resolve(player))}"/>' if player else ""
        parts.append(
            f'<media:content{url} medium="video"{duration}>{player}'
            f'<media:title type="plain">{escape(video.title)}</media:title>'
            f'<media:description type="plain">{escape(video.description)}</media:description>'
            f'<media:thumbnail url="{escape(resolve(video.thumbnail_loc))}"/></media:content>'
        )
    return "".join(parts)


def atom_feed(head: FeedHead, items: Sequence[FeedItem]) -> str:
    """An Atom 1.0 feed of ``items`` (at least one: ``<updated>`` is the newest's)."""
    updated = max(item.updated for item in items)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<feed xmlns="{ATOM_NS}" xmlns:media="{MEDIA_NS}">\n'
        f"<id>{escape(head.self_url)}</id>\n"
        f"<title>{escape(head.title)}</title>\n"
        f"<updated>{_rfc3339(updated)}</updated>\n"
        f'<link rel="self" type="application/atom+xml" href="{escape(head.self_url)}"/>\n'
        f'<link rel="alternate" href="{escape(head.site_url)}"/>\n'
        f"<author><name>{escape(head.author)}</name></author>\n"
    ]
    for item in items:
        loc = escape(item.loc)
        out.append(
            f"<entry><id>{loc}</id><title>{escape(item.title)}</title>"
            f'<updated>{_rfc3339(item.updated)}</updated><link rel="alternate" href="{loc}"/>'
            f"{_media(item.videos, head.resolve)}</entry>\n"
        )
    out.append("</feed>\n")
    return "".join(out)


def rss_feed(head: FeedHead, items: Sequence[FeedItem]) -> str:
    """An RSS 2.0 feed of ``items`` (at least one: lastBuildDate is the newest's)."""
    updated = max(item.updated for item in items)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<rss version="2.0" xmlns:atom="{ATOM_NS}" xmlns:media="{MEDIA_NS}">\n<channel>\n'
        f"<title>{escape(head.title)}</title>\n"
        f"<link>{escape(head.site_url)}</link>\n"
        f"<description>{escape(head.description)}</description>\n"
        f"<lastBuildDate>{http_date(updated)}</lastBuildDate>\n"
        f'<atom:link rel="self" type="application/rss+xml" href="{escape(head.self_url)}"/>\n'
    ]
    for item in items:
        loc = escape(item.loc)
        out.append(
            f"<item><title>{escape(item.title)}</title><link>{loc}</link>"
            f'<guid isPermaLink="true">{loc}</guid><pubDate>{http_date(item.updated)}</pubDate>'
            f"{_media(item.videos, head.resolve)}</item>\n"
        )
    out.append("</channel>\n</rss>\n")
    return "".join(out)
