"""One parsed record (``<url>``, ``<sitemap>``, RSS ``<item>``, Atom ``<entry>``) -> an entry.

The element is small (one record, built by :mod:`.parse`); every value goes through the
same validation as a provider's (:class:`SitemapEntry`, :class:`Video`...), so a parsed
entry is exactly what the middleware would accept and write.
"""

from __future__ import annotations

from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import urljoin
from xml.etree.ElementTree import Element

from .._exceptions import InvalidEntryError
from .._sansio.extensions import Alternate, Image, NewsArticle, Video
from .._sansio.models import SitemapEntry
from .._sansio.urlset_writer import EXTENSION_NS, SITEMAP_NS

__all__ = ["ATOM_NS", "XML_BASE", "feed_entry", "index_child", "record_loc", "urlset_entry"]

ATOM_NS = "http://www.w3.org/2005/Atom"
#: ``xml:base`` (Clark notation); a record carries the base in scope where it starts.
XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
_T = TypeVar("_T")
_SM = "{" + SITEMAP_NS + "}"
_IMAGE = "{" + EXTENSION_NS["image"] + "}"
_VIDEO = "{" + EXTENSION_NS["video"] + "}"
_NEWS = "{" + EXTENSION_NS["news"] + "}"
_XHTML = "{" + EXTENSION_NS["xhtml"] + "}"
_ATOM = "{" + ATOM_NS + "}"


def _text(element: Element, tag: str) -> str | None:
    found = element.find(tag)
    if found is None:
        return None
    return (found.text or "").strip()


def _typed(label: str, text: str | None, kind: Callable[[str], _T]) -> _T | None:
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        raise InvalidEntryError(label, text, f"not a valid {kind.__name__}") from None


def _yes_no(label: str, text: str | None) -> bool | None:
    if text is None:
        return None
    if text.lower() not in ("yes", "no"):
        raise InvalidEntryError(label, text, "must be yes or no")
    return text.lower() == "yes"


def _relationship(element: Element, tag: str) -> tuple[str, tuple[str, ...]] | None:
    found = element.find(tag)
    if found is None:
        return None
    return found.get("relationship", ""), tuple((found.text or "").split())


def _video(v: Element) -> Video:
    uploader = v.find(_VIDEO + "uploader")
    return Video(
        thumbnail_loc=_text(v, _VIDEO + "thumbnail_loc") or "",
        title=_text(v, _VIDEO + "title") or "",
        description=_text(v, _VIDEO + "description") or "",
        content_loc=_text(v, _VIDEO + "content_loc"),
        player_loc=_text(v, _VIDEO + "player_loc"),
        duration=_typed("video.duration", _text(v, _VIDEO + "duration"), int),
        expiration_date=_text(v, _VIDEO + "expiration_date"),
        rating=_typed("video.rating", _text(v, _VIDEO + "rating"), float),
        view_count=_typed("video.view_count", _text(v, _VIDEO + "view_count"), int),
        publication_date=_text(v, _VIDEO + "publication_date"),
        tags=tuple((tag.text or "").strip() for tag in v.iter(_VIDEO + "tag")),
        family_friendly=_yes_no("video.family_friendly", _text(v, _VIDEO + "family_friendly")),
        restriction=_relationship(v, _VIDEO + "restriction"),
        requires_subscription=_yes_no(
            "video.requires_subscription", _text(v, _VIDEO + "requires_subscription")
        ),
        uploader=None if uploader is None else (uploader.text or "").strip(),
        uploader_info=None if uploader is None else uploader.get("info"),
        platform=_relationship(v, _VIDEO + "platform"),
        live=_yes_no("video.live", _text(v, _VIDEO + "live")),
    )


def _news(n: Element) -> NewsArticle:
    publication = n.find(_NEWS + "publication")
    holder = publication if publication is not None else Element("none")
    return NewsArticle(
        publication_name=_text(holder, _NEWS + "name") or "",
        language=_text(holder, _NEWS + "language") or "",
        publication_date=_text(n, _NEWS + "publication_date") or "",
        title=_text(n, _NEWS + "title") or "",
    )


def urlset_entry(url: Element, loc: str) -> SitemapEntry:
    """A ``<url>`` as an entry, its extensions included (``InvalidEntryError`` if bad)."""
    news = url.find(_NEWS + "news")
    return SitemapEntry(
        loc,
        lastmod=_text(url, _SM + "lastmod"),
        changefreq=_text(url, _SM + "changefreq"),
        priority=_typed("priority", _text(url, _SM + "priority"), float),
        images=tuple(Image(_text(i, _IMAGE + "loc") or "") for i in url.iter(_IMAGE + "image")),
        videos=tuple(_video(v) for v in url.iter(_VIDEO + "video")),
        news=None if news is None else _news(news),
        alternates=tuple(
            Alternate(link.get("hreflang", ""), link.get("href", "").strip())
            for link in url.iter(_XHTML + "link")
            if link.get("rel") == "alternate"
        ),
    )


def index_child(sitemap: Element, loc: str) -> SitemapEntry:
    """A ``<sitemap>`` of an index: its location and lastmod."""
    return SitemapEntry(loc, lastmod=_text(sitemap, _SM + "lastmod"))


def record_loc(kind: str, record: Element) -> str:
    """The location a record names (``""`` when it names none)."""
    if kind in ("urlset", "sitemapindex"):
        return _text(record, _SM + "loc") or ""
    base = record.get(XML_BASE, "")
    if kind == "rss":
        item = record.find("link")
        if item is None or not (text := (item.text or "").strip()):
            return ""
        return urljoin(urljoin(base, item.get(XML_BASE, "")), text)
    # The entry's own links only: a <source> element holds the links of another feed.
    for link in record.findall(_ATOM + "link"):
        if link.get("rel", "alternate") == "alternate":
            href = link.get("href", "").strip()
            return urljoin(urljoin(base, link.get(XML_BASE, "")), href) if href else ""
    return ""


def feed_entry(kind: str, record: Element, loc: str) -> SitemapEntry:
    """An RSS 2.0 ``<item>`` (link, pubDate) or Atom 1.0 ``<entry>`` (link, updated)."""
    lastmod: Any = None
    if kind == "rss":
        published = _text(record, "pubDate") or _text(record, _ATOM + "updated")
        if published:
            try:
                lastmod = parsedate_to_datetime(published)
            except (TypeError, ValueError):
                lastmod = published  # perhaps a W3C date; validated below
    else:
        lastmod = _text(record, _ATOM + "updated") or _text(record, _ATOM + "published")
    return SitemapEntry(loc, lastmod=lastmod)
