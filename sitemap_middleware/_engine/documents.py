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
from .._providers.base import SupportsKeyset
from .._sansio.etag import content_etag, document_etag, version_parts
from .._sansio.limits import MAX_BYTES, MAX_INDEX_ENTRIES, MAX_NEWS_PER_FILE
from .._sansio.models import Admitted
from .._sansio.paging import PagePlan, decode_key_range, encode_key_range
from .._sansio.render import Chunker, IndexWriter, TextWriter, UrlsetWriter
from .._sansio.routing import TEXT_SITEMAP_NAME, Kind, Target, page_name
from .._sansio.urls import BaseURL
from .bodies import ClosingBody, bytes_body, opened, urlset_body
from .observe import CacheStatus
from .plan import SectionPlan, news_cutoff, page_room, section_version, stylesheet_href
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


def _strict_error() -> HTTPError:
    return HTTPError(500, "Internal Server Error: invalid entry in strict mode")


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
        try:
            plans, failed = await self.plans.plan_all(base)
        except InvalidEntryError as exc:  # strict mode
            logger.error(LOG_FAILED, target.kind.value, 500, exc)
            raise _strict_error() from None
        # Sitemaps served elsewhere can only be reached through an index.
        fits = not failed and not self.config.external_sitemaps
        if target.kind is Kind.ROOT and fits and self._fits_one_file(base, plans):
            return self._single_urlset(target, base, plans)
        if target.text:
            raise HTTPError(
                404,
                "Not Found: the site does not fit one text sitemap; "
                f"use the per-section pages ({self.config.page_prefix}<section>-<n>.txt)",
            )
        return self._index_document(base, plans, failed)

    def _fits_one_file(self, base: BaseURL, plans: Sequence[SectionPlan]) -> bool:
        """Whether every section fits one urlset: by count, by bytes and by news URLs."""
        config = self.config
        return (
            all(len(plan.pages) <= 1 for plan in plans)
            and sum(plan.count for plan in plans) <= config.max_urls_per_page
            and sum(plan.size for plan in plans) <= page_room(config, base)
            and sum(plan.news for plan in plans) <= MAX_NEWS_PER_FILE
        )

    def _validators(
        self, kind: str, base: BaseURL, plans: Sequence[SectionPlan]
    ) -> tuple[str | None, datetime | None]:
        etag = document_etag(
            self.config.fingerprint, base.prefix, kind, [plan.validator_parts for plan in plans]
        )
        if etag is None:
            return None, None
        return etag, self._last_modified(plans)

    @staticmethod
    def _last_modified(plans: Sequence[SectionPlan]) -> datetime | None:
        """The newest provider time, if every section gives one."""
        modified = [
            plan.version.last_modified
            for plan in plans
            if plan.version is not None and plan.version.last_modified is not None
        ]
        return max(modified) if len(modified) == len(plans) and modified else None

    def _single_urlset(
        self, target: Target, base: BaseURL, plans: Sequence[SectionPlan]
    ) -> Document:
        if not any(plan.count for plan in plans):
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        etag, modified = self._validators("text" if target.text else "urlset", base, plans)
        by_name = {plan.name: plan for plan in plans}
        sections = [s for s in self.config.resolved_sections if by_name[s.name].count]

        async def open_streams() -> AsyncIterator[bytes]:
            streams = [
                self._stream(section, base, by_name[section.name].pages[0]) for section in sections
            ]
            name = TEXT_SITEMAP_NAME if target.text else self.config.sitemap_name
            return await self._open_urlset(
                name, base, streams, target.text, self.config.max_urls_per_page
            )

        return Document(TEXT_TYPE if target.text else XML_TYPE, etag, modified, open_streams)

    async def _page_document(self, target: Target, base: BaseURL) -> Document:
        config = self.config
        section = config.section(target.section or "")
        if section is None or target.page < 1:
            raise HTTPError(404, "Not Found: no such sitemap page")
        name = page_name(
            config.page_prefix, section.name, target.page, "txt" if target.text else "xml"
        )
        if target.key_range is not None:
            return await self._range_document(target, base, section)
        try:
            plan = await self.plans.page_plan(section, base, target.page)
        except ProviderError as exc:
            logger.error(LOG_FAILED, name, 503, exc)
            raise unavailable(self.config) from None
        except InvalidEntryError as exc:  # strict mode
            logger.error(LOG_FAILED, name, 500, exc)
            raise _strict_error() from None
        if target.page > len(plan.pages):
            raise HTTPError(404, "Not Found: past the last page of this section")
        page = plan.pages[target.page - 1]
        parts = version_parts(plan.version)
        layout = repr((page.start, page.stop, page.urls, page.size, page.first_key, page.last_key))
        etag = document_etag(
            config.fingerprint, base.prefix, name, [(layout, *parts) if parts else None]
        )
        previous = plan.pages[target.page - 2] if target.page > 1 else None

        async def open_page() -> AsyncIterator[bytes]:
            stream = self._stream(section, base, page, previous, keyed=plan.keyed)
            return await self._open_urlset(name, base, [stream], target.text, section.max_urls)

        return Document(
            TEXT_TYPE if target.text else XML_TYPE,
            etag,
            plan.version.last_modified if plan.version else None,
            open_page,  # planned pages hold at least one entry: it exists
        )

    async def _range_document(
        self, target: Target, base: BaseURL, section: _ResolvedSection
    ) -> Document:
        """A keyset page named by its key range: the rows in ``(after, upto]`` now.

        The index wrote the range, so every row that exists throughout a crawl is on
        exactly one page whatever is inserted or deleted meanwhile. Rows inserted into a
        range can make it outgrow the budget: then the page holds what fits (a complete
        document) and the rest waits for the next index (logged).
        """
        config = self.config
        token = target.key_range or ""
        keys = decode_key_range(token)
        if keys is None or not isinstance(section.provider, SupportsKeyset):
            raise HTTPError(404, "Not Found: no such sitemap page")
        ext = "txt" if target.text else "xml"
        name = page_name(config.page_prefix, section.name, target.page, ext, key_range=token)
        try:
            version = await section_version(config, section)
        except ProviderError as exc:
            logger.error(LOG_FAILED, name, 503, exc)
            raise unavailable(self.config) from None
        parts = version_parts(version)
        etag = document_etag(config.fingerprint, base.prefix, name, [parts])

        async def open_page() -> AsyncIterator[bytes]:
            stream = EntryStream(
                section.name,
                section.provider,
                base,
                timeout=config.provider_timeout,
                strict=config.strict,
                keyed=True,
                key_range=keys,
                news_cutoff=news_cutoff(config, section),
            )
            return await self._open_urlset(
                name, base, [stream], target.text, section.max_urls, capped=True
            )

        return Document(
            TEXT_TYPE if target.text else XML_TYPE,
            etag,
            version.last_modified if version else None,
            open_page,
            exists=False,  # its rows may all be gone: only opening it tells
        )

    def _stream(
        self,
        section: _ResolvedSection,
        base: BaseURL,
        page: PagePlan,
        previous: PagePlan | None = None,
        *,
        keyed: bool = False,
    ) -> EntryStream:
        """The entries of one planned page: its raw positions, or its key range."""
        if keyed:
            after = previous.last_key if previous is not None else None
            return EntryStream(
                section.name,
                section.provider,
                base,
                timeout=self.config.provider_timeout,
                strict=self.config.strict,
                keyed=True,
                key_range=(after, page.last_key),
                news_cutoff=news_cutoff(self.config, section),
            )
        return EntryStream(
            section.name,
            section.provider,
            base,
            offset=page.start,
            limit=page.stop - page.start,
            timeout=self.config.provider_timeout,
            strict=self.config.strict,
            news_cutoff=news_cutoff(self.config, section),
        )

    async def _open_urlset(
        self,
        name: str,
        base: BaseURL,
        streams: list[EntryStream],
        text: bool,
        max_urls: int,
        *,
        capped: bool = False,
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
            raise _strict_error() from None
        if not first:
            for stream in streams:
                await stream.aclose()
            raise HTTPError(404, "Not Found: this sitemap page has no entries")
        config = self.config
        writer: UrlsetWriter | TextWriter
        if text:
            writer = TextWriter(label=name, max_urls=max_urls, max_bytes=config.max_bytes_per_page)
        else:
            writer = UrlsetWriter(
                label=name,
                resolve=base.join_if_relative,
                max_urls=max_urls,
                max_bytes=config.max_bytes_per_page,
                stylesheet_href=self._stylesheet_href(base),
                room=page_room(config, base),
            )
        writer.cap = capped
        return ClosingBody(urlset_body(writer, streams, first), streams)

    def _index_document(
        self, base: BaseURL, plans: Sequence[SectionPlan], failed: Sequence[str]
    ) -> Document:
        externals = [base.origin_url(loc) for loc in self.config.external_sitemaps]
        pages = sum(len(plan.pages) for plan in plans) + len(externals)
        if pages == 0:
            if failed:
                raise unavailable(self.config)
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        if pages > MAX_INDEX_ENTRIES:
            logger.error(
                LOG_FAILED, "index", 500, f"{pages} pages exceed the 50,000 an index may list"
            )
            raise HTTPError(500, "Internal Server Error: too many sitemap pages for one index")
        config = self.config
        children: list[tuple[str, datetime | None]] = []
        for plan in plans:
            after = None
            for number, page in enumerate(plan.pages, 1):
                token = encode_key_range(after, page.last_key) if plan.keyed else None
                after = page.last_key
                name = page_name(config.page_prefix, plan.name, number, key_range=token)
                children.append((base.file_url(name), page.lastmod))
        children += [(loc, None) for loc in externals]
        etag, modified = None, None
        if not failed:
            # The index holds what the plans say, so its tag is theirs: it changes exactly
            # when a child or a child's lastmod does (not with every row of a section).
            listed = [
                f"{loc} {lastmod.isoformat() if lastmod else ''}" for loc, lastmod in children
            ]
            etag = document_etag(config.fingerprint, base.prefix, "index", [listed])
            modified = self._last_modified(plans)
        # An index of the 50,000 children it may hold is under 10 MB: it is bounded by
        # the protocol's limit, not the page budget (a tiny budget must not break it).
        writer = IndexWriter(stylesheet_href=self._stylesheet_href(base), max_bytes=MAX_BYTES)

        async def body() -> AsyncIterator[bytes]:
            chunker = Chunker()
            chunker.add(writer.open())
            for loc, lastmod in children:
                if out := chunker.add(writer.sitemap(loc, lastmod)):
                    yield out
            yield chunker.finish(writer.close())

        return Document(XML_TYPE, etag, modified, lambda: opened(body()), cacheable=not failed)

    def _stylesheet_href(self, base: BaseURL) -> str | None:
        return stylesheet_href(self.config, base)
