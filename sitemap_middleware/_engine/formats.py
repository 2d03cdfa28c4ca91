"""The writers a target's format chooses: XML, text (one URL a line) or an HTML view.

A page, the single urlset and the index are each one document whatever their format
(``pages.py``, ``index.py``); the format picks what differs: the writer that frames the
entries, the content type, the file name a page answers to (and logs under), what its
ETag adds (an HTML view's settings, so a view's ETag never equals an XML document's) and
the headers every reply of the format carries (the views' CSP and ``noindex``; the
configured ``X-Robots-Tag`` otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Protocol

from .._config import SitemapConfig
from .._html_settings import HTMLView
from .._sansio.html_assets import HTML_HEADERS, HTML_TYPE
from .._sansio.html_writer import IndexView, UrlsetView
from .._sansio.index_writer import IndexWriter
from .._sansio.limits import MAX_BYTES
from .._sansio.routing import TEXT_SITEMAP_NAME, Format, page_name
from .._sansio.text_writer import TextWriter
from .._sansio.urls import BaseURL
from .._sansio.urlset_writer import UrlsetWriter
from .answer import TEXT_TYPE, XML_TYPE, HTTPError
from .bodies import URLWriter
from .planning import PlannedPage, SectionPlan, page_room, stylesheet_href

__all__ = ["Formats", "IndexPieces", "Writers"]

Headers = tuple[tuple[str, str], ...]


class IndexPieces(Protocol):
    """An index writer, whatever its format: a listing's pieces, in order."""

    def open(self, *, files: int, urls: int, failed: Sequence[str], externals: int) -> str: ...

    def sitemap(
        self, *, section: str, page: int, count: int, lastmod: date | None, name: str
    ) -> str: ...

    def external(self, loc: str) -> str: ...

    def close(self) -> str: ...


class Writers(Protocol):
    """What one format writes with (see the module's docstring)."""

    format: Format
    content_type: str
    headers: Headers
    #: Whether its index lists the changes sitemap (the HTML index view does not).
    lists_changes: bool

    def tagged(self, kind: str) -> str:
        """The kind an ETag of this format is made with (a page's name, ``urlset``)."""
        ...

    def index_kind(self) -> str: ...

    def index_label(self, kind: str) -> str:
        """What logs call the index (or ``sitemap.xml``) written in this format."""
        ...

    def page_name(self, section: str, number: int, key_range: str | None = None) -> str: ...

    def urlset(self, name: str, base: BaseURL, max_urls: int, *, capped: bool) -> URLWriter:
        """The writer of a document of URLs named ``name`` (a key-range page: ``capped``)."""
        ...

    def page(self, name: str, base: BaseURL, planned: PlannedPage, *, capped: bool) -> URLWriter:
        """The writer of a planned page."""
        ...

    def index(self, base: BaseURL, plans: Sequence[SectionPlan]) -> IndexPieces: ...


class XMLWriters:
    """Urlsets and the ``<sitemapindex>``: what crawlers read."""

    format: Format = "xml"
    content_type = XML_TYPE
    lists_changes = True
    urlset_kind = "urlset"  # the single urlset's ETag kind
    extension = "xml"

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        tag = config.http.x_robots_tag
        self.headers: Headers = (("X-Robots-Tag", tag),) if tag else ()
        self.urlset_name = config.sitemap_name

    def tagged(self, kind: str) -> str:
        return kind

    def index_kind(self) -> str:
        return "index"

    def index_label(self, kind: str) -> str:
        return kind

    def page_name(self, section: str, number: int, key_range: str | None = None) -> str:
        return page_name(self.config.page_prefix, section, number, self.extension, key_range)

    def urlset(self, name: str, base: BaseURL, max_urls: int, *, capped: bool) -> URLWriter:
        config = self.config
        writer = UrlsetWriter(
            label=name,
            resolve=base.join_if_relative,
            max_urls=max_urls,
            max_bytes=config.max_bytes_per_page,
            stylesheet_href=stylesheet_href(config, base),
            room=page_room(config, base),
        )
        writer.cap = capped
        return writer

    def page(self, name: str, base: BaseURL, planned: PlannedPage, *, capped: bool) -> URLWriter:
        return self.urlset(name, base, planned.section.max_urls, capped=capped)

    def index(self, base: BaseURL, plans: Sequence[SectionPlan]) -> IndexPieces:
        # An index of the 50,000 children it may hold is under 10 MB: it is bounded by
        # the protocol's limit, not the page budget (a tiny budget must not break it).
        writer = IndexWriter(
            stylesheet_href=stylesheet_href(self.config, base), max_bytes=MAX_BYTES
        )
        return _XMLIndex(writer, base)


