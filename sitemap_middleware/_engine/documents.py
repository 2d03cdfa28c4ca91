"""Our documents: which one a target names, its validators, and how its body opens.

A :class:`Document` is decided before any byte is sent (validators from provider
metadata, 404/503 as :class:`HTTPError`); its body opens only after the 304 and HEAD
checks, and fetches its first batch of entries before the status line is committed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from importlib import resources

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._providers.base import ProviderVersion
from .._sansio.etag import content_etag, document_etag, version_parts
from .._sansio.limits import MAX_INDEX_ENTRIES
from .._sansio.models import Admitted
from .._sansio.render import Chunker, IndexWriter, TextWriter, UrlsetWriter
from .._sansio.routing import STYLESHEET_NAME, TEXT_SITEMAP_NAME, Kind, Target, page_name
from .._sansio.urls import BaseURL
from .._sansio.xml import escape
from .answer import (
    TEXT_TYPE,
    XML_TYPE,
    XSL_TYPE,
    Document,
    HTTPError,
    service_unavailable,
    unavailable,
)
from .bodies import URLWriter, bytes_body, opened, urlset_body
from .plan import (
    SectionPlan,
    news_cutoff,
    plan_section,
    section_count,
    section_version,
)
from .plans import PlanMemo
from .stream import EntryStream, logger
from .views import HTMLDocuments

__all__ = [
    "LOG_FAILED",
    "TEXT_TYPE",
    "Document",
    "Documents",
    "HTTPError",
    "service_unavailable",
    "unavailable",
]

LOG_FAILED = "sitemap %s: answering %d: %s"
_STYLESHEET = resources.files("sitemap_middleware").joinpath("static", "sitemap.xsl").read_text()
#: Where the stylesheet links to the HTML view when that is on (an XML comment otherwise).
_STYLESHEET_LINK_SLOT = "<!-- link to the HTML view -->"


class Documents:
    """Builds the :class:`Document` for a target: stylesheet, page, urlset or index."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self.plans = PlanMemo(config)
        self._stylesheet = stylesheet_bytes(config)
        self._stylesheet_etag = content_etag("xsl", self._stylesheet)
        self._html = HTMLDocuments(self, config.html_view) if config.html_view else None

    async def get(self, target: Target, base: BaseURL) -> Document:
        """The document ``target`` names, served under ``base``; raises HTTPError."""
        if target.kind is Kind.ROBOTS:
            raise AssertionError("robots.txt is answered by respond_robots")  # pragma: no cover
        if target.kind is Kind.STYLESHEET:
            data = self._stylesheet
            return Document(XSL_TYPE, self._stylesheet_etag, None, lambda: opened(bytes_body(data)))
        if target.kind is Kind.INDEXNOW_KEY:
            key = (self.config.indexnow_key or "").encode("ascii")
            etag = content_etag("indexnow", key)
            return Document(TEXT_TYPE, etag, None, lambda: opened(bytes_body(key)))
        if target.html:
            if self._html is None:  # pragma: no cover - routing matches .html only when on
                raise HTTPError(404, "Not Found")
            return await self._html.get(target, base)
        if target.kind is Kind.PAGE:
            return await self._page_document(target, base)
        plans, failed = await self.plans.plan_all(base)
        total = sum(plan.count for plan in plans)
        # Sitemaps served elsewhere can only be reached through an index.
        fits = not failed and not self.config.external_sitemaps
        fits = fits and total <= self.config.max_urls_per_page
        if target.kind is Kind.ROOT and fits and all(p.count <= p.page_size for p in plans):
            return self._single_urlset(target, base, plans)
        if target.text:
            raise HTTPError(
                404,
                "Not Found: the site does not fit one text sitemap; "
                f"use the per-section pages ({self.config.page_prefix}<section>-<n>.txt)",
            )
        return self._index_document(base, plans, failed)

    def validators(
        self, kind: str, base: BaseURL, plans: Sequence[SectionPlan]
    ) -> tuple[str | None, datetime | None]:
        etag = document_etag(
            self.config.fingerprint, base.prefix, kind, [plan.validator_parts for plan in plans]
        )
        if etag is None:
            return None, None
        modified = [
            plan.version.last_modified
            for plan in plans
            if plan.version is not None and plan.version.last_modified is not None
        ]
        last_modified = max(modified) if len(modified) == len(plans) and modified else None
        return etag, last_modified

    def _single_urlset(
        self, target: Target, base: BaseURL, plans: Sequence[SectionPlan]
    ) -> Document:
        # Empty is an answer only when every section says so (Django's sitemaps do).
        allow_empty = all(map(allows_empty, self.config.resolved_sections))
        if not any(plan.count for plan in plans) and not allow_empty:
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        etag, modified = self.validators("text" if target.text else "urlset", base, plans)
        by_name = {plan.name: plan for plan in plans}
        sections = [s for s in self.config.resolved_sections if by_name[s.name].count]

        async def open_streams() -> AsyncIterator[bytes]:
            streams = [self.stream(section, base) for section in sections]
            name = TEXT_SITEMAP_NAME if target.text else self.config.sitemap_name
            return await self.open_urlset(
                name, streams, self._writer(name, base, target.text), allow_empty
            )

        return Document(TEXT_TYPE if target.text else XML_TYPE, etag, modified, open_streams)

    async def page_facts(
        self, target: Target, base: BaseURL
    ) -> tuple[_ResolvedSection, ProviderVersion | None, int | None]:
        """The section, version and count of a page target; 404/503 as HTTPError."""
        config = self.config
        section = config.section(target.section or "")
        if section is None or target.page < 1:
            raise HTTPError(404, "Not Found: no such sitemap page")
        try:
            version = await section_version(config, section)
            count = await section_count(config, section)
            if news_cutoff(config, section) is not None:
                count = (await plan_section(config, section, base)).count  # what the window keeps
        except ProviderError as exc:
            name = page_name(config.page_prefix, section.name, target.page)
            logger.error(LOG_FAILED, name, 503, exc)
            raise unavailable(self.config) from None
        allow_empty = count is not None and allows_empty(section)
        last = -(-count // section.max_urls) if count is not None else 0
        if count is not None and target.page > (max(last, 1) if allow_empty else last):
            raise HTTPError(404, "Not Found: past the last page of this section")
        return section, version, count

    async def _page_document(self, target: Target, base: BaseURL) -> Document:
        config = self.config
        section, version, count = await self.page_facts(target, base)
        allow_empty = count is not None and allows_empty(section)
        name = page_name(
            config.page_prefix, section.name, target.page, "txt" if target.text else "xml"
        )
        parts = version_parts(version)
        etag = document_etag(
            config.fingerprint, base.prefix, name, [(str(count), *parts) if parts else None]
        )

        async def open_page() -> AsyncIterator[bytes]:
            stream = self.stream(section, base, offset=(target.page - 1) * section.max_urls)
            writer = self._writer(name, base, target.text)
            return await self.open_urlset(name, [stream], writer, allow_empty)

        return Document(
            TEXT_TYPE if target.text else XML_TYPE,
            etag,
            version.last_modified if version else None,
            open_page,
            exists=count is not None,
        )

    def stream(self, section: _ResolvedSection, base: BaseURL, offset: int = 0) -> EntryStream:
        """One page's worth of a section's entries, from ``offset``."""
        return EntryStream(
            section.name,
            section.provider,
            base,
            offset=offset,
            limit=section.max_urls,
            timeout=self.config.provider_timeout,
            strict=self.config.strict,
            news_cutoff=news_cutoff(self.config, section),
        )

    def _writer(self, name: str, base: BaseURL, text: bool) -> UrlsetWriter | TextWriter:
        config = self.config
        if text:
            return TextWriter(
                label=name, max_urls=config.max_urls_per_page, max_bytes=config.max_bytes_per_page
            )
        return UrlsetWriter(
            label=name,
            resolve=base.join_if_relative,
            max_urls=config.max_urls_per_page,
            max_bytes=config.max_bytes_per_page,
            stylesheet_href=self._stylesheet_href(base),
        )

    async def open_urlset(
        self,
        name: str,
        streams: list[EntryStream],
        writer: URLWriter,
        allow_empty: bool = False,
    ) -> AsyncIterator[bytes]:
        """Fetch the first batch (errors become 503/404 here), then stream the rest.

        ``allow_empty``: a page that exists by its provider's count (and page 1 of a
        provider with ``allow_empty_first_page``) is answered even with no entry left.
        """
        first: list[Admitted] = []
        try:
            for stream in streams:
                first = await stream.next_batch()
                if first:
                    break
        except (ProviderError, InvalidEntryError) as exc:
            for stream in streams:
                await stream.aclose()
            logger.error(LOG_FAILED, name, 503 if isinstance(exc, ProviderError) else 500, exc)
            if isinstance(exc, ProviderError):
                raise unavailable(self.config) from None
            raise HTTPError(500, "Internal Server Error: invalid entry in strict mode") from None
        if not first and not allow_empty:
            for stream in streams:
                await stream.aclose()
            raise HTTPError(404, "Not Found: this sitemap page has no entries")
        return urlset_body(writer, streams, first)

    def checked_plans(
        self, plans: Sequence[SectionPlan], failed: Sequence[str], externals: int = 0
    ) -> None:
        """Raise what an index of these plans (and external sitemaps) answers instead of 200."""
        pages = sum(plan.pages for plan in plans) + externals
        if pages == 0:
            if failed:
                raise unavailable(self.config)
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        if pages > MAX_INDEX_ENTRIES:
            logger.error(
                LOG_FAILED, "index", 500, f"{pages} pages exceed the 50,000 an index may list"
            )
            raise HTTPError(500, "Internal Server Error: too many sitemap pages for one index")

    def externals(self, base: BaseURL) -> list[str]:
        """Absolute URLs of the sitemaps served elsewhere (listed in the index)."""
        return [base.origin_url(loc) for loc in self.config.external_sitemaps]

    def index_child(self, plan: SectionPlan, number: int) -> tuple[str, int]:
        """A page's XML file name and planned URL count."""
        count = min(plan.page_size, plan.count - (number - 1) * plan.page_size)
        return page_name(self.config.page_prefix, plan.name, number), count

    def _index_document(
        self, base: BaseURL, plans: Sequence[SectionPlan], failed: Sequence[str]
    ) -> Document:
        externals = self.externals(base)
        self.checked_plans(plans, failed, len(externals))
        etag, modified = self.validators("index", base, plans) if not failed else (None, None)
        writer = IndexWriter(
            stylesheet_href=self._stylesheet_href(base), max_bytes=self.config.max_bytes_per_page
        )
        config = self.config

        async def body() -> AsyncIterator[bytes]:
            chunker = Chunker()
            chunker.add(writer.open())
            for plan in plans:
                for number in range(1, plan.pages + 1):
                    loc = base.file_url(page_name(config.page_prefix, plan.name, number))
                    if out := chunker.add(writer.sitemap(loc, plan.page_lastmods[number - 1])):
                        yield out
            for loc in externals:
                if out := chunker.add(writer.sitemap(loc, None)):
                    yield out
            yield chunker.finish(writer.close())

        return Document(XML_TYPE, etag, modified, lambda: opened(body()), cacheable=not failed)

    def _stylesheet_href(self, base: BaseURL) -> str | None:
        stylesheet = self.config.stylesheet
        if stylesheet is True:
            return base.directory + STYLESHEET_NAME
        return stylesheet or None


def stylesheet_bytes(config: SitemapConfig) -> bytes:
    """The built-in XSL; with the HTML views on, it links to the index view."""
    view = config.html_view
    link = ""
    if view is not None:
        # Relative: the transformed page's address is the XML document's, in the same
        # directory as the view. Escaped for XML, though file names hold no specials.
        href = escape(view.index_name)
        link = (
            '<p class="note" id="html-view">Browsers are removing XSLT, which draws this '
            f'table. <a href="{href}">Open the HTML view</a>: it works in every browser.</p>'
        )
    return _STYLESHEET.replace(_STYLESHEET_LINK_SLOT, link).encode("utf-8")


def allows_empty(section: _ResolvedSection) -> bool:
    """Whether the provider answers an empty page 1 with an empty urlset (Django's do)."""
    return getattr(section.provider, "allow_empty_first_page", False) is True
