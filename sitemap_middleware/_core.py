"""The framework-agnostic core: a request in, a pass-through or a streaming reply out.

Flow: route -> host policy -> method -> encoding -> plan (validators) -> 304? -> HEAD?
-> open the entry streams (first batch before any header, so a failing provider still
gets a clean 503) -> render -> encode.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources

from ._bodies import bytes_body, chain, opened, urlset_body
from ._compress import choose_encoding, gzip_chunks
from ._conditional import (
    is_not_modified,
    make_etag,
    not_modified_filter,
    representation_etag,
    validator_headers,
)
from ._config import SitemapConfig
from ._exceptions import InvalidEntryError, ProviderError
from ._hosts import HostNotAllowed, base_for
from ._models import Admitted
from ._plan import SectionPlan, plan_all, section_count, section_version, version_parts
from ._render import (
    Chunker,
    IndexWriter,
    TextWriter,
    UrlsetWriter,
    append_sitemap_lines,
    render_robots,
)
from ._render_cache import MemoryRenderCache
from ._routing import STYLESHEET_NAME, TEXT_SITEMAP_NAME, Kind, Target, match, page_name
from ._stream import EntryStream, logger
from ._urls import BaseURL

__all__ = ["Reply", "RequestInfo", "SitemapCore"]

XML_TYPE = "application/xml; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"
XSL_TYPE = "text/xsl; charset=utf-8"
GZIP_FILE_TYPE = "application/gzip"
LOG_FAILED = "sitemap %s: answering %d: %s"
#: robots.txt is read up to 500 KiB by Google; an app's own larger than this is not used
#: in robots_mode="append" (both adapters read at most this much of it).
MAX_APP_ROBOTS = 512 * 1024
_STYLESHEET = resources.files(__package__).joinpath("static", "sitemap.xsl").read_bytes()


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What the core needs from a request; adapters build it from a scope or environ.

    ``headers`` maps lower-case names to values (repeated headers joined with ``, ``).
    """

    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Reply:
    """Our answer: status, headers and an async byte stream (``None`` for no body)."""

    status: int
    headers: list[tuple[str, str]]
    body: AsyncIterator[bytes] | None = None


class _HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = list(headers)


@dataclass(slots=True)
class _Document:
    """A document ready to answer: validators known, body not yet started."""

    content_type: str
    etag: str | None
    last_modified: datetime | None
    open: Callable[[], Awaitable[AsyncIterator[bytes]]]
    cacheable: bool = True


