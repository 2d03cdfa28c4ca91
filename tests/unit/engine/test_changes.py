"""The changes sitemap: the window rule (a Hypothesis property), the document through the
core (XSD-valid urlset, validators, 304, HEAD, gzip, .gz file, 503), its place in the
index (first, only while something changed) and its settings."""

from __future__ import annotations

import gzip
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware import Changes, ConfigurationError, SitemapConfig, SitemapEntry
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._sansio.changes import RecentN
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import fetch, header
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.providers import ListProvider

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def _entries() -> list[Any]:
    return [
        SitemapEntry("/old", lastmod=NOW - timedelta(days=3)),
        SitemapEntry("/a?x=1&y=2", lastmod=NOW - timedelta(hours=2)),
        "/undated",
        SitemapEntry("/b", lastmod=NOW - timedelta(minutes=5), priority=0.8),
        SitemapEntry("/c", lastmod=NOW - timedelta(hours=23)),
    ]


class Versioned(ListProvider):
    def __init__(self, items: list[Any], token: str = "v1") -> None:
        super().__init__(items)
        self.token, self.passes = token, 0

    async def entries(self) -> Any:
        self.passes += 1
        for item in list(self.items):
            yield item

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=self.token)


class Failing(ListProvider):
    async def entries(self) -> Any:
        raise RuntimeError("database went away")
        yield  # pragma: no cover


def _config(provider: Any, **kwargs: Any) -> SitemapConfig:
    return SitemapConfig(
        base_url="https://example.com/",
        sections={"pages": provider, "static": ["/about"]},
        changes=Changes(hours=24, **kwargs),
    )


# -- the rule -------------------------------------------------------------------------------

stamps = st.integers(min_value=-72, max_value=72)  # hours from NOW


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.one_of(st.none(), stamps))),
    st.integers(1, 40),
)
def test_recent_lists_exactly_the_entries_within_the_window_newest_first_once(
    offers: list[tuple[int, int | None]], limit: int
) -> None:
    since = NOW - timedelta(hours=24)
    recent = RecentN(limit, since)
    newest: dict[str, datetime] = {}
    for number, hours in offers:
        loc = f"https://example.com/{number}"
        if hours is None:
            recent.offer((loc, "", None))
            continue
        when = NOW + timedelta(hours=hours)
        recent.offer((loc, "", SitemapEntry(loc, lastmod=when)))
        if when >= since:
            newest[loc] = max(when, newest.get(loc, when))
    got = recent.newest()
    locs = [item[0] for _, item in got]
    assert len(locs) == len(set(locs))  # each once
    assert [when for when, _ in got] == sorted((when for when, _ in got), reverse=True)
    expected = sorted(newest.values(), reverse=True)[:limit]
    assert [when for when, _ in got] == expected
    assert all(newest[loc] == when for loc, (when, _) in zip(locs, got, strict=True))
    assert len(got) == min(limit, len(newest))
    assert recent.undated == sum(1 for _, hours in offers if hours is None)


# -- the document -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_changes_sitemap_is_a_valid_urlset_of_recent_entries_newest_first() -> None:
    core = SitemapCore(_config(ListProvider(_entries())))
    reply, body = await fetch(core, "/sitemap-changes.xml")
    assert reply.status == 200
    assert header(reply, "Content-Type") == "application/xml; charset=utf-8"
    assert header(reply, "Last-Modified") is None and header(reply, "ETag")
    parsed = check_document(body)  # XSD-valid (SITEMAP_SCHEMAS_DIR) and readable by usp
    assert page_urls(parsed) == [
        "https://example.com/b",
        "https://example.com/a?x=1&y=2",
        "https://example.com/c",
    ]
    assert b"&amp;" in body and b"<priority>0.8</priority>" in body


@pytest.mark.anyio
async def test_changes_answers_304_head_and_gzip_through_the_core() -> None:
    provider = Versioned(_entries())
    core = SitemapCore(_config(provider))
    reply, body = await fetch(core, "/sitemap-changes.xml", accept_encoding="gzip")
    assert reply.status == 200 and header(reply, "Content-Encoding") == "gzip"
    check_document(gzip.decompress(body))
    etag = header(reply, "ETag")
    assert etag is not None and provider.passes == 1
    again, empty = await fetch(
        core, "/sitemap-changes.xml", accept_encoding="gzip", if_none_match=etag
    )
    # Versions unchanged and no entry has left the window: the kept render answers.
    assert again.status == 304 and empty == b"" and provider.passes == 1
    head, nothing = await fetch(core, "/sitemap-changes.xml", method="HEAD")
    assert head.status == 200 and nothing == b""
    gz, data = await fetch(core, "/sitemap-changes.xml.gz")
    assert gz.status == 200 and header(gz, "Content-Type") == "application/gzip"
    assert page_urls(check_document(gzip.decompress(data)))[0] == "https://example.com/b"
    provider.items.append(SitemapEntry("/new", lastmod=NOW))
    provider.token = "v2"
    changed, body = await fetch(
        core, "/sitemap-changes.xml", accept_encoding="gzip", if_none_match=etag
    )
    assert changed.status == 200 and provider.passes == 2
    assert page_urls(check_document(gzip.decompress(body)))[0] == "https://example.com/new"


