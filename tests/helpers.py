"""Shared test helpers: document checks, counting providers, reply collection."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from lxml import etree
from usp.objects.sitemap import AbstractSitemap
from usp.tree import sitemap_from_str

from sitemap_middleware import SitemapEntry
from sitemap_middleware._engine.core import Reply, RequestInfo, SitemapCore
from sitemap_middleware.providers import ProviderVersion
from sitemap_middleware.stores import MemoryRenderStore

__all__ = ["RequestInfo", "SitemapCore"]

SCHEMAS_ENV = "SITEMAP_SCHEMAS_DIR"
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XML_XSD = Path(xmlschema.__file__).parent / "schemas" / "XML" / "xml.xsd"


#: Namespace -> schema file: the sitemap urlset and every extension it may carry.
URLSET_SCHEMAS = {
    "http://www.sitemaps.org/schemas/sitemap/0.9": "sitemap.xsd",
    "http://www.google.com/schemas/sitemap-image/1.1": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9": "sitemap-news.xsd",
    "http://www.w3.org/1999/xhtml": "xhtml1-strict.xsd",
}
XML_XSD_URL = "http://www.w3.org/2001/xml.xsd"


class _OfflineXmlXsd(etree.Resolver):
    """xhtml1-strict.xsd imports xml.xsd from w3.org; use xmlschema's bundled copy."""

    def resolve(self, system_url: str | None, public_id: str | None, context: Any) -> Any:
        if system_url == XML_XSD_URL:
            return self.resolve_filename(str(XML_XSD), context)
        return None


def _schema(imports: dict[str, Path]) -> etree.XMLSchema:
    lines = [
        f'<xs:import namespace="{ns}" schemaLocation="{path.as_uri()}"/>'
        for ns, path in imports.items()
    ]
    wrapper = (
        '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">' + "".join(lines) + "</xs:schema>"
    )
    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(_OfflineXmlXsd())
    return etree.XMLSchema(etree.fromstring(wrapper.encode(), parser))


@cache
def _schemas() -> tuple[etree.XMLSchema, etree.XMLSchema] | None:
    """The official XSDs compiled by libxml2 (lxml): ~0.1 s for a 50,000-URL page."""
    directory = os.environ.get(SCHEMAS_ENV)
    if not directory:
        return None
    root = Path(directory).resolve()
    urlset = _schema({ns: root / name for ns, name in URLSET_SCHEMAS.items()})
    index = _schema({"http://www.sitemaps.org/schemas/sitemap/0.9": root / "siteindex.xsd"})
    return urlset, index


def require_schemas() -> None:
    """Skip the calling test when the official XSDs are not available."""
    if _schemas() is None:
        pytest.skip(
            f"{SCHEMAS_ENV} is not set: official sitemap XSDs unavailable (.ci/run sets it)"
        )


def check_document(body: bytes) -> AbstractSitemap:
    """Parse ``body`` as a crawler would (ultimate-sitemap-parser) and validate it.

    XSD validation runs whenever SITEMAP_SCHEMAS_DIR is set (always under .ci/run).
    Returns usp's parsed sitemap.
    """
    text = body.decode("utf-8")
    schemas = _schemas()
    if schemas is not None:
        urlset, index = schemas
        schema = index if "<sitemapindex" in text[:400] else urlset
        schema.assertValid(etree.fromstring(body))
    parsed = sitemap_from_str(text)
    assert type(parsed).__name__ in ("PagesXMLSitemap", "IndexXMLSitemap"), parsed
    return parsed


def page_urls(parsed: AbstractSitemap) -> list[str]:
    return [page.url for page in parsed.all_pages()]


def child_urls(parsed: AbstractSitemap) -> list[str]:
    return [child.url for child in getattr(parsed, "sub_sitemaps", [])]


