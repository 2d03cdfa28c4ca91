"""The framework-agnostic core: a request in, a pass-through or a streaming reply out.

Flow: route -> method -> host policy -> encoding -> document and its validators
(_documents) -> 304? -> HEAD? -> open the body (the first batch of entries before any
header, so a failing provider still gets a clean 503) -> render -> encode.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from .._config import SitemapConfig
from .._sansio.compress import choose_encoding, gzip_chunks
from .._sansio.conditional import (
    is_not_modified,
    make_etag,
    not_modified_filter,
    representation_etag,
    validator_headers,
)
from .._sansio.hosts import HostNotAllowed, base_for
from .._sansio.robots import append_sitemap_lines, render_robots
from .._sansio.routing import Target, match
from .._sansio.urls import BaseURL
from .bodies import bytes_body
from .documents import TEXT_TYPE, Documents, HTTPError

__all__ = ["Reply", "RequestInfo", "SitemapCore"]

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
)
#: robots.txt is read up to 500 KiB by Google; an app's own larger than this is not used
#: in robots_mode="append" (both adapters read at most this much of it).
MAX_APP_ROBOTS = 512 * 1024


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


class SitemapCore:
    """Answers sitemap, index, page, text, stylesheet and robots.txt requests."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self._documents = Documents(config)

    def route(self, request: RequestInfo) -> Target | None:
        """Our target for this request, or ``None`` to hand it to the wrapped app."""
        return match(request.path, self.config)

    async def respond(self, target: Target, request: RequestInfo) -> Reply:
        """Answer a request for one of our documents. Never raises for a bad request."""
        try:
            return await self._respond(target, request)
        except HTTPError as exc:
            return self._error(exc.status, exc.message, exc.headers)

    async def _respond(self, target: Target, request: RequestInfo) -> Reply:
        config = self.config
        if request.method not in ("GET", "HEAD"):
            raise HTTPError(405, "Method Not Allowed", [("Allow", "GET, HEAD")])
        base = self._base_for(request)
        negotiable = config.gzip and not target.gzip_file
        encoding = (
            "gzip"
            if target.gzip_file
            else choose_encoding(request.headers.get("accept-encoding"), config.gzip)
        )
        if encoding is None:
            raise HTTPError(406, "Not Acceptable: identity is refused and gzip is not available")

        document = await self._documents.get(target, base)
        if document.etag is None and config.fallback_validators == "render" and target.is_sitemap:
            document = await self._documents.render_validated(target, base, document)
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
        if config.x_robots_tag:  # robots.txt is answered by respond_robots, without it
            headers.append(("X-Robots-Tag", config.x_robots_tag))
        headers += validator_headers(etag, document.last_modified)

        if not_modified := _not_modified(request, headers, etag, document.last_modified):
            return not_modified
        if request.method == "HEAD":
            return Reply(200, headers)
        body = await document.open()
        if encoding == "gzip":
            body = gzip_chunks(body, config.gzip_level)
        return Reply(200, headers, body)

    async def aclose(self) -> None:
        """Release held resources (a shared render cache's connections); call on shutdown."""
        await self._documents.aclose()

    def _base_for(self, request: RequestInfo) -> BaseURL:
        try:
            return base_for(self.config, request.headers)
        except HostNotAllowed:
            raise HTTPError(400, "Bad Request: host not allowed") from None  # never echoed

    # -- robots.txt ----------------------------------------------------------------------

    async def respond_robots(self, request: RequestInfo, app_robots: str | None) -> Reply:
        """robots.txt: generated, or the app's own with our ``Sitemap:`` lines appended."""
        try:
            base = self._base_for(request)
        except HTTPError as exc:
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
        if not_modified := _not_modified(request, headers, etag, None):
            return not_modified
        headers.append(("Content-Length", str(len(data))))
        return Reply(200, headers, None if request.method == "HEAD" else bytes_body(data))

    # -- errors --------------------------------------------------------------------------

    def _error(self, status: int, message: str, extra: Sequence[tuple[str, str]] = ()) -> Reply:
        data = (message + "\n").encode("utf-8")
        headers = [
            ("Content-Type", TEXT_TYPE),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
            *extra,
        ]
        return Reply(status, headers, bytes_body(data))


def _not_modified(
    request: RequestInfo,
    headers: list[tuple[str, str]],
    etag: str | None,
    last_modified: datetime | None,
) -> Reply | None:
    """The 304 for a conditional request that matches (RFC 9110), else None."""
    if is_not_modified(
        request.method,
        if_none_match=request.headers.get("if-none-match"),
        if_modified_since=request.headers.get("if-modified-since"),
        etag=etag,
        last_modified=last_modified,
    ):
        return Reply(304, not_modified_filter(headers))
    return None
