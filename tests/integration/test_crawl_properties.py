"""Stateful property tests: crawls that follow the index while the data changes.

A Hypothesis state machine applies random inserts, deletes, renames and lastmod updates
to a SQL table (SQLite, and the PostgreSQL CI starts; rows through `to_entry` or the
column mode) *between the requests of a crawl*
(the index, then its pages one by one), and to a generator provider between crawls. It
checks what a crawler sees: every page within its budget and XSD-valid; every row that
existed throughout the crawl on exactly one page (at most one when a page's key range
outgrew its budget meanwhile, which is logged); and validators that change exactly when
the content does.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, text
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.pool import NullPool

from sitemap_middleware import SitemapEntry
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.providers import ProviderVersion, SQLAlchemyProvider
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, child_urls, page_urls

POSTGRES_ENV = "SITEMAP_TEST_POSTGRES_URL"
MAX_URLS = 4
MAX_BYTES = 2048  # a few URLs a page: crawls of a handful of rows span several pages
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
SETTINGS = settings(
    max_examples=12,
    stateful_step_count=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
metadata = MetaData()
rows_table = Table(
    "crawl_rows",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)
keys = st.integers(1, 60)
slugs = st.text("abcxyz", min_size=1, max_size=40)  # long slugs make pages fill by bytes


def _to_entry(row: Any) -> dict[str, Any]:
    return {"loc": f"/r/{row.id}/{row.slug}", "lastmod": row.updated_at}


def _key(url: str) -> int:
    return int(url.split("/r/", 1)[1].split("/", 1)[0])


class LogWatch(logging.Handler):
    """Collects the middleware's warnings about page ranges that outgrew their budget."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.full: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "outgrew" in record.getMessage():
            self.full.append(record.getMessage())


async def _get(core: SitemapCore, url: str) -> tuple[int, bytes, dict[str, str]]:
    reply, body = await fetch(core, url.removeprefix("https://example.com"))
    return reply.status, body, dict(reply.headers)


