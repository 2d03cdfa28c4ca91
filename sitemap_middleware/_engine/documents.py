"""Our documents: which one a target names, its validators, and how its body opens.

A :class:`Document` is decided before any byte is sent (validators from the plans and
provider metadata, 404/503 as :class:`HTTPError`); its body opens only after the 304 and
HEAD checks, and fetches its first batch of entries before the status line is committed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from .._caches.store import PlanStore
from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._logs import logger
from .._providers.base import SupportsKeyset
from .._sansio.batches import PlainBatch
from .._sansio.etag import content_etag, document_etag, version_parts
from .._sansio.html_assets import stylesheet
from .._sansio.index_writer import IndexWriter
from .._sansio.limits import MAX_BYTES, MAX_INDEX_ENTRIES, MAX_NEWS_PER_FILE
from .._sansio.paging import PagePlan, decode_key_range
from .._sansio.routing import TEXT_SITEMAP_NAME, Kind, Target, page_name
from .._sansio.urls import BaseURL
from .._sansio.urlset_writer import Chunker
from .answer import (
    TEXT_TYPE,
    XML_TYPE,
    XSL_TYPE,
    Document,
    HTTPError,
    service_unavailable,
    unavailable,
)
from .bodies import bytes_body, opened
from .changes import changes_lastmod
from .dedupe import range_exclusion
from .keys import DocumentKeys
from .plan_memo import PlanMemo
from .planning import (
    SectionPlan,
    allows_empty,
    last_modified,
    page_room,
    range_version,
    stylesheet_href,
)
from .store_calls import StoreCalls
from .stream import EntryStream
from .urlsets import LOG_FAILED, Urlsets, render_failed
from .views import HTMLDocuments

__all__ = [
    "LOG_FAILED",
    "TEXT_TYPE",
    "Document",
    "Documents",
    "HTTPError",
    "IndexChild",
    "PlannedPage",
    "service_unavailable",
    "unavailable",
]


#: Page 1 of an empty section whose provider answers it (see ``allows_empty``).
EMPTY_PAGE = PagePlan(start=0, stop=0, urls=0, size=0, news=0, lastmod=None)


@dataclass(frozen=True, slots=True)
class IndexChild:
    """One sitemap the index lists: a planned page (or, without a section, an external)."""

    section: str | None
    number: int
    name: str  # the XML file name (with its key range for keyset pages)
    urls: int
    lastmod: date | None  # a datetime, or a date a provider gives (written as a date)


@dataclass(frozen=True, slots=True)
class PlannedPage:
    """A page target resolved against its section's plan."""

    section: _ResolvedSection
    plan: SectionPlan
    page: PagePlan
    previous: PagePlan | None

    @property
    def pages(self) -> int:
        return len(self.plan.pages)


