"""The framework-agnostic core: one entry point for every request we answer.

Flow, in the order the code runs it, the same for every document (robots.txt too):
route -> host policy (400) -> method (405) -> encoding (406) -> the document and its
validators (_documents; robots.txt from _robots) -> 304? -> HEAD? -> open the body (the
first batch of entries before any header, so a failing provider still gets a clean 503
and HEAD answers what GET would) -> render -> encode.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timezone

from .._config import SitemapConfig
from .._exceptions import InvalidEntryError
from .._logs import logger
from .._sansio.compress import choose_encoding, gzip_chunks
from .._sansio.conditional import (
    is_not_modified,
    last_modified_at,
    not_modified_filter,
    validator_headers,
)
from .._sansio.etag import representation_etag
from .._sansio.hosts import HostNotAllowed, base_for, vary_headers
from .._sansio.limits import ROBOTS_MAX_BYTES
from .._sansio.robots import AppRobots, AppRobotsRequest
from .._sansio.routing import Kind, Target, match
from .._sansio.types import Encoding
from .._sansio.urls import BaseURL
from .answer import FAILED_SECTIONS_HEADER, TEXT_TYPE, Document, HTTPError, RequestInfo, confirm
from .bodies import SizedStream, StoredBody, bytes_body, logging_abort
from .documents import Documents
from .explain import ExplainEndpoint
from .guard import Probe, guard_runner
from .keys import DocumentKeys
from .ledger import ledger_runner
from .observe import CacheStatus, Observers
from .refresh import BackgroundRefreshes
from .shared import Found, SharedRenders, StoredMissing, cache_control

__all__ = ["READ_HEADERS", "Reply", "RequestInfo", "SitemapCore"]

GZIP_FILE_TYPE = "application/gzip"
#: Request headers the core reads (the adapters pass these on); nothing else is looked at.
READ_HEADERS = (
    "accept-encoding",
    "if-none-match",
    "if-modified-since",
    "host",
    "forwarded",
    "x-forwarded-host",
    "x-forwarded-proto",
    "accept",  # (the explain endpoint's: JSON or text; the rest, a proxy's marks)
    "via",
    "x-forwarded-for",
    "x-real-ip",
)
LOG_REFRESH_FAILED = "sitemap %s: background refresh failed: %s: %s"


@dataclass(slots=True)
class Reply:
    """Our answer: status, headers and an async byte stream (``None`` for no body)."""

    status: int
    headers: list[tuple[str, str]]
    body: AsyncIterator[bytes] | None = None
    cache: CacheStatus | None = None


class SitemapCore:
    """Answers sitemap, index, page, text, stylesheet and robots.txt requests."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self.routes = config.routes()
        keys = DocumentKeys(config)
        self._shared = SharedRenders(config, keys)
        self._refreshes = BackgroundRefreshes()  # stale-while-revalidate's renders
        self._documents = Documents(config, keys, self._shared.plan_store, self._shared.plan_calls)
        self._vary = vary_headers(config.hosts)
        self._cache_control = cache_control(config.http.cache_control, config) or ""
        self._observers = Observers(config.observers)
        self.guard = guard_runner(config, self._shared.store, self._shared.calls)
        self.ledger = ledger_runner(config, self._shared.store, self._shared.calls)
        self._explain = ExplainEndpoint(config, self._documents, self.guard)

    def probe_with(self, probe: Probe) -> None:
        """How the guard asks the wrapped app for a URL (the adapter's in-process GET)."""
        if self.guard is not None:
            self.guard.probe = probe

    def route(self, request: RequestInfo) -> Target | None:
        """Our target for this request, or ``None`` to hand it to the wrapped app (the
        explain endpoint too, unless this machine asks: ``_engine/explain.py``)."""
        target = match(request.path, self.routes, request.root_path)
        if target is not None and target.kind is Kind.EXPLAIN:
            return target if self._explain.trusts(request) else None
        return target

    def app_robots_request(self, target: Target, request: RequestInfo) -> AppRobotsRequest | None:
        """What to ask the wrapped app for before :meth:`respond`, if anything.

        Only robots.txt in ``"append"`` mode needs the app's own file, and only for a
        request that passes the host and method checks.
        """
        robots = self.config.robots
        if target.kind is not Kind.ROBOTS or robots is None or robots.mode != "append":
            return None
        try:
            self._check(request)
        except HTTPError:
            return None
        return AppRobotsRequest(timeout=robots.app_timeout, max_bytes=ROBOTS_MAX_BYTES)

    async def respond(
        self, target: Target, request: RequestInfo, app_robots: AppRobots | None = None
    ) -> Reply:
        """Answer a request for one of our documents. Never raises for a bad request."""
        started = self._observers.start()
        if self.guard is not None:  # verdicts past their ttl: probed again (in the background)
            self.guard.sweep()
        try:
            if target.kind is Kind.EXPLAIN:  # (no host policy: the configured base's)
                reply = Reply(*await self._explain.reply(request))
            elif target.kind is Kind.ROBOTS:
                reply = await self._robots(request, self._check(request), app_robots)
            else:
                reply = await self._document(target, request, self._check(request))
        except HTTPError as exc:
            reply = self._error(request, exc)
        return self._watched(reply, target, request, started)

    def _watched(self, reply: Reply, target: Target, request: RequestInfo, started: float) -> Reply:
        """The one observation hook: log and report this reply when its body ends."""
        reply.body = self._observers.watch(
            target,
            request.method,
            request.path,
            reply.status,
            reply.headers,
            reply.body,
            started,
            reply.cache,
        )
        return reply

    async def warm_up(self) -> None:
        """Plan every section now, for the configured base URL (what ``Renders(warm_up=
        True)`` does at start-up); a section that fails is logged and left to requests."""
        if not self.config.renders.warm_up:
            return
        started = time.monotonic()
        try:
            planned, failed = await self.plan_all()
        except Exception as exc:  # strict mode's invalid entry: requests will answer it
            logger.warning("sitemap plans not warmed up: %s", exc)
            return
        logger.info(
            "sitemap plans warmed up: %d of %d sections in %.1f s",
            planned,
            planned + failed,
            time.monotonic() - started,
        )

    async def plan_all(self) -> tuple[int, int]:
        """Plan every section now, for the configured base URL: the sections planned and
        failed (each logged); strict mode's invalid entry raises. A guard learns every
        URL the sections list (``check --app`` lets it settle so)."""
        plans, failed = await self._documents.plans.plan_all(self.config.base)
        return len(plans), len(failed)

    async def aclose(self) -> None:
        """Release held resources (a shared render store's connections); call on shutdown."""
        for runner in (self.guard, self.ledger):
            if runner is not None:
                await runner.aclose()
        await self._refreshes.aclose()
        await self._shared.aclose()

    # -- the checks every request passes, once, in this order ------------------------------

    def _check(self, request: RequestInfo) -> BaseURL:
        try:
            base = base_for(self.config.base, self.config.hosts, request.headers)
            base = base.mounted(request.root_path)
        except HostNotAllowed:
            raise HTTPError(400, "Bad Request: host not allowed") from None  # never echoed
        except InvalidEntryError:  # a root_path that cannot be a URL path
            raise HTTPError(400, "Bad Request: invalid mount path") from None
        if request.method not in ("GET", "HEAD"):
            raise HTTPError(405, "Method Not Allowed", [("Allow", "GET, HEAD")])
        return base

    # -- documents -------------------------------------------------------------------------

    def respond_now(self, target: Target, request: RequestInfo) -> Reply | None:
        """What :meth:`respond` answers, when a fresh render in the in-process store
        answers it (``Renders(ttl=...)``): built without awaiting, so the WSGI adapter
        sends it from the request thread. ``None``: call :meth:`respond`.
        """
        if target.kind is Kind.ROBOTS or not target.is_sitemap:
            return None
        started = self._observers.start()
        try:
            base = self._check(request)
            encoding, negotiable = self._encoding(target, request)
        except HTTPError:
            return None  # respond() answers it (the same checks, in the same order)
        stored = self._shared.stored_now(
            target, base, encoding == "gzip", self.config.http.gzip_level
        )
        if stored is None:
            return None
        document, data = stored
        headers, etag, vouched = self._head(target, document, encoding, negotiable)
        if self._not_modified(request, etag, vouched):
            reply = Reply(304, not_modified_filter(headers), cache=document.cache)
        elif request.method == "HEAD":  # the stored body is in hand: GET's 200
            reply = Reply(200, headers, cache=document.cache)
        else:
            headers.append(("Content-Length", str(len(data))))
            reply = Reply(200, headers, StoredBody(data), document.cache)
        return self._watched(reply, target, request, started)

    def _encoding(self, target: Target, request: RequestInfo) -> tuple[Encoding, bool]:
        """The encoding to send and whether it was negotiated (406 when none is acceptable)."""
        http = self.config.http
        negotiable = http.gzip and not target.gzip_file
        encoding = (
            "gzip"
            if target.gzip_file
            else choose_encoding(request.headers.get("accept-encoding"), http.gzip)
        )
        if encoding is None:
            raise HTTPError(406, "Not Acceptable: identity is refused and gzip is not available")
        return encoding, negotiable

    async def _document(self, target: Target, request: RequestInfo, base: BaseURL) -> Reply:
        encoding, negotiable = self._encoding(target, request)

        if not target.is_sitemap:  # the stylesheet: static bytes, nothing to share
            document = await self._fresh_document(target, base)
            return await self._answer(request, target, document, encoding, negotiable)
        # Stored and fresh, stale while a refresh runs, or rendered now: decided here.
        shared = self._shared
        found = await shared.find(target, base, request.path.rsplit("/", 1)[-1])
        try:
            reused = shared.fresh(found) or self._revalidating(target, base, found)
            try:
                document = reused or await self._rendered(target, base, found)
                return await self._answer(request, target, document, encoding, negotiable)
            except StoredMissing:  # its stored body is gone: rendered here, never a 503
                document = await self._rendered(target, base, found.without_render())
                return await self._answer(request, target, document, encoding, negotiable)
        except HTTPError as exc:
            # The render failed before its first byte: a stored render may answer instead.
            stale = shared.if_error(found, exc)
            if stale is None:
                raise
            return await self._answer(request, target, stale, encoding, negotiable)

    def _revalidating(self, target: Target, base: BaseURL, found: Found) -> Document | None:
        """The stored render, answered stale while one background refresh renders the
        document anew (stale-while-revalidate); None where that cannot be (trio)."""
        if not self._shared.revalidatable(found) or not self._refreshes.start(
            found.key, lambda: self._refresh(target, base, found)
        ):
            return None
        return self._shared.stale(found, "stale-while-revalidate")

    async def _rendered(self, target: Target, base: BaseURL, found: Found) -> Document:
        """The document as the providers have it now, answered through the render store."""
        return await self._shared.share(found, await self._fresh_document(target, base))

    async def _refresh(self, target: Target, base: BaseURL, found: Found) -> None:
        try:
            body = await (await self._rendered(target, base, found)).open()
            try:
                async for _ in body:
                    pass  # the flight stores the render when it completes
            finally:
                await body.aclose()  # type: ignore[attr-defined]
        except Exception as exc:
            logger.warning(LOG_REFRESH_FAILED, found.name, type(exc).__name__, exc)

    async def _fresh_document(self, target: Target, base: BaseURL) -> Document:
        """The document as the providers have it now (no stored render involved)."""
        return await self._documents.get(target, base)

    async def _answer(
        self,
        request: RequestInfo,
        target: Target,
        document: Document,
        encoding: Encoding,
        negotiable: bool,
    ) -> Reply:
        http = self.config.http
        headers, etag, vouched = self._head(target, document, encoding, negotiable)
        if self._not_modified(request, etag, vouched):
            if _is_star(request) or not document.exists:
                await confirm(document)  # a 304 only for a representation that exists
            return Reply(304, not_modified_filter(headers), cache=document.cache)
        if request.method == "HEAD":
            await confirm(document)  # the status GET would get: 404 and 503 included
            return Reply(200, headers, cache=document.cache)
        if encoding == "gzip" and document.open_gzip is not None:
            body = await document.open_gzip(http.gzip_level)  # stored, or one compressor
        else:
            body = await document.open()
            if encoding == "gzip":
                body = gzip_chunks(body, http.gzip_level)
        if isinstance(body, StoredBody | SizedStream):  # a stored body: its length is known
            headers.append(("Content-Length", str(body.length)))
        if isinstance(body, StoredBody):  # whole in hand: nothing can fail mid-body
            return Reply(200, headers, body, document.cache)
        return Reply(200, headers, logging_abort(request.path, body), document.cache)

    def _head(
        self, target: Target, document: Document, encoding: Encoding, negotiable: bool
    ) -> tuple[list[tuple[str, str]], str | None, datetime | None]:
        """A reply's headers, its representation's ETag and the date a 304 may rest on."""
        http = self.config.http
        etag = (
            representation_etag(document.etag, encoding, target.gzip_file)
            if document.etag is not None
            else None
        )
        headers = [("Content-Type", GZIP_FILE_TYPE if target.gzip_file else document.content_type)]
        if encoding == "gzip" and not target.gzip_file:
            headers.append(("Content-Encoding", "gzip"))
        headers += self._vary_header(negotiable)
        if http.cache_control and document.cacheable:
            headers.append(("Cache-Control", self._cache_control))
        elif not document.cacheable:
            headers.append(("Cache-Control", "no-store"))
        if document.failed_sections:
            headers.append((FAILED_SECTIONS_HEADER, ", ".join(document.failed_sections)))
        # Its format's (the HTML views' CSP, noindex, ...), however the body is obtained.
        headers += self._documents.formats.headers(target.format)
        last_modified = last_modified_at(document.last_modified, datetime.now(timezone.utc))
        headers += validator_headers(etag, last_modified)

        # Without an ETag the date is the provider's alone, which a delete leaves put:
        # it earns no 304 unless the user vouches for it (stamped dates come with ETags).
        vouched = last_modified if etag is not None or http.trust_provider_times else None
        return headers, etag, vouched

    # -- robots.txt ------------------------------------------------------------------------

    async def _robots(
        self, request: RequestInfo, base: BaseURL, app_robots: AppRobots | None
    ) -> Reply:
        """robots.txt (its text: _engine/small_documents.py): never compressed, no
        Last-Modified, the configured Cache-Control as it is."""
        data, etag = self._documents.small.robots(base, app_robots)
        headers = [("Content-Type", TEXT_TYPE)]
        headers += self._vary_header(False)
        if self.config.http.cache_control:
            headers.append(("Cache-Control", self.config.http.cache_control))
        headers += validator_headers(etag, None)
        if self._not_modified(request, etag, None):
            return Reply(304, not_modified_filter(headers))
        headers.append(("Content-Length", str(len(data))))
        return Reply(200, headers, None if request.method == "HEAD" else bytes_body(data))

    # -- helpers ---------------------------------------------------------------------------

    def _vary_header(self, negotiable: bool) -> list[tuple[str, str]]:
        names = (*self._vary, "Accept-Encoding") if negotiable else self._vary
        return [("Vary", ", ".join(names))] if names else []

    @staticmethod
    def _not_modified(request: RequestInfo, etag: str | None, modified: datetime | None) -> bool:
        return is_not_modified(
            request.method,
            if_none_match=request.headers.get("if-none-match"),
            if_modified_since=request.headers.get("if-modified-since"),
            etag=etag,
            last_modified=modified,
        )

    def _error(self, request: RequestInfo, exc: HTTPError) -> Reply:
        data = (exc.message + "\n").encode("utf-8")
        headers = [
            ("Content-Type", TEXT_TYPE),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
            *exc.headers,
        ]
        return Reply(exc.status, headers, None if request.method == "HEAD" else bytes_body(data))


def _is_star(request: RequestInfo) -> bool:
    return (request.headers.get("if-none-match") or "").strip() == "*"