class SQLCrawl(RuleBasedStateMachine):
    """Random writes to a table between the requests of crawls; see the module docstring."""

    url = ""

    def __init__(self) -> None:
        super().__init__()
        # A fresh connection per request: each anyio.run below is its own event loop.
        self.engine = create_async_engine(self.url, poolclass=NullPool)
        anyio.run(self._run, lambda conn: conn.run_sync(metadata.drop_all))
        anyio.run(self._run, lambda conn: conn.run_sync(metadata.create_all))
        self.rows: dict[int, tuple[str, datetime]] = {}
        self.core = self._core(columns=False)
        self.pending: list[str] = []
        self.crawling = False
        self.throughout: set[int] = set()
        self.seen: list[int] = []
        self.watch = LogWatch()
        logging.getLogger("sitemap_middleware").addHandler(self.watch)
        self.validators: tuple[str, str | None] | None = None
        self.content: bytes | None = None

    def _core(self, *, columns: bool) -> SitemapCore:
        """The section through ``to_entry``, or the column mode (a location template)."""
        mapping: dict[str, Any] = (
            {"location": "/r/{id}/{slug}"} if columns else {"to_entry": _to_entry}
        )
        provider = SQLAlchemyProvider(
            self.engine, rows_table, key="id", lastmod="updated_at", metadata_ttl=0, **mapping
        )
        return make_core(
            {"rows": provider}, max_urls_per_page=MAX_URLS, max_bytes_per_page=MAX_BYTES
        )

    def teardown(self) -> None:
        logging.getLogger("sitemap_middleware").removeHandler(self.watch)
        anyio.run(self._run, lambda conn: conn.run_sync(metadata.drop_all))

    async def _run(self, action: Callable[[AsyncConnection], Awaitable[Any]]) -> Any:
        async with self.engine.begin() as conn:
            return await action(conn)

    def _write(self, statement: str, **params: Any) -> None:
        anyio.run(self._run, lambda conn: conn.execute(text(statement), params))

    @initialize(initial=st.dictionaries(keys, slugs, max_size=12), columns=st.booleans())
    def fill(self, initial: dict[int, str], columns: bool) -> None:
        self.core = self._core(columns=columns)
        for key, slug in initial.items():
            self.insert_row(key, slug)

    def insert_row(self, key: int, slug: str) -> None:
        when = (START + timedelta(minutes=key)).replace(tzinfo=None)
        self._write("INSERT INTO crawl_rows VALUES (:k, :s, :t)", k=key, s=slug, t=when)
        self.rows[key] = (slug, when)

    # -- writes (any time, also in the middle of a crawl) ------------------------------

    @rule(key=keys, slug=slugs)
    def insert(self, key: int, slug: str) -> None:
        if key not in self.rows:
            self.insert_row(key, slug)

    @precondition(lambda self: self.rows)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.rows)))
        self._write("DELETE FROM crawl_rows WHERE id = :k", k=key)
        del self.rows[key]
        self.throughout.discard(key)

    @precondition(lambda self: self.rows)
    @rule(data=st.data(), slug=slugs)
    def rename(self, data: st.DataObject, slug: str) -> None:
        key = data.draw(st.sampled_from(sorted(self.rows)))
        self._write("UPDATE crawl_rows SET slug = :s WHERE id = :k", k=key, s=slug)
        self.rows[key] = (slug, self.rows[key][1])

    @precondition(lambda self: self.rows)
    @rule(data=st.data(), minutes=st.integers(-5000, 5000))
    def touch(self, data: st.DataObject, minutes: int) -> None:
        key = data.draw(st.sampled_from(sorted(self.rows)))
        when = self.rows[key][1] + timedelta(minutes=minutes)
        self._write("UPDATE crawl_rows SET updated_at = :t WHERE id = :k", k=key, t=when)
        self.rows[key] = (self.rows[key][0], when)

    # -- a crawl: the index, then its pages one rule at a time -------------------------

    @precondition(lambda self: not self.crawling)
    @rule()
    def fetch_index(self) -> None:
        status, body, _ = anyio.run(_get, self.core, "/sitemap_index.xml")
        if not self.rows:
            assert status == 404
            return
        assert status == 200, body
        self.pending = child_urls(check_document(body))
        self.crawling = True
        self.throughout = set(self.rows)
        self.seen = []
        self.watch.full.clear()

    @precondition(lambda self: self.crawling and self.pending)
    @rule()
    def fetch_page(self) -> None:
        url = self.pending.pop(0)
        status, body, _ = anyio.run(_get, self.core, url)
        if status == 404:  # every row of its key range was deleted meanwhile
            return
        assert status == 200, body
        assert len(body) <= MAX_BYTES
        urls = page_urls(check_document(body))
        assert 1 <= len(urls) <= MAX_URLS
        self.seen += [_key(u) for u in urls]

    @precondition(lambda self: self.crawling and not self.pending)
    @rule()
    def finish_crawl(self) -> None:
        self.crawling = False
        assert len(self.seen) == len(set(self.seen)), "a row was listed twice"
        missing = self.throughout - set(self.seen)
        if not self.watch.full:
            assert not missing, f"rows that existed throughout the crawl were missed: {missing}"

    # -- validators --------------------------------------------------------------------

    @rule()
    def validators_follow_content(self) -> None:
        status, body, headers = anyio.run(_get, self.core, "/sitemap.xml")
        if status != 200:
            return
        # Last-Modified may be absent: the content changed within the second of the last
        # stamp, so no date can tell the versions apart yet (If-Modified-Since then gets 200).
        current = (headers["ETag"], headers.get("Last-Modified"))
        if self.content is not None and self.validators is not None:
            changed = body != self.content
            assert (current[0] != self.validators[0]) == changed
            before, after = _date(self.validators[1]), _date(current[1])
            if changed:
                assert before is None or after is None or after > before
                if self.validators[1] is not None:
                    status, _, _ = anyio.run(
                        _conditional, self.core, self.validators[1], self.validators[0]
                    )
                    assert status == 200  # no 304 for changed content
            elif before is not None and after is not None:
                # Same bytes, same ETag. Last-Modified may still have moved forwards: the
                # content changed and changed back since the last look.
                assert after >= before
        self.content, self.validators = body, current

    @invariant()
    def table_matches_model(self) -> None:
        result = anyio.run(
            self._run, lambda conn: conn.execute(text("SELECT count(*) FROM crawl_rows"))
        )
        assert result.scalar() == len(self.rows)


def _date(value: str | None) -> datetime | None:
    from werkzeug.http import parse_date

    if value is None:
        return None
    parsed = parse_date(value)
    assert parsed is not None
    return parsed


async def _conditional(core: SitemapCore, modified: str, etag: str) -> tuple[int, bytes, None]:
    reply, body = await fetch(core, "/sitemap.xml", if_modified_since=modified)
    return reply.status, body, None