class Documents:
    """Builds the :class:`Document` for a target: stylesheet, page, urlset or index."""

    def __init__(
        self,
        config: SitemapConfig,
        keys: DocumentKeys,
        plan_store: PlanStore | None = None,
        calls: StoreCalls | None = None,
    ) -> None:
        self.config = config
        self.keys = keys  # the store key of the stamp key-range pages share
        self.plans = PlanMemo(config, plan_store, calls)
        self.urlsets = Urlsets(config)
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
        # /sitemap.xml may be one urlset: planning keeps what it read for it, if small.
        keep: dict[str, list[PlainBatch]] | None = {} if target.kind is Kind.ROOT else None
        plans, failed = await self.plan_all(target.kind.value, base, keep)
        # Sitemaps served elsewhere (and the changes sitemap) are reached through an index.
        fits = not failed and not self.config.external_sitemaps and not self.config.changes
        if target.kind is Kind.ROOT and fits and self._fits_one_file(base, plans):
            return self._single_urlset(target, base, plans, keep or {})
        if target.text:
            raise HTTPError(
                404,
                "Not Found: the site does not fit one text sitemap; "
                f"use the per-section pages ({self.config.page_prefix}<section>-<n>.txt)",
            )
        return self._index_document(base, plans, failed)

    async def plan_all(
        self, label: str, base: BaseURL, keep: dict[str, list[PlainBatch]] | None = None
    ) -> tuple[list[SectionPlan], list[str]]:
        """Every section's plan (strict mode: an invalid entry answers 500)."""
        try:
            return await self.plans.plan_all(base, keep)
        except InvalidEntryError as exc:
            raise render_failed(self.config, label, exc) from None

    def _fits_one_file(self, base: BaseURL, plans: Sequence[SectionPlan]) -> bool:
        """Whether every section fits one urlset: by count, by bytes and by news URLs."""
        config = self.config
        return (
            all(len(plan.pages) <= 1 for plan in plans)
            and sum(plan.count for plan in plans) <= config.max_urls_per_page
            and sum(plan.size for plan in plans) <= page_room(config, base)
            and sum(plan.news for plan in plans) <= MAX_NEWS_PER_FILE
        )

    def validators(
        self, kind: str, base: BaseURL, plans: Sequence[SectionPlan]
    ) -> tuple[str | None, datetime | None]:
        """ETag and Last-Modified of a document holding these sections' entries."""
        etag = document_etag(
            self.config.fingerprint, base.prefix, kind, [plan.validator_parts for plan in plans]
        )
        # Without an ETag, a time every section gives is still sent (as Django's view
        # sends it); alone it earns no 304 (see core.py).
        return etag, last_modified(plans)

    def index_validators(
        self, kind: str, base: BaseURL, plans: Sequence[SectionPlan], children: list[IndexChild]
    ) -> tuple[str, datetime | None]:
        """An index's validators: from the children it lists, not from every row.

        The index holds what the plans say, so its tag changes exactly when a child or a
        child's lastmod does.
        """
        listed = [
            f"{child.name} {child.urls} {child.lastmod.isoformat() if child.lastmod else ''}"
            for child in children
        ]
        etag = document_etag(self.config.fingerprint, base.prefix, kind, [listed])
        assert etag is not None  # every part is given
        return etag, last_modified(plans)

    def _single_urlset(
        self,
        target: Target,
        base: BaseURL,
        plans: Sequence[SectionPlan],
        kept: dict[str, list[PlainBatch]],
    ) -> Document:
        # Empty is an answer only when every section says so (Django's sitemaps do).
        allow_empty = all(map(allows_empty, self.config.resolved_sections))
        if not any(plan.count for plan in plans) and not allow_empty:
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        etag, modified = self.validators("text" if target.text else "urlset", base, plans)
        by_name = {plan.name: plan for plan in plans}
        sections = [s for s in self.config.resolved_sections if by_name[s.name].count]
        max_urls = self.config.max_urls_per_page

        async def open_streams() -> AsyncIterator[bytes]:
            streams = [
                self.urlsets.stream(
                    section, base, by_name[section.name].pages[0], plan=by_name[section.name]
                )
                for section in sections
            ]
            for section, stream in zip(sections, streams, strict=True):
                _replay_once(stream, kept.get(section.name))
            name = TEXT_SITEMAP_NAME if target.text else self.config.sitemap_name
            writer = self.urlsets.writer(name, base, target.text, max_urls)
            return await self.urlsets.open(name, streams, writer, allow_empty)

        return Document(TEXT_TYPE if target.text else XML_TYPE, etag, modified, open_streams)

    async def planned_page(
        self, target: Target, base: BaseURL, keep: list[PlainBatch] | None = None
    ) -> PlannedPage:
        """The section, plan and page a page target names; 404/500/503 as HTTPError.

        ``keep`` receives a planning pass's batches of a one-page section (see
        :func:`plan_section`).
        """
        config = self.config
        section = config.section(target.section or "")
        if section is None or target.page < 1:
            raise HTTPError(404, "Not Found: no such sitemap page")
        name = page_name(config.page_prefix, section.name, target.page)
        try:
            plan = await self.plans.page_plan(section, base, target.page, keep)
        except (ProviderError, InvalidEntryError) as exc:  # (strict mode)
            raise render_failed(self.config, name, exc) from None
        if target.page == 1 and not plan.pages and allows_empty(section):
            # An empty section's page 1 is an empty urlset where the provider says so
            # (Django's sitemaps: allow_empty_first_page); the index does not list it.
            return PlannedPage(section, plan, EMPTY_PAGE, None)
        if target.page > len(plan.pages):
            raise HTTPError(404, "Not Found: past the last page of this section")
        previous = plan.pages[target.page - 2] if target.page > 1 else None
        return PlannedPage(section, plan, plan.pages[target.page - 1], previous)

    def page_etag(self, name: str, base: BaseURL, planned: PlannedPage) -> str | None:
        """A page's tag: its place in the plan (boundaries move when content does) and
        the section's version."""
        page = planned.page
        parts = version_parts(planned.plan.version)
        layout = repr((page.start, page.stop, page.urls, page.size, page.first_key, page.last_key))
        if planned.plan.duplicates:  # what it leaves out as listed before
            layout += planned.plan.layout
        return document_etag(
            self.config.fingerprint, base.prefix, name, [(layout, *parts) if parts else None]
        )

    async def _page_document(self, target: Target, base: BaseURL) -> Document:
        config = self.config
        if target.key_range is not None:
            section = config.section(target.section or "")
            if section is None or target.page < 1:
                raise HTTPError(404, "Not Found: no such sitemap page")
            return await self._range_document(target, base, section)
        kept: list[PlainBatch] = []  # what planning read, if it planned now and one page
        planned = await self.planned_page(target, base, kept)
        section = planned.section
        name = page_name(
            config.page_prefix, section.name, target.page, "txt" if target.text else "xml"
        )
        version = planned.plan.version

        async def open_page() -> AsyncIterator[bytes]:
            keyed = planned.plan.keyed  # its key range as it is now: capped, as a ranged name
            stream = self.urlsets.stream(
                section, base, planned.page, planned.previous, keyed, planned.plan, target.page
            )
            _replay_once(stream, kept)
            writer = self.urlsets.writer(name, base, target.text, section.max_urls, capped=keyed)
            return await self.urlsets.open(name, [stream], writer, allows_empty(section))

        return Document(
            TEXT_TYPE if target.text else XML_TYPE,
            self.page_etag(name, base, planned),
            version.last_modified if version else None,
            open_page,  # planned pages hold at least one entry: it exists
        )

    async def _range_document(
        self, target: Target, base: BaseURL, section: _ResolvedSection
    ) -> Document:
        """A keyset page named by its key range: the rows in ``(after, upto]`` now. The
        index wrote the range, so every row that exists throughout a crawl is on
        exactly one page whatever is inserted or deleted meanwhile. A range grown past
        the budget serves what fits (a complete document; the rest waits, logged)."""
        config = self.config
        token = target.key_range or ""
        keys = decode_key_range(token)
        if keys is None or not isinstance(section.provider, SupportsKeyset):
            raise HTTPError(404, "Not Found: no such sitemap page")
        ext = "txt" if target.text else "xml"
        name = page_name(config.page_prefix, section.name, target.page, ext, key_range=token)
        try:
            rows, version = await range_version(config, section, *keys)
            # One URL, one listing: what the sections before it (and its lower keys) list.
            plan = await self.plans.section_plan(section, base) if section.dedupe else None
        except (ProviderError, InvalidEntryError) as exc:
            raise render_failed(self.config, name, exc) from None
        if rows == 0:  # no row (or a range the key cannot hold): nothing to open
            raise HTTPError(404, "Not Found: no such sitemap page")
        left, tag = range_exclusion(section, plan, *keys) if plan else (section.exclusion, "")
        parts = version_parts(version)
        tagged = (*parts, tag) if parts and tag else parts
        etag = document_etag(config.fingerprint, base.prefix, name, [tagged])
        # Clients can name any number of ranges: only those the index lists are stored,
        # and stamped on their own; the others share one stamp (see Document.stamped_as).
        listed = self.plans.lists_range(base, section.name, token)
        stamped_as = None
        if rows is None or not listed:
            version_tag = document_etag(config.fingerprint, base.prefix, section.name, [parts])
            if version_tag is not None:
                stamped_as = (self.keys.key(f"ranges:{section.name}", base), version_tag)

        async def open_page() -> AsyncIterator[bytes]:
            stream = self.urlsets.keyed_stream(section, base, key_range=keys)
            stream.exclusion = left
            writer = self.urlsets.writer(name, base, target.text, section.max_urls, capped=True)
            return await self.urlsets.open(name, [stream], writer)

        return Document(
            TEXT_TYPE if target.text else XML_TYPE,
            etag,
            version.last_modified if version else None,
            open_page,
            exists=rows is not None,  # rows not known: only opening it tells
            storable=listed,
            stamped_as=stamped_as,
        )

    def checked_plans(
        self, plans: Sequence[SectionPlan], failed: Sequence[str], externals: int = 0
    ) -> None:
        """Raise what an index of these plans (and external sitemaps) answers instead of 200."""
        pages = sum(len(plan.pages) for plan in plans) + externals
        if pages == 0:
            if failed:
                raise unavailable(self.config)
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        if pages > MAX_INDEX_ENTRIES:
            logger.error(
                LOG_FAILED,
                "index",
                500,
                f"{pages} pages exceed the {MAX_INDEX_ENTRIES:,} an index may list",
            )
            raise HTTPError(500, "Internal Server Error: too many sitemap pages for one index")

    def externals(self, base: BaseURL) -> list[str]:
        """Absolute URLs of the sitemaps served elsewhere (listed in the index)."""
        return [base.origin_url(loc) for loc in self.config.external_sitemaps]

    def index_children(self, plans: Sequence[SectionPlan]) -> list[IndexChild]:
        """The planned pages an index lists, keyset pages named with their key range."""
        prefix = self.config.page_prefix
        children: list[IndexChild] = []
        for plan in plans:
            named = zip(plan.pages, plan.key_ranges(), strict=True)
            for number, (page, token) in enumerate(named, 1):
                name = page_name(prefix, plan.name, number, key_range=token)
                children.append(IndexChild(plan.name, number, name, page.urls, page.lastmod))
        return children

    def _index_document(
        self, base: BaseURL, plans: Sequence[SectionPlan], failed: Sequence[str]
    ) -> Document:
        externals = self.externals(base)
        self.checked_plans(plans, failed, len(externals))
        children = self.index_children(plans)
        changes = self.config.changes
        if changes is not None and (changed := changes_lastmod(self.config, plans)):
            children.insert(0, IndexChild(None, 0, changes.name, 0, changed))  # re-fetched first
        etag, modified = (
            self.index_validators("index", base, plans, children) if not failed else (None, None)
        )
        # An index of the 50,000 children it may hold is under 10 MB: it is bounded by
        # the protocol's limit, not the page budget (a tiny budget must not break it).
        writer = IndexWriter(
            stylesheet_href=stylesheet_href(self.config, base), max_bytes=MAX_BYTES
        )
        locs = [(base.file_url(child.name), child.lastmod) for child in children]
        locs += [(loc, None) for loc in externals]

        async def body() -> AsyncIterator[bytes]:
            chunker = Chunker()
            chunker.add(writer.open())
            for loc, lastmod in locs:
                if out := chunker.add(writer.sitemap(loc, lastmod)):
                    yield out
            yield chunker.finish(writer.close())

        return Document(
            XML_TYPE,
            etag,
            modified,
            lambda: opened(body()),
            cacheable=not failed,
            failed_sections=tuple(failed),
        )


def _replay_once(stream: EntryStream, kept: list[PlainBatch] | None) -> None:
    """Let ``stream`` serve what planning read for this request, once (not on reopening)."""
    if kept:
        stream.replay(kept[:])
        kept.clear()


def stylesheet_bytes(config: SitemapConfig) -> bytes:
    """The built-in XSL (``_sansio/html_assets.py``), linking to the HTML views when on."""
    return stylesheet(config.html_view, config.page_prefix)