class TextWriters(XMLWriters):
    """Text sitemaps: one URL a line, the limits of an XML page; no index of their own."""

    format: Format = "txt"
    content_type = TEXT_TYPE
    urlset_kind = "text"
    extension = "txt"

    def __init__(self, config: SitemapConfig) -> None:
        super().__init__(config)
        self.urlset_name = TEXT_SITEMAP_NAME

    def urlset(self, name: str, base: BaseURL, max_urls: int, *, capped: bool) -> URLWriter:
        writer = TextWriter(label=name, max_urls=max_urls, max_bytes=self.config.max_bytes_per_page)
        writer.cap = capped
        return writer

    def index(self, base: BaseURL, plans: Sequence[SectionPlan]) -> IndexPieces:
        raise HTTPError(
            404,
            "Not Found: the site does not fit one text sitemap; "
            f"use the per-section pages ({self.config.page_prefix}<section>-<n>.txt)",
        )


class HTMLWriters:
    """The HTML views, for people: the index view and one view per planned page."""

    format: Format = "html"
    content_type = HTML_TYPE
    headers: Headers = HTML_HEADERS
    lists_changes = False

    def __init__(self, config: SitemapConfig, view: HTMLView) -> None:
        self.config = config
        self.view = view

    def tagged(self, kind: str) -> str:
        return f"{self.view.fingerprint}|{kind}"

    def index_kind(self) -> str:
        book = self.config.guard_book  # its verdicts are part of what the view shows
        return self.tagged(f"index|{book.view_token() if book else ''}")

    def index_label(self, kind: str) -> str:
        return f"{kind} view"

    def page_name(self, section: str, number: int, key_range: str | None = None) -> str:
        return self.view.page_name(self.config.page_prefix, section, number)

    def urlset(self, name: str, base: BaseURL, max_urls: int, *, capped: bool) -> URLWriter:
        raise HTTPError(404, "Not Found")  # pragma: no cover - views are of planned pages

    def page(self, name: str, base: BaseURL, planned: PlannedPage, *, capped: bool) -> URLWriter:
        config, view, number = self.config, self.view, planned.number
        section = planned.section.name
        return UrlsetView(
            view=view,
            site=_site_label(base),
            resolve=base.join_if_relative,
            section=section,
            page=number,
            xml_name=planned.listed_name(config.page_prefix),
            index_view=view.index_name,
            previous_view=self.page_name(section, number - 1) if number > 1 else None,
            next_view=self.page_name(section, number + 1) if number < planned.pages else None,
        )

    def index(self, base: BaseURL, plans: Sequence[SectionPlan]) -> IndexPieces:
        config = self.config
        writer = IndexView(
            view=self.view,
            site=_site_label(base),
            sitemap_name=config.sitemap_name,
            index_name=config.index_name,
            page_prefix=config.page_prefix,
        )
        book = config.guard_book
        quarantine = [
            (plan.name, [(url, v.words()) for url, v in book.quarantined(plan.name)])
            for plan in plans
            if book is not None
        ]
        return _HTMLIndex(writer, quarantine)


class Formats:
    """The writers of each format a configuration serves (HTML only with the views on)."""

    def __init__(self, config: SitemapConfig) -> None:
        self.xml = XMLWriters(config)
        self.txt = TextWriters(config)
        view = config.html_view
        self._writers: dict[Format, Writers] = {"xml": self.xml, "txt": self.txt}
        if view is not None:
            self._writers["html"] = HTMLWriters(config, view)

    def of(self, format: Format) -> Writers:
        writers = self._writers.get(format)
        if writers is None:  # pragma: no cover - routing matches .html only when on
            raise HTTPError(404, "Not Found")
        return writers

    def headers(self, format: Format) -> Headers:
        """Headers every reply of ``format`` carries, however its body is obtained."""
        return self._writers.get(format, self.xml).headers


class _XMLIndex:
    def __init__(self, writer: IndexWriter, base: BaseURL) -> None:
        self._writer, self._base = writer, base

    def open(self, *, files: int, urls: int, failed: Sequence[str], externals: int) -> str:
        return self._writer.open()

    def sitemap(
        self, *, section: str, page: int, count: int, lastmod: date | None, name: str
    ) -> str:
        return self._writer.sitemap(self._base.file_url(name), lastmod)

    def external(self, loc: str) -> str:
        return self._writer.sitemap(loc, None)

    def close(self) -> str:
        return self._writer.close()


class _HTMLIndex:
    def __init__(
        self, writer: IndexView, quarantine: Sequence[tuple[str, Sequence[tuple[str, str]]]]
    ) -> None:
        self._writer, self._quarantine = writer, quarantine

    def open(self, *, files: int, urls: int, failed: Sequence[str], externals: int) -> str:
        return self._writer.open(files=files, urls=urls, failed=failed, externals=externals)

    def sitemap(
        self, *, section: str, page: int, count: int, lastmod: date | None, name: str
    ) -> str:
        return self._writer.sitemap(
            section=section, page=page, count=count, lastmod=lastmod, xml_name=name
        )

    def external(self, loc: str) -> str:
        return self._writer.external(loc)

    def close(self) -> str:
        return self._writer.close(self._quarantine)


def _site_label(base: BaseURL) -> str:
    """``example.com`` or ``example.com/shop``: the site, as headings name it."""
    return base.prefix.split("://", 1)[1].rstrip("/")
