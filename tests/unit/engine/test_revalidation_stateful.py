"""No stale 304, ever: a stateful property over writes and revalidations.

Hypothesis drives a versioned section through inserts, deletes, renames, lastmods that
move backwards, returns to an earlier content (A -> B -> A) and a clock that moves by
fractions of a second, while a client revalidates each document kind with
If-None-Match, If-Modified-Since or both. Whenever the answer is 304, the document as
served now must be exactly the body the client holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone

import anyio
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from sitemap_middleware import Renders, SitemapEntry
from sitemap_middleware._caches.store import MemoryRenderStore
from sitemap_middleware._engine import shared
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import fetch, header, make_core

PATHS = ["/sitemap.xml", "/sitemap_index.xml", "/sitemap-p-1.xml", "/sitemap-p-2.xml"]
START = datetime(2024, 1, 1, tzinfo=timezone.utc)


class Rows:
    """A versioned section: its token is a digest of its content, its time the newest."""

    def __init__(self) -> None:
        self.rows: dict[int, tuple[str, datetime]] = {
            i: (f"p{i}", START + timedelta(hours=i)) for i in range(1, 6)
        }

    async def entries(self) -> AsyncIterator[SitemapEntry]:
        for key in sorted(self.rows):
            slug, lastmod = self.rows[key]
            yield SitemapEntry(f"/{slug}", lastmod=lastmod)

    async def version(self) -> ProviderVersion:
        content = repr(sorted(self.rows.items())).encode()
        newest = max((lastmod for _, lastmod in self.rows.values()), default=None)
        return ProviderVersion(token=hashlib.sha256(content).hexdigest(), last_modified=newest)


class TimeOnlyRows(Rows):
    """A version with a time and no token (``GenericSitemap(date_field=...)``): a delete
    or a rename leaves the time where it was."""

    async def version(self) -> ProviderVersion:
        newest = max((lastmod for _, lastmod in self.rows.values()), default=None)
        return ProviderVersion(last_modified=newest)


class Revalidation(RuleBasedStateMachine):
    rows_type: type[Rows] = Rows
    renders = Renders()

    def __init__(self) -> None:
        super().__init__()
        self.now = 1_770_000_000.0  # ours, fixed and in the past (replies cap the future)
        self._real_clock = shared.wall_clock
        shared.wall_clock = lambda: self.now
        self.rows = self.rows_type()
        self.history: list[dict[int, tuple[str, datetime]]] = []
        self.core = make_core({"p": self.rows}, max_urls_per_page=3, renders=self.renders)
        self.held: dict[str, tuple[bytes, str | None, str | None]] = {}
        self.next_key = 100

    def teardown(self) -> None:
        shared.wall_clock = self._real_clock

    def _get(self, path: str, **headers: str) -> tuple[int, bytes, str | None, str | None]:
        reply, body = anyio.run(lambda: fetch(self.core, path, **headers))
        return reply.status, body, header(reply, "etag"), header(reply, "last-modified")

    def _write(self) -> None:
        self.history.append(dict(self.rows.rows))

    @rule(slug=st.sampled_from(["x", "y", "z"]))
    def insert(self, slug: str) -> None:
        self._write()
        self.next_key += 1
        self.rows.rows[self.next_key] = (f"{slug}{self.next_key}", START)  # an old lastmod

    @precondition(lambda self: len(self.rows.rows) > 1)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        self._write()
        key = data.draw(st.sampled_from(sorted(self.rows.rows)))
        del self.rows.rows[key]

    @precondition(lambda self: bool(self.rows.rows))
    @rule(data=st.data())
    def rename(self, data: st.DataObject) -> None:
        self._write()
        key = data.draw(st.sampled_from(sorted(self.rows.rows)))
        slug, lastmod = self.rows.rows[key]
        self.rows.rows[key] = (slug + "r", lastmod)  # the lastmod stays put

    @precondition(lambda self: bool(self.history))
    @rule()
    def revert(self) -> None:
        """Back to the content before the last write (A -> B -> A)."""
        self.rows.rows.clear()
        self.rows.rows.update(self.history.pop())

    @rule()
    def evict(self) -> None:
        """The store loses its renders (an idle hour past their keep, an LRU eviction, a
        restart of Redis): what a client holds must still never earn a stale 304."""
        store = self.core._shared.store
        assert isinstance(store, MemoryRenderStore)
        store._items.clear()

    @rule(seconds=st.sampled_from([0.0, 0.3, 0.7, 1.0, 5.0, 3600.0]))
    def tick(self, seconds: float) -> None:
        self.now += seconds

    @rule(path=st.sampled_from(PATHS), how=st.sampled_from(["inm", "ims", "both"]))
    def revalidate(self, path: str, how: str) -> None:
        held = self.held.get(path)
        if held is None:
            status, body, etag, modified = self._get(path)
            if status == 200:
                self.held[path] = (body, etag, modified)
            return
        body, etag, modified = held
        headers: dict[str, str] = {}
        if how in ("inm", "both") and etag:
            headers["if_none_match"] = etag
        if how in ("ims", "both") and modified:
            headers["if_modified_since"] = modified
        status, new_body, new_etag, new_modified = self._get(path, **headers)
        if status == 304:
            _, current, _, _ = self._get(path)
            assert current == body, f"a 304 for changed content: {path} by {how}"
        elif status == 200:
            self.held[path] = (new_body, new_etag, new_modified)
        else:
            self.held.pop(path, None)  # a page that is gone (404) now

    @rule(how=st.sampled_from(["inm", "ims", "both"]))
    def crawl(self, how: str) -> None:
        """A crawler's pass: every document revalidated the same way."""
        for path in PATHS:
            self.revalidate(path, how)

    @invariant()
    def clock_is_ours(self) -> None:
        assert shared.wall_clock() == self.now


@pytest.mark.slow
def test_no_304_for_changed_content() -> None:
    """Under any sequence of writes and revalidations, a 304 only for unchanged content."""
    run_state_machine_as_test(
        Revalidation, settings=settings(max_examples=150, stateful_step_count=20, deadline=None)
    )


class TimeOnlyRevalidation(Revalidation):
    rows_type = TimeOnlyRows


class UnstoredRevalidation(Revalidation):
    renders = Renders(memory_bytes=0)  # nothing is ever stored


@pytest.mark.slow
def test_no_304_for_changed_content_never_stored() -> None:
    """The same when no render is ever stored (too large for the store, or none)."""
    run_state_machine_as_test(
        UnstoredRevalidation,
        settings=settings(max_examples=100, stateful_step_count=20, deadline=None),
    )


def test_no_304_for_changed_content_of_a_time_only_version() -> None:
    """The same with a version that is a time alone (issue 30, item 3(b))."""
    run_state_machine_as_test(
        TimeOnlyRevalidation,
        settings=settings(max_examples=100, stateful_step_count=20, deadline=None),
    )


def test_content_that_returns_is_not_answered_with_its_old_date() -> None:
    """A -> B -> A on a page, revalidated by If-Modified-Since alone (found by the above)."""
    machine = Revalidation()
    try:
        machine.crawl("ims")
        machine.tick(5.0)
        machine.insert("x")
        machine.tick(5.0)
        machine.crawl("ims")
        machine.tick(5.0)
        machine.revert()
        machine.crawl("ims")
    finally:
        machine.teardown()