def _sqlite_url(tmp_path: Any) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'crawl.sqlite3'}"


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_sql_crawls_under_random_writes(backend: str, tmp_path: Any) -> None:
    """Following the index yields every row that lived throughout, once; pages stay valid."""
    if backend == "sqlite":
        url = _sqlite_url(tmp_path)
    else:
        url = os.environ.get(POSTGRES_ENV, "")
        if not url:
            pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server (.ci/run starts one)")
    machine = type("Crawl", (SQLCrawl,), {"url": url})
    machine.TestCase.settings = SETTINGS  # type: ignore[attr-defined]
    machine.TestCase().runTest()  # type: ignore[attr-defined]


class VersionedGenerator:
    """A generator provider over a Python list, versioned by a hash of its content."""

    def __init__(self) -> None:
        self.items: list[tuple[str, int]] = []

    async def entries(self) -> AsyncIterator[SitemapEntry]:
        for slug, minutes in list(self.items):
            yield SitemapEntry(f"/g/{slug}", lastmod=START + timedelta(minutes=minutes))

    async def version(self) -> ProviderVersion:
        digest = hashlib.sha256(repr(self.items).encode()).hexdigest()
        return ProviderVersion(token=digest)


class GeneratorCrawl(RuleBasedStateMachine):
    """Random changes to a generator's list between full crawls."""

    def __init__(self) -> None:
        super().__init__()
        self.provider = VersionedGenerator()
        self.core = make_core(
            {"g": self.provider}, max_urls_per_page=MAX_URLS, max_bytes_per_page=MAX_BYTES
        )
        self.last: tuple[list[str], str, str | None] | None = None

    @rule(slug=slugs, minutes=st.integers(0, 10_000))
    def insert(self, slug: str, minutes: int) -> None:
        if slug not in [s for s, _ in self.provider.items]:
            self.provider.items.insert(minutes % (len(self.provider.items) + 1), (slug, minutes))

    @precondition(lambda self: self.provider.items)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(self.provider.items) - 1))
        del self.provider.items[index]

    @precondition(lambda self: self.provider.items)
    @rule(data=st.data(), minutes=st.integers(0, 10_000))
    def touch(self, data: st.DataObject, minutes: int) -> None:
        index = data.draw(st.integers(0, len(self.provider.items) - 1))
        self.provider.items[index] = (self.provider.items[index][0], minutes)

    @rule()
    def crawl(self) -> None:
        status, body, headers = anyio.run(_get, self.core, "/sitemap_index.xml")
        if not self.provider.items:
            assert status == 404
            return
        found: list[str] = []
        pages: dict[str, tuple[bytes, str | None]] = {}
        for child in child_urls(check_document(body)):
            page_status, page, page_headers = anyio.run(_get, self.core, child)
            assert page_status == 200 and len(page) <= MAX_BYTES
            urls = page_urls(check_document(page))
            assert 1 <= len(urls) <= MAX_URLS
            found += urls
            pages[child] = (page, page_headers.get("ETag"))
        expected = [f"https://example.com/g/{slug}" for slug, _ in self.provider.items]
        assert found == expected  # every live URL exactly once, in order
        etag, modified = headers["ETag"], headers.get("Last-Modified")
        if self.last is not None:
            # Never a 304 for changed bytes, no new tag when nothing changed: the index's tag
            # moves when its bytes do (a page may change under an unchanged index when its
            # URLs change and its lastmod does not; the tag also names each page's count),
            # and stays while the index and every page stay; a page's follows the page.
            everything = body == self._last_index and pages.keys() == self._last_pages.keys()
            everything = everything and all(
                p == self._last_pages[c][0] for c, (p, _) in pages.items()
            )
            if body != self._last_index:
                assert etag != self.last[1]
            if everything:
                assert etag == self.last[1]
            for child, (page, page_etag) in pages.items():
                if child in self._last_pages and page_etag is not None:
                    last_page, last_etag = self._last_pages[child]
                    if page != last_page:  # (a new version may retag a page that stayed)
                        assert page_etag != last_etag, child
            changed = body != self._last_index  # (the index's own date, as its tag)
            before, after = _date(self.last[2]), _date(modified)
            if before is not None and after is not None:  # absent within a second's change
                assert after > before if changed else after >= before
        self.last, self._last_index, self._last_pages = (expected, etag, modified), body, pages

    _last_index = b""
    _last_pages: dict[str, tuple[bytes, str | None]] = {}


def test_generator_crawls_between_random_changes() -> None:
    """Crawls of a changing generator: each finds every URL once; validators follow content."""
    GeneratorCrawl.TestCase.settings = SETTINGS
    GeneratorCrawl.TestCase().runTest()
