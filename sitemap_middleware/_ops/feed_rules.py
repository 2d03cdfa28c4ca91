"""Feeds listed as sitemaps (RSS 2.0, Atom 1.0): what ``check`` reads from them.

Search engines take a feed's links as a sitemap's URLs (sitemaps.org, *Other formats*),
and the middleware lists its feeds in robots.txt, so a feed is a document ``check``
follows: each entry's link is a URL to check; Atom's ``<updated>`` (RFC 3339, a profile
of W3C Datetime) is its lastmod, RSS's ``<pubDate>`` an RFC 822 date.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

from werkzeug.http import parse_date

from .findings import DocumentReport
from .rules import Entry, Parsed, parse_w3c

__all__ = ["ATOM_NS", "is_feed", "parse_feed"]

ATOM_NS = "http://www.w3.org/2005/Atom"


def is_feed(localname: str, namespace: str | None) -> bool:
    return (localname, namespace) in (("feed", ATOM_NS), ("rss", None))


def parse_feed(root: Any, report: DocumentReport, url: str) -> Parsed:
    """A feed's links as entries (no XSD: a feed is not a sitemap schema's document),
    relative ones resolved as feed readers do: against ``xml:base`` (feed, entry, link),
    else the feed's own URL."""
    parsed = Parsed("feed")
    atom = root.tag == f"{{{ATOM_NS}}}feed"
    items = root.iterfind("a:entry", {"a": ATOM_NS}) if atom else root.iterfind("channel/item")
    for item in items:
        if atom:
            links = item.iterfind("a:link", {"a": ATOM_NS})  # its own, not its <source>'s
            own = [link for link in links if link.get("rel", "alternate") == "alternate"]
            href = (own[0].get("href") or "").strip() if own else ""
            loc = urljoin(url, urljoin(own[0].base or "", href)) if href else ""
            text = item.findtext("a:updated", None, {"a": ATOM_NS})
            lastmod = parse_w3c(text) if text else None
        else:
            link = (item.findtext("link") or "").strip()
            loc = urljoin(url, link) if link else ""
            text = item.findtext("pubDate")
            lastmod = parse_date(text) if text else None
        if not loc.strip():
            where = "an <entry>" if atom else "an <item>"
            report.add(
                "error", "feed-link-missing", f"{where} has no link (line {item.sourceline})"
            )
            continue
        if text and lastmod is None:
            report.add("error", "feed-date-invalid", f"date {text!r} cannot be read", loc.strip())
        parsed.entries.append(Entry(loc.strip(), lastmod))
    return parsed