class CountingProvider:
    """A provider with every capability that records how it is used."""

    def __init__(
        self,
        count: int,
        *,
        host: str = "https://example.com",
        versioned: bool = True,
        countable: bool = True,
        fail_after: int | None = None,
        hang_after: int | None = None,
        healthy_passes: int = 0,
    ) -> None:
        self.n = count
        self.host = host
        self.versioned = versioned
        self.countable = countable
        self.fail_after = fail_after
        self.hang_after = hang_after
        #: Passes that run normally before fail_after/hang_after apply: 1 lets the page
        #: plan (one measuring pass) succeed, so the failure hits the served page.
        self.healthy_passes = healthy_passes
        self.iterations = 0
        self.entries_yielded = 0
        self.closed = 0

    def _entry(self, i: int) -> SitemapEntry:
        return SitemapEntry(
            f"{self.host}/products/{i}?ref=a&b={i}",
            lastmod=datetime(2024, 1, 1 + i % 28, tzinfo=timezone.utc),
            changefreq="daily",
            priority=0.5,
        )

    async def _gen(self, start: int, stop: int) -> AsyncIterator[SitemapEntry]:
        import anyio

        self.iterations += 1
        faulty = self.iterations > self.healthy_passes
        try:
            for i in range(start, stop):
                if faulty and self.fail_after is not None and i >= self.fail_after:
                    raise RuntimeError(f"database went away at row {i}")
                if faulty and self.hang_after is not None and i >= self.hang_after:
                    await anyio.sleep_forever()
                self.entries_yielded += 1
                yield self._entry(i)
                if i % 256 == 0:
                    await anyio.sleep(0)  # let disconnects and cancellation in
        finally:
            self.closed += 1

    def entries(self) -> AsyncIterator[SitemapEntry]:
        return self._gen(0, self.n)

    def page(self, offset: int, limit: int) -> AsyncIterator[SitemapEntry]:
        return self._gen(offset, min(self.n, offset + limit))

    async def count(self) -> int:
        if not self.countable:
            raise AssertionError("count() used on a provider that disabled it")
        return self.n

    async def version(self) -> ProviderVersion:
        if not self.versioned:
            return ProviderVersion()
        return ProviderVersion(
            token=f"v{self.n}", last_modified=datetime(2024, 1, 28, tzinfo=timezone.utc)
        )


async def collect(reply: Reply) -> bytes:
    if reply.body is None:
        return b""
    return b"".join([chunk async for chunk in reply.body])


async def fetch(
    core: SitemapCore, path: str, method: str = "GET", **headers: str
) -> tuple[Reply, bytes]:
    """Route and answer one request through the core; returns the reply and its body."""
    request = RequestInfo(
        method, path, {k.replace("_", "-").lower(): v for k, v in headers.items()}
    )
    target = core.route(request)
    assert target is not None, f"{path} is not ours"
    reply = await core.respond(target, request)
    return reply, await collect(reply)


class ListProvider:
    """A generator provider over a list a test may change between requests (no version:
    every pass reads it as it is now)."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    async def entries(self) -> Any:
        for item in list(self.items):
            yield item


def header(reply: Reply, name: str) -> str | None:
    for key, value in reply.headers:
        if key.lower() == name.lower():
            return value
    return None


class RecordingStore(MemoryRenderStore):
    """An in-process RenderStore that records whether it was closed."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


def in_forked_child(check: Callable[[], bool], timeout: float = 20) -> str:
    """Run ``check`` in a fork()ed child; ``"ok"``, ``"failed"``, ``"raised"`` or ``"hung"``.

    For pre-fork servers (gunicorn --preload): what the parent set up before forking must
    not break, or deadlock, the child.
    """
    import os
    import signal
    import time

    pid = os.fork()
    if pid == 0:  # the child reports through its exit status only
        status = 3
        try:
            status = 0 if check() else 2
        finally:
            os._exit(status)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return {0: "ok", 2: "failed"}.get(os.waitstatus_to_exitcode(status), "raised")
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "hung"
        time.sleep(0.05)


#: An absolute http(s) URL as RFC 3986 writes it: only the characters a URI holds,
#: well-formed escapes, and at most one "#" (the fragment's delimiter).
_URI_PART = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*"
RFC3986_URL = re.compile(rf"https?://[^/?#\s]+/{_URI_PART}(?:#{_URI_PART})?")


def check_locs(urls: list[str]) -> None:
    """Each URL is a valid ``<loc>``: RFC 3986 (always) and the sitemap XSD's ``tLoc``
    (``xs:anyURI``, whenever SITEMAP_SCHEMAS_DIR is set)."""
    from sitemap_middleware._sansio.xml import escape_loc

    for url in urls:
        assert RFC3986_URL.fullmatch(url), url
    schemas = _schemas()
    if schemas is not None and urls:
        lines = "".join(f"<url><loc>{escape_loc(url)}</loc></url>" for url in urls)
        document = f'<urlset xmlns="{SITEMAP_NS[1:-1]}">{lines}</urlset>'
        schemas[0].assertValid(etree.fromstring(document.encode()))


@contextmanager
def recorded_statements(engine: Any) -> Iterator[list[str]]:
    """The SQL statements a SQLAlchemy engine runs inside the block, spaces folded."""
    from sqlalchemy import event

    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(" ".join(statement.split()))

    sync_engine = getattr(engine, "sync_engine", engine)
    event.listen(sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(sync_engine, "before_cursor_execute", record)


async def revalidated_together(
    core: SitemapCore, path: str, etag: str, times: int = 30
) -> list[int]:
    """The statuses of ``times`` concurrent GETs of ``path`` with If-None-Match: ``etag``."""
    import anyio

    statuses: list[int] = []

    async def revalidate() -> None:
        reply, _ = await fetch(core, path, if_none_match=etag)
        statuses.append(reply.status)

    async with anyio.create_task_group() as group:
        for _ in range(times):
            group.start_soon(revalidate)
    return statuses