@pytest.mark.anyio
async def test_kept_render_expires_when_its_oldest_entry_leaves_the_window() -> None:
    provider = Versioned(_entries())
    core = SitemapCore(_config(provider))
    changes = core._documents.changes
    assert changes is not None
    changes.now = lambda: NOW
    _, body = await fetch(core, "/sitemap-changes.xml")
    assert "https://example.com/c" in page_urls(check_document(body))
    changes.now = lambda: NOW + timedelta(hours=2)  # /c (23 h old) is now 25 h old
    _, body = await fetch(core, "/sitemap-changes.xml")
    assert provider.passes == 2
    assert page_urls(check_document(body)) == [
        "https://example.com/b",
        "https://example.com/a?x=1&y=2",
    ]


@pytest.mark.anyio
async def test_nothing_changed_answers_404_and_the_index_leaves_it_out() -> None:
    old = [SitemapEntry(f"/p{i}", lastmod=date(2020, 1, 1 + i)) for i in range(3)]
    core = SitemapCore(_config(ListProvider(old)))
    # An empty urlset is invalid against the sitemap XSD (it wants one <url>): 404.
    reply, body = await fetch(core, "/sitemap-changes.xml")
    assert reply.status == 404 and b"no URL changed in the last 24 hours" in body
    index, data = await fetch(core, "/sitemap.xml")
    children = child_urls(check_document(data))  # a small site is an index with changes on
    assert children == [
        "https://example.com/sitemap-pages-1.xml",
        "https://example.com/sitemap-static-1.xml",
    ]


@pytest.mark.anyio
async def test_index_lists_the_changes_sitemap_first_with_its_newest_lastmod() -> None:
    core = SitemapCore(_config(ListProvider(_entries())))
    reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200
    assert child_urls(check_document(body))[0] == "https://example.com/sitemap-changes.xml"
    first = body.decode().split("</sitemap>")[0]
    assert f"<lastmod>{(NOW - timedelta(minutes=5)).isoformat()}</lastmod>" in first


@pytest.mark.anyio
async def test_changes_reads_only_its_sections_and_keeps_the_limit() -> None:
    entries = [SitemapEntry(f"/n{i}", lastmod=NOW - timedelta(minutes=i)) for i in range(10)]
    config = SitemapConfig(
        base_url="https://example.com/",
        sections={"news": entries, "other": [SitemapEntry("/x", lastmod=NOW)]},
        changes=Changes(hours=1, sections=["news"], limit=3),
    )
    _, body = await fetch(SitemapCore(config), "/sitemap-changes.xml")
    assert page_urls(check_document(body)) == [f"https://example.com/n{i}" for i in range(3)]


@pytest.mark.anyio
async def test_a_failing_provider_answers_503() -> None:
    core = SitemapCore(_config(Failing([])))
    reply, _ = await fetch(core, "/sitemap-changes.xml")
    assert reply.status == 503


def test_changes_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="Changes.hours"):
        Changes(hours=0)
    with pytest.raises(ConfigurationError, match="Changes.limit"):
        Changes(limit=50_001)
    with pytest.raises(ConfigurationError, match="Changes.name"):
        Changes(name="changes.txt")
    with pytest.raises(ConfigurationError, match="names no section 'nope'"):
        SitemapConfig(
            base_url="https://e.com/", sections={"a": ["/"]}, changes=Changes(sections=["nope"])
        )
    with pytest.raises(ConfigurationError, match="taken by another document"):
        SitemapConfig(
            base_url="https://e.com/", sections={"a": ["/"]}, changes=Changes(name="sitemap.xml")
        )
    with pytest.raises(ConfigurationError, match="must be a Changes"):
        SitemapConfig(base_url="https://e.com/", sections={"a": ["/"]}, changes=24)  # type: ignore[arg-type]
