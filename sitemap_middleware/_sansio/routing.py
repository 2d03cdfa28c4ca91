"""Routing: which of our documents (if any) a request path names.

This module alone owns page naming (``<prefix><section>-<n>.xml``) and the route table.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Literal

from .urls import mount_directory

__all__ = ["Format", "Kind", "Routes", "Target", "match", "page_name"]

#: Page numbers beyond this are certainly past the end (50,000 pages x 50,000 URLs).
MAX_PAGE_DIGITS = 9
STYLESHEET_NAME = "sitemap.xsl"
TEXT_SITEMAP_NAME = "sitemap.txt"
#: What a sitemap document is written as: XML, text (one URL a line) or an HTML view.
Format = Literal["xml", "txt", "html"]


class Kind(enum.Enum):
    ROBOTS = "robots"
    ROOT = "root"  # sitemap.xml: a urlset when everything fits, else the index
    INDEX = "index"
    PAGE = "page"
    STYLESHEET = "stylesheet"
    INDEXNOW_KEY = "indexnow_key"
    FEED = "feed"  # an Atom or RSS feed (SitemapConfig(feeds=...))
    LLMS_TXT = "llms_txt"
    CHANGES = "changes"  # the recently changed URLs (SitemapConfig(changes=...))
    EXPLAIN = "explain"  # why a URL is listed (SitemapConfig(explain_path=...)), trusted only


@dataclass(frozen=True, slots=True)
class Target:
    """A document we answer: its kind, format and, for pages, section and page number.

    ``page`` is 0 for a malformed page number (leading zero, too long): ours, but a 404.
    ``format`` is ``"txt"`` for text sitemaps and ``"html"`` for the human views
    (``sitemap.html``, ``sitemap-<section>-<n>.html``): the same documents, other writers.
    """

    kind: Kind
    format: Format = "xml"
    gzip_file: bool = False
    section: str | None = None
    page: int = 0
    #: For keyset sections: the page's key range as the index wrote it (see
    #: ``_sansio/paging.py``), so the page stays the same rows whatever is written.
    key_range: str | None = None
    #: For feeds: the feed's file name.
    name: str | None = None

    @property
    def is_sitemap(self) -> bool:
        return self.kind in (Kind.ROOT, Kind.INDEX, Kind.PAGE)


def page_name(
    prefix: str, section: str, page: int, ext: str = "xml", key_range: str | None = None
) -> str:
    """File name of a section's page: ``<prefix><section>-<page>.<ext>`` (page from 1).

    A keyset page also names its key range: ``<prefix><section>-<page>~<range>.<ext>``.
    """
    tail = f"~{key_range}" if key_range else ""
    return f"{prefix}{section}-{page}{tail}.{ext}"


@dataclass(frozen=True, slots=True)
class Routes:
    """The route table: every path we answer, built once from the configuration.

    ``directory`` is the decoded (Unicode) path of the base URL's directory, matched
    against decoded request paths, so a base URL with a non-ASCII path is routed too.
    """

    directory: str
    robots_path: str | None
    sitemap_name: str
    index_name: str
    page_prefix: str
    sections: frozenset[str]
    text_sitemaps: bool
    stylesheet: bool
    gzip_files: bool
    pattern: re.Pattern[str]
    indexnow_file: str | None = None
    #: The HTML views (``SitemapConfig(html=...)``): index view name and page pattern.
    html_index: str | None = None
    html_pattern: re.Pattern[str] | None = None
    #: Feed file names (``SitemapConfig(feeds=...)``) and llms.txt's, when served.
    feeds: frozenset[str] = frozenset()
    llms_txt: str | None = None
    #: The changes sitemap's file name, when served.
    changes: str | None = None
    #: The explain endpoint's full path (mount included), when served.
    explain_path: str | None = None

    @classmethod
    def make(
        cls,
        *,
        html_index: str | None = None,
        html_prefix: str | None = None,
        **names: Any,
    ) -> Routes:
        """The routes of a site from its names (``SitemapConfig.routes`` gives them):
        ``page_prefix`` and ``html_prefix`` become the page patterns."""
        pattern = _page_pattern(names["page_prefix"], "xml|txt")
        html = None if html_prefix is None else _page_pattern(html_prefix, "html", key_range=False)
        return cls(pattern=pattern, html_index=html_index, html_pattern=html, **names)


def _page_pattern(prefix: str, extensions: str, key_range: bool = True) -> re.Pattern[str]:
    # Page numbers are ASCII digits only: re's \d would also take "١" or "１".
    return re.compile(
        re.escape(prefix)
        + r"(?P<section>[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*)-(?P<page>[0-9]+)"
        + (r"(?:~(?P<range>[A-Za-z0-9_-]{1,1400}))?" if key_range else "")
        + r"\.(?P<ext>"
        + extensions
        + ")"
    )


def match(path: str, routes: Routes, root_path: str = "") -> Target | None:
    """The target a decoded request path names, or ``None`` to pass it to the app.

    Under a mount (``root_path``, ASGI's root_path or WSGI's SCRIPT_NAME) documents are
    answered below the mount; robots.txt only at the host's root, where crawlers read it.
    """
    if routes.robots_path is not None and path == routes.robots_path and not root_path:
        return Target(Kind.ROBOTS)
    if path == routes.explain_path:  # (whether the request may see it: the core's call)
        return Target(Kind.EXPLAIN)
    directory = mount_directory(routes.directory, root_path)
    if not path.startswith(directory):
        return None
    name = path[len(directory) :]
    if "/" in name or not name:
        return None
    return _match_name(name, routes)


def _match_name(name: str, routes: Routes) -> Target | None:
    """The target a file name in the sitemaps' directory names, if any."""
    if name in routes.feeds:
        return Target(Kind.FEED, name=name)
    if name == routes.llms_txt:
        return Target(Kind.LLMS_TXT)
    gzip_file = name.endswith(".gz") and routes.gzip_files
    if gzip_file:
        name = name[:-3]
    if name == routes.sitemap_name:
        return Target(Kind.ROOT, gzip_file=gzip_file)
    if name == routes.index_name:
        return Target(Kind.INDEX, gzip_file=gzip_file)
    if name == routes.changes:
        return Target(Kind.CHANGES, gzip_file=gzip_file)
    if routes.text_sitemaps and name == TEXT_SITEMAP_NAME:
        return Target(Kind.ROOT, format="txt", gzip_file=gzip_file)
    if routes.stylesheet and name == STYLESHEET_NAME and not gzip_file:
        return Target(Kind.STYLESHEET)
    if routes.indexnow_file is not None and name == routes.indexnow_file and not gzip_file:
        return Target(Kind.INDEXNOW_KEY)
    if routes.html_pattern is not None and name.endswith(".html") and not gzip_file:
        return _match_html(name, routes, routes.html_pattern)
    found = routes.pattern.fullmatch(name)
    if found is None or found["section"] not in routes.sections:
        return None
    text = found["ext"] == "txt"
    if text and not routes.text_sitemaps:
        return None
    return Target(
        Kind.PAGE,
        format="txt" if text else "xml",
        gzip_file=gzip_file,
        section=found["section"],
        page=_page(found),
        key_range=found["range"],
    )


def _page(found: re.Match[str]) -> int:
    digits = found["page"]
    return int(digits) if len(digits) <= MAX_PAGE_DIGITS and digits[0] != "0" else 0


def _match_html(name: str, routes: Routes, pattern: re.Pattern[str]) -> Target | None:
    """The human views: the index view and one view per sitemap page (never .gz files)."""
    if name == routes.html_index:
        return Target(Kind.INDEX, format="html")
    found = pattern.fullmatch(name)
    if found is None or found["section"] not in routes.sections:
        return None
    return Target(Kind.PAGE, format="html", section=found["section"], page=_page(found))
