"""Our documents: which one a target names, its validators, and how its body opens.

A :class:`Document` is decided before any byte is sent (validators from provider
metadata, 404/503 as :class:`HTTPError`); its body opens only after the 304 and HEAD
checks, and fetches its first batch of entries before the status line is committed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import resources

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._sansio.etag import content_etag, document_etag, version_parts
from .._sansio.limits import MAX_INDEX_ENTRIES
from .._sansio.models import Admitted
from .._sansio.render import Chunker, IndexWriter, TextWriter, UrlsetWriter
from .._sansio.routing import STYLESHEET_NAME, TEXT_SITEMAP_NAME, Kind, Target, page_name
from .._sansio.urls import BaseURL
from .bodies import bytes_body, opened, urlset_body
from .observe import CacheStatus
from .plan import (
    SectionPlan,
    news_cutoff,
    plan_section,
    section_count,
    section_version,
)
from .plans import PlanMemo
from .stream import EntryStream, logger

__all__ = [
    "LOG_FAILED",
    "TEXT_TYPE",
    "Document",
    "Documents",
    "HTTPError",
    "service_unavailable",
    "unavailable",
]

XML_TYPE = "application/xml; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"
XSL_TYPE = "text/xsl; charset=utf-8"
LOG_FAILED = "sitemap %s: answering %d: %s"
_STYLESHEET = resources.files("sitemap_middleware").joinpath("static", "sitemap.xsl").read_bytes()
_STYLESHEET_ETAG = content_etag("xsl", _STYLESHEET)


class HTTPError(Exception):
    """An answer other than 200, decided before the body starts (never a traceback)."""

    def __init__(self, status: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = list(headers)


def unavailable(config: SitemapConfig) -> HTTPError:
    """503 for a failing provider, with ``Retry-After``."""
    return service_unavailable(config.http.retry_after)


def service_unavailable(retry_after: int) -> HTTPError:
    """503 with ``Retry-After: retry_after`` seconds."""
    return HTTPError(
        503,
        "Service Unavailable: this sitemap's data source failed; try again later",
        [("Retry-After", str(retry_after))],
    )


@dataclass(slots=True)
class Document:
    """A document ready to answer: validators known, body not yet started."""

    content_type: str
    etag: str | None
    last_modified: datetime | None
    open: Callable[[], Awaitable[AsyncIterator[bytes]]]
    cacheable: bool = True
    #: False when only opening the body tells whether it exists (a page of a section
    #: that cannot count itself): a 304 then needs that check first.
    exists: bool = True
    cache: CacheStatus | None = None


class Documents:
    """Builds the :class:`Document` for a target: stylesheet, page, urlset or index."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self.plans = PlanMemo(config)

    async def get(self, target: Target, base: BaseURL) -> Document:
        """The document ``target`` names, served under ``base``; raises HTTPError."""
        if target.kind is Kind.ROBOTS:
            raise AssertionError("robots.txt is answered by respond_robots")  # pragma: no cover
        if target.kind is Kind.STYLESHEET:
            return Document(
                XSL_TYPE, _STYLESHEET_ETAG, None, lambda: opened(bytes_body(_STYLESHEET))
            )
        if target.kind is Kind.INDEXNOW_KEY:
            key = (self.config.indexnow_key or "").encode("ascii")
            etag = content_etag("indexnow", key)
            return Document(TEXT_TYPE, etag, None, lambda: opened(bytes_body(key)))
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

    def _validators(
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
        if not any(plan.count for plan in plans):
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        etag, modified = self._validators("text" if target.text else "urlset", base, plans)
        by_name = {plan.name: plan for plan in plans}
        sections = [s for s in self.config.resolved_sections if by_name[s.name].count]

        async def open_streams() -> AsyncIterator[bytes]:
            streams = [self._stream(section, base) for section in sections]
            name = TEXT_SITEMAP_NAME if target.text else self.config.sitemap_name
            return await self._open_urlset(name, base, streams, target.text)

        return Document(TEXT_TYPE if target.text else XML_TYPE, etag, modified, open_streams)

    async def _page_document(self, target: Target, base: BaseURL) -> Document:
        config = self.config
        section = config.section(target.section or "")
        if section is None or target.page < 1:
            raise HTTPError(404, "Not Found: no such sitemap page")
        name = page_name(
            config.page_prefix, section.name, target.page, "txt" if target.text else "xml"
        )
        try:
            version = await section_version(config, section)
            count = await section_count(config, section)
            if news_cutoff(config, section) is not None:
                count = (await plan_section(config, section, base)).count  # what the window keeps
        except ProviderError as exc:
            logger.error(LOG_FAILED, name, 503, exc)
            raise unavailable(self.config) from None
        if count is not None and target.page > -(-count // section.max_urls):
            raise HTTPError(404, "Not Found: past the last page of this section")
        parts = version_parts(version)
        etag = document_etag(
            config.fingerprint, base.prefix, name, [(str(count), *parts) if parts else None]
        )

        async def open_page() -> AsyncIterator[bytes]:
            stream = self._stream(section, base, offset=(target.page - 1) * section.max_urls)
            return await self._open_urlset(name, base, [stream], target.text)

        return Document(
            TEXT_TYPE if target.text else XML_TYPE,
            etag,
            version.last_modified if version else None,
            open_page,
            exists=count is not None,
        )

    def _stream(self, section: _ResolvedSection, base: BaseURL, offset: int = 0) -> EntryStream:
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

    async def _open_urlset(
        self, name: str, base: BaseURL, streams: list[EntryStream], text: bool
    ) -> AsyncIterator[bytes]:
        """Fetch the first batch (errors become 503/404 here), then stream the rest."""
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
        if not first:
            for stream in streams:
                await stream.aclose()
            raise HTTPError(404, "Not Found: this sitemap page has no entries")
        config = self.config
        writer: UrlsetWriter | TextWriter
        if text:
            writer = TextWriter(
                label=name, max_urls=config.max_urls_per_page, max_bytes=config.max_bytes_per_page
            )
        else:
            writer = UrlsetWriter(
                label=name,
                resolve=base.join_if_relative,
                max_urls=config.max_urls_per_page,
                max_bytes=config.max_bytes_per_page,
                stylesheet_href=self._stylesheet_href(base),
            )
        return urlset_body(writer, streams, first)

    def _index_document(
        self, base: BaseURL, plans: Sequence[SectionPlan], failed: Sequence[str]
    ) -> Document:
        externals = [base.origin_url(loc) for loc in self.config.external_sitemaps]
        pages = sum(plan.pages for plan in plans) + len(externals)
        if pages == 0:
            if failed:
                raise unavailable(self.config)
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        if pages > MAX_INDEX_ENTRIES:
            logger.error(
                LOG_FAILED, "index", 500, f"{pages} pages exceed the 50,000 an index may list"
            )
            raise HTTPError(500, "Internal Server Error: too many sitemap pages for one index")
        etag, modified = self._validators("index", base, plans) if not failed else (None, None)
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