class SitemapCore:
    """Answers sitemap, index, page, text, stylesheet and robots.txt requests."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self._cache = MemoryRenderCache(config.render_cache_size, config.render_cache_ttl)

    def route(self, request: RequestInfo) -> Target | None:
        """Our target for this request, or ``None`` to hand it to the wrapped app."""
        return match(request.path, self.config)

    async def respond(
        self, target: Target, request: RequestInfo, app_robots: str | None = None
    ) -> Reply:
        """Answer a request for one of our documents. Never raises for a bad request."""
        try:
            return await self._respond(target, request, app_robots)
        except _HTTPError as exc:
            return self._error(exc.status, exc.message, exc.headers)

    async def _respond(self, target: Target, request: RequestInfo, app_robots: str | None) -> Reply:
        config = self.config
        if request.method not in ("GET", "HEAD"):
            raise _HTTPError(405, "Method Not Allowed", [("Allow", "GET, HEAD")])
        base = self._base_for(request)
        negotiable = config.gzip and not target.gzip_file
        encoding = (
            "gzip"
            if target.gzip_file
            else choose_encoding(request.headers.get("accept-encoding"), config.gzip)
        )
        if encoding is None:
            raise _HTTPError(406, "Not Acceptable: identity is refused and gzip is not available")

        document = await self._document(target, base)
        if document.etag is None and config.fallback_validators == "render" and target.is_sitemap:
            document = await self._render_validated(target, base, document)
        etag = (
            representation_etag(document.etag, encoding, target.gzip_file)
            if document.etag is not None
            else None
        )
        headers = [("Content-Type", GZIP_FILE_TYPE if target.gzip_file else document.content_type)]
        if encoding == "gzip" and not target.gzip_file:
            headers.append(("Content-Encoding", "gzip"))
        if negotiable:
            headers.append(("Vary", "Accept-Encoding"))
        if config.cache_control and document.cacheable:
            headers.append(("Cache-Control", config.cache_control))
        elif not document.cacheable:
            headers.append(("Cache-Control", "no-store"))
        if config.x_robots_tag and target.kind is not Kind.ROBOTS:
            headers.append(("X-Robots-Tag", config.x_robots_tag))
        headers += validator_headers(etag, document.last_modified)

        if is_not_modified(
            request.method,
            if_none_match=request.headers.get("if-none-match"),
            if_modified_since=request.headers.get("if-modified-since"),
            etag=etag,
            last_modified=document.last_modified,
        ):
            return Reply(304, not_modified_filter(headers))
        if request.method == "HEAD":
            return Reply(200, headers)
        body = await document.open()
        if encoding == "gzip":
            body = gzip_chunks(body, config.gzip_level)
        return Reply(200, headers, body)

    def _base_for(self, request: RequestInfo) -> BaseURL:
        try:
            return base_for(self.config, request.headers)
        except HostNotAllowed:
            raise _HTTPError(400, "Bad Request: host not allowed") from None  # never echoed

    # -- documents -----------------------------------------------------------------------

    async def _document(self, target: Target, base: BaseURL) -> _Document:
        if target.kind is Kind.ROBOTS:
            raise AssertionError("robots.txt is answered by respond_robots")  # pragma: no cover
        if target.kind is Kind.STYLESHEET:
            tag = make_etag("xsl", hashlib.sha256(_STYLESHEET).hexdigest())
            return _Document(XSL_TYPE, tag, None, lambda: opened(bytes_body(_STYLESHEET)))
        if target.kind is Kind.PAGE:
            return await self._page_document(target, base)
        plans, failed = await plan_all(self.config, base)
        total = sum(plan.count for plan in plans)
        fits = not failed and total <= self.config.max_urls_per_page
        if target.kind is Kind.ROOT and fits and all(p.count <= p.page_size for p in plans):
            return self._single_urlset(target, base, plans)
        if target.text:
            raise _HTTPError(
                404,
                "Not Found: the site does not fit one text sitemap; "
                f"use the per-section pages ({self.config.page_prefix}<section>-<n>.txt)",
            )
        return self._index_document(base, plans, failed)

    def _validators(
        self, kind: str, base: BaseURL, plans: Sequence[SectionPlan]
    ) -> tuple[str | None, datetime | None]:
        parts: list[str] = [self.config.fingerprint, base.prefix, kind]
        modified: list[datetime] = []
        for plan in plans:
            section_parts = plan.validator_parts
            if section_parts is None:
                return None, None
            parts += section_parts
            if plan.version is not None and plan.version.last_modified is not None:
                modified.append(plan.version.last_modified)
        last_modified = max(modified) if len(modified) == len(plans) and modified else None
        return make_etag(*parts), last_modified

    def _single_urlset(
        self, target: Target, base: BaseURL, plans: Sequence[SectionPlan]
    ) -> _Document:
        if not any(plan.count for plan in plans):
            raise _HTTPError(404, "Not Found: the sitemap has no entries yet")
        etag, modified = self._validators("text" if target.text else "urlset", base, plans)
        by_name = {plan.name: plan for plan in plans}
        sections = [s for s in self.config.resolved_sections if by_name[s.name].count]

        async def open_streams() -> AsyncIterator[bytes]:
            streams = [
                EntryStream(
                    s.name,
                    s.provider,
                    base,
                    limit=s.max_urls,
                    timeout=self.config.provider_timeout,
                    strict=self.config.strict,
                )
                for s in sections
            ]
            name = TEXT_SITEMAP_NAME if target.text else self.config.sitemap_name
            return await self._open_urlset(name, base, streams, target.text)

        return _Document(TEXT_TYPE if target.text else XML_TYPE, etag, modified, open_streams)

    async def _page_document(self, target: Target, base: BaseURL) -> _Document:
        config = self.config
        section = config.section(target.section or "")
        if section is None or target.page < 1:
            raise _HTTPError(404, "Not Found: no such sitemap page")
        name = page_name(config, section.name, target.page, "txt" if target.text else "xml")
        try:
            version = await section_version(config, section)
            count = await section_count(config, section)
        except ProviderError as exc:
            logger.error(LOG_FAILED, name, 503, exc)
            raise self._unavailable() from None
        if count is not None and target.page > -(-count // section.max_urls):
            raise _HTTPError(404, "Not Found: past the last page of this section")
        parts = version_parts(version)
        etag = (
            make_etag(config.fingerprint, base.prefix, name, str(count), *parts) if parts else None
        )

        async def open_page() -> AsyncIterator[bytes]:
            stream = EntryStream(
                section.name,
                section.provider,
                base,
                offset=(target.page - 1) * section.max_urls,
                limit=section.max_urls,
                timeout=config.provider_timeout,
                strict=config.strict,
            )
            return await self._open_urlset(name, base, [stream], target.text)

        return _Document(
            TEXT_TYPE if target.text else XML_TYPE,
            etag,
            version.last_modified if version else None,
            open_page,
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
                raise self._unavailable() from None
            raise _HTTPError(500, "Internal Server Error: invalid entry in strict mode") from None
        if not first:
            for stream in streams:
                await stream.aclose()
            raise _HTTPError(404, "Not Found: this sitemap page has no entries")
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
        return urlset_body(name, writer, streams, first)

    def _index_document(
        self, base: BaseURL, plans: Sequence[SectionPlan], failed: Sequence[str]
    ) -> _Document:
        pages = sum(plan.pages for plan in plans)
        if pages == 0:
            if failed:
                raise self._unavailable()
            raise _HTTPError(404, "Not Found: the sitemap has no entries yet")
        if pages > 50_000:
            logger.error(
                LOG_FAILED, "index", 500, f"{pages} pages exceed the 50,000 an index may list"
            )
            raise _HTTPError(500, "Internal Server Error: too many sitemap pages for one index")
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
                    loc = base.file_url(page_name(config, plan.name, number))
                    if out := chunker.add(writer.sitemap(loc, plan.page_lastmods[number - 1])):
                        yield out
            chunker.add(writer.close())
            yield chunker.flush()

        return _Document(XML_TYPE, etag, modified, lambda: opened(body()), cacheable=not failed)

    def _stylesheet_href(self, base: BaseURL) -> str | None:
        stylesheet = self.config.stylesheet
        if stylesheet is True:
            return base.directory + STYLESHEET_NAME
        return stylesheet or None

    # -- render-cache validators ---------------------------------------------------------

    async def _render_validated(
        self, target: Target, base: BaseURL, document: _Document
    ) -> _Document:
        """ETag from rendered bytes for providers that cannot tell their freshness.

        Renders up to ``render_cache_max_bytes`` into memory; a larger document streams
        without validators instead (never an unbounded buffer).
        """
        key = f"{base.prefix}|{target}"
        cached = await self._cache.get(key)
        if cached is None:
            body = await document.open()
            chunks: list[bytes] = []
            size = 0
            try:
                async for chunk in body:
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > self.config.render_cache_max_bytes:
                        return _Document(
                            document.content_type, None, None, lambda: opened(chain(chunks, body))
                        )
            except BaseException:
                await body.aclose()  # type: ignore[attr-defined]
                raise
            data = b"".join(chunks)
            cached = (make_etag(self.config.fingerprint, hashlib.sha256(data).hexdigest()), data)
            await self._cache.set(key, cached)
        tag, data = cached
        return _Document(document.content_type, tag, None, lambda: opened(bytes_body(data)))

    # -- robots.txt ----------------------------------------------------------------------

    async def respond_robots(self, request: RequestInfo, app_robots: str | None) -> Reply:
        """robots.txt: generated, or the app's own with our ``Sitemap:`` lines appended."""
        try:
            base = self._base_for(request)
        except _HTTPError as exc:
            return self._error(exc.status, exc.message, exc.headers)
        if request.method not in ("GET", "HEAD"):
            return self._error(405, "Method Not Allowed", [("Allow", "GET, HEAD")])
        urls = [base.file_url(self.config.sitemap_name)]
        if self.config.robots_mode == "append" and app_robots is not None:
            text = append_sitemap_lines(app_robots, urls)
        else:
            text = render_robots(self.config.robots_groups, urls)
        data = text.encode("utf-8")
        etag = make_etag("robots", hashlib.sha256(data).hexdigest())
        headers = [("Content-Type", TEXT_TYPE)]
        if self.config.cache_control:
            headers.append(("Cache-Control", self.config.cache_control))
        headers += validator_headers(etag, None)
        if is_not_modified(
            request.method,
            if_none_match=request.headers.get("if-none-match"),
            if_modified_since=request.headers.get("if-modified-since"),
            etag=etag,
            last_modified=None,
        ):
            return Reply(304, not_modified_filter(headers))
        headers.append(("Content-Length", str(len(data))))
        return Reply(200, headers, None if request.method == "HEAD" else bytes_body(data))

    # -- errors --------------------------------------------------------------------------

    def _unavailable(self) -> _HTTPError:
        return _HTTPError(
            503,
            "Service Unavailable: this sitemap's data source failed; try again later",
            [("Retry-After", str(self.config.retry_after))],
        )

    def _error(self, status: int, message: str, extra: Sequence[tuple[str, str]] = ()) -> Reply:
        data = (message + "\n").encode("utf-8")
        headers = [
            ("Content-Type", TEXT_TYPE),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
            *extra,
        ]
        return Reply(status, headers, bytes_body(data))
