"""Feeds and llms.txt: the writers (escaping, RFC 4287's rules, validity), the newest-N
selection (a Hypothesis property) and the documents through the core (validators, 304,
HEAD, gzip, 404/503)."""

from __future__ import annotations

import gzip
import re
from collections.abc import AsyncIterator
from datetime import date, datetime, timedelta, timezone
from html import escape
from typing import Any

import anyio
import feedparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from markdown_it import MarkdownIt

from sitemap_middleware import (
    ConfigurationError,
    Feed,
    LlmsTxt,
    NewsArticle,
    SitemapConfig,
    SitemapEntry,
    Video,
)
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._sansio.feeds import FeedHead, FeedItem, NewestN, atom_feed, rss_feed
from sitemap_middleware._sansio.llms import llms_head, llms_link
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import fetch, header
from tests.harness.documents import ATOM, atom_schema, check_atom, check_rss
from tests.harness.providers import ListProvider

MEDIA = "{http://search.yahoo.com/mrss/}"


def _head() -> FeedHead:
    return FeedHead(
        title="Café & <Co>",
        self_url="https://example.com/feed.atom",
        site_url="https://example.com/",
        author="Zoë & Bob",
        description="News <of> café",
        resolve=lambda url: url if "://" in url else "https://example.com" + url,
    )


VIDEO = Video(
    thumbnail_loc="/thumbs/1.jpg",
    title="Making <crème> & brûlée",
    description="Whisk & bake",
    content_loc="/videos/1.mp4",
    duration=90,
)
ITEMS = [
    FeedItem(
        "https://example.com/caf%C3%A9?a=1&b=2",
        datetime(2024, 6, 1, 10, 30, tzinfo=timezone(timedelta(hours=2))),
        "Crème & <brûlée> ☕",
        (VIDEO,),
    ),
    FeedItem("https://example.com/plain", datetime(2024, 5, 1, tzinfo=timezone.utc), "plain"),
]


def test_atom_escapes_ampersands_angle_brackets_and_keeps_non_ascii() -> None:
    body = atom_feed(_head(), ITEMS).encode()
    assert b"&amp;b=2" in body and "Crème &amp; &lt;brûlée&gt; ☕".encode() in body
    root = check_atom(body)
    assert root.findtext(f"{ATOM}title") == "Café & <Co>"
    assert root.findtext(f"{ATOM}updated") == "2024-06-01T08:30:00Z"  # the newest entry
    first = root.find(f"{ATOM}entry")
    assert first is not None
    assert first.findtext(f"{ATOM}id") == "https://example.com/caf%C3%A9?a=1&b=2"
    assert first.findtext(f"{ATOM}title") == "Crème & <brûlée> ☕"
    link = first.find(f"{ATOM}link")
    assert link is not None and link.get("href") == "https://example.com/caf%C3%A9?a=1&b=2"
    content = first.find(f"{MEDIA}content")
    assert content is not None
    assert content.get("url") == "https://example.com/videos/1.mp4"
    assert content.get("medium") == "video" and content.get("duration") == "90"
    thumbnail = content.find(f"{MEDIA}thumbnail")
    assert thumbnail is not None and thumbnail.get("url") == "https://example.com/thumbs/1.jpg"
    assert content.findtext(f"{MEDIA}title") == "Making <crème> & brûlée"
    parsed = feedparser.parse(body)
    assert parsed.entries[0].media_thumbnail[0]["url"] == "https://example.com/thumbs/1.jpg"
    assert parsed.entries[0].media_content[0]["url"] == "https://example.com/videos/1.mp4"


def test_rss_dates_are_rfc_822_and_media_rss_is_read() -> None:
    body = rss_feed(_head(), ITEMS).encode()
    parsed = check_rss(body)
    assert parsed.feed.title == "Café & <Co>"
    assert b"<pubDate>Sat, 01 Jun 2024 08:30:00 GMT</pubDate>" in body
    assert b"<lastBuildDate>Sat, 01 Jun 2024 08:30:00 GMT</lastBuildDate>" in body
    first = parsed.entries[0]
    assert first.link == "https://example.com/caf%C3%A9?a=1&b=2"
    assert first.title == "Crème & <brûlée> ☕"
    assert first.published_parsed[:5] == (2024, 6, 1, 8, 30)
    assert first.media_content[0]["url"] == "https://example.com/videos/1.mp4"
    assert "media_content" not in parsed.entries[1]


def test_llms_txt_lines_escape_link_text() -> None:
    assert llms_head("Shop\nnews", "All [the] pages") == "# Shop news\n\n> All [the] pages\n"
    line = llms_link("a [b] \\ c", "https://example.com/x_(y)?q=1&r=é")
    assert line == "- [a \\[b\\] \\\\ c](https://example.com/x_%28y%29?q=1&r=é)\n"


@pytest.mark.parametrize(
    "title", ["x <img src=x onerror=alert(1)> y", "a <https://evil.example/> b", "`]`"]
)
def test_llms_txt_link_text_holds_no_markup_of_its_own(title: str) -> None:
    """A provider's title (a video's, a news article's) renders as text inside the one
    link: no raw HTML, no autolink, no code span."""
    html = MarkdownIt("commonmark").render(llms_link(title, "https://example.com/p"))
    assert html == f'<ul>\n<li><a href="https://example.com/p">{escape(title)}</a></li>\n</ul>\n'


dated = st.tuples(st.integers(0, 40), st.booleans())  # a day (few: ties happen), or none


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(dated, max_size=30), min_size=1, max_size=3), st.integers(1, 12))
def test_feed_lists_the_n_newest_dated_entries_newest_first(
    sections: list[list[tuple[int, bool]]], limit: int
) -> None:
    """Any provider data: exactly the ``limit`` entries with the newest lastmods among
    those that have one, newest first (ties in the order the sections list them)."""
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    data: dict[str, list[SitemapEntry]] = {}
    expected: list[tuple[datetime, int, str]] = []
    order = 0
    for number, values in enumerate(sections):
        entries = []
        for position, (day, has_lastmod) in enumerate(values):
            loc = f"https://example.com/s{number}/{position}"
            when = start + timedelta(days=day, hours=position % 3)
            entries.append(SitemapEntry(loc, lastmod=when if has_lastmod else None))
            if has_lastmod:
                expected.append((when, -order, loc))
            order += 1
        data[f"s{number}"] = entries
    expected.sort(reverse=True)
    wanted = [loc for _, _, loc in expected[:limit]]
    config = SitemapConfig(
        base_url="https://example.com",
        sections={name: ListProvider(list(entries)) for name, entries in data.items()},
        feeds=[Feed(name="feed.atom", sections=list(data), limit=limit)],
    )

    async def run() -> tuple[int, bytes]:
        reply, body = await fetch(SitemapCore(config), "/feed.atom")
        return reply.status, body

    status, body = anyio.run(run)
    if not wanted:
        assert status == 404
        return
    assert status == 200
    root = check_atom(body)
    assert [e.findtext(f"{ATOM}id") for e in root.findall(f"{ATOM}entry")] == wanted


def test_newest_n_keeps_only_n() -> None:
    newest = NewestN(3)
    day = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for i in range(1000):
        newest.offer(FeedItem(f"/{i}", day + timedelta(minutes=i % 997), str(i)))
        assert len(newest._heap) <= 3
    assert [item.loc for item in newest.newest()] == ["/996", "/995", "/994"]


class Versioned:
    """A provider with a version token, counting how often its entries are read."""

    def __init__(self, entries: list[Any], token: str = "v1") -> None:
        self.items = entries
        self.token = token
        self.passes = 0

    async def entries(self) -> AsyncIterator[Any]:
        self.passes += 1
        for item in self.items:
            yield item

    async def version(self) -> ProviderVersion:
        return ProviderVersion(self.token, datetime(2024, 6, 2, tzinfo=timezone.utc))


def _entries() -> list[Any]:
    return [
        SitemapEntry("/old", lastmod=date(2023, 1, 1)),
        {"loc": "/a?x=1&y=2", "lastmod": "2024-05-01T10:00:00+00:00"},
        "/undated",
        SitemapEntry(
            "/news",
            lastmod="2024-05-03",
            news=NewsArticle(
                publication_name="Daily",
                language="en",
                title="Big <news> & more",
                publication_date="2024-05-03",
            ),
        ),
    ]


def _config(provider: Any, **kwargs: Any) -> SitemapConfig:
    return SitemapConfig(
        base_url="https://example.com",
        sections={"blog": provider, "pages": ["/"]},
        news_max_age=None,
        feeds=[
            Feed(name="feed.atom", sections=["blog"], limit=2, title="Blog"),
            Feed(name="feed.rss", sections=["blog"], format="rss"),
        ],
        llms_txt=LlmsTxt(title="Example", summary="A shop.", sections={"Blog": ["blog"]}),
        **kwargs,
    )


@pytest.mark.anyio
async def test_versioned_feed_answers_304_and_head_without_reading_entries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = Versioned(_entries())
    core = SitemapCore(_config(provider))
    with caplog.at_level("INFO", logger="sitemap_middleware"):
        reply, body = await fetch(core, "/feed.atom", accept_encoding="gzip")
    assert reply.status == 200 and provider.passes == 1
    assert header(reply, "Content-Type") == "application/atom+xml; charset=utf-8"
    assert header(reply, "Content-Encoding") == "gzip"
    assert header(reply, "Last-Modified") == "Sun, 02 Jun 2024 00:00:00 GMT"
    assert "left out 1 entries without lastmod" in caplog.text
    root = check_atom(gzip.decompress(body))
    assert [e.findtext(f"{ATOM}title") for e in root.findall(f"{ATOM}entry")] == [
        "Big <news> & more",
        "https://example.com/a?x=1&y=2",
    ]
    etag = header(reply, "ETag")
    assert etag is not None
    again, empty = await fetch(core, "/feed.atom", accept_encoding="gzip", if_none_match=etag)
    assert again.status == 304 and empty == b"" and provider.passes == 1
    # HEAD answers the status GET would (the feed could be empty): it reads, sends nothing.
    head, nothing = await fetch(core, "/feed.atom", method="HEAD")
    assert head.status == 200 and nothing == b"" and provider.passes == 2
    assert header(head, "ETag") == etag.replace("-gzip", "")
    provider.token = "v2"
    changed, _ = await fetch(core, "/feed.atom", accept_encoding="gzip", if_none_match=etag)
    assert changed.status == 200 and provider.passes == 3


@pytest.mark.anyio
async def test_unversioned_feed_gets_an_etag_from_its_bytes() -> None:
    provider = ListProvider(_entries())
    core = SitemapCore(_config(provider))
    reply, body = await fetch(core, "/feed.rss")
    assert reply.status == 200 and header(reply, "Last-Modified") is None
    parsed = check_rss(body)
    assert [e.link for e in parsed.entries] == [
        "https://example.com/news",
        "https://example.com/a?x=1&y=2",
        "https://example.com/old",
    ]
    etag = header(reply, "ETag")
    assert etag is not None
    again, _ = await fetch(core, "/feed.rss", if_none_match=etag)
    assert again.status == 304
    provider.items.append(SitemapEntry("/newer", lastmod="2025-01-01"))
    changed, _ = await fetch(core, "/feed.rss", if_none_match=etag)
    assert changed.status == 200 and header(changed, "ETag") != etag


@pytest.mark.anyio
async def test_feed_without_dated_entries_is_404_and_a_failing_provider_503() -> None:
    core = SitemapCore(_config(["/a", "/b"]))
    reply, _ = await fetch(core, "/feed.atom")
    assert reply.status == 404

    async def broken() -> AsyncIterator[str]:
        raise RuntimeError("database down")
        yield "/never"

    core = SitemapCore(_config(broken))
    reply, _ = await fetch(core, "/feed.atom")
    assert reply.status == 503 and header(reply, "Retry-After") is not None
    head, _ = await fetch(core, "/feed.atom", method="HEAD")
    assert head.status == 503
    post, _ = await fetch(core, "/feed.atom", method="POST")
    assert post.status == 405


@pytest.mark.anyio
async def test_robots_lists_feeds_and_llms_txt_is_served() -> None:
    core = SitemapCore(_config(Versioned(_entries())))
    _, robots = await fetch(core, "/robots.txt")
    assert robots.decode().splitlines()[-3:] == [
        "Sitemap: https://example.com/sitemap.xml",
        "Sitemap: https://example.com/feed.atom",
        "Sitemap: https://example.com/feed.rss",
    ]
    reply, body = await fetch(core, "/llms.txt", accept_encoding="gzip")
    assert reply.status == 200
    assert header(reply, "Content-Type") == "text/markdown; charset=utf-8"
    assert gzip.decompress(body).decode() == (
        "# Example\n\n> A shop.\n\n## Blog\n\n"
        "- [https://example.com/old](https://example.com/old)\n"
        "- [https://example.com/a?x=1&y=2](https://example.com/a?x=1&y=2)\n"
        "- [https://example.com/undated](https://example.com/undated)\n"
        "- [Big \\<news\\> & more](https://example.com/news)\n"
    )
    etag = header(reply, "ETag")
    assert etag is not None
    again, _ = await fetch(core, "/llms.txt", accept_encoding="gzip", if_none_match=etag)
    assert again.status == 304


def test_feed_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="names no section 'nope'"):
        SitemapConfig(
            base_url="https://example.com",
            sections={"a": ["/"]},
            feeds=[Feed(name="feed.atom", sections=["nope"])],
        )
    with pytest.raises(ConfigurationError, match="taken"):
        SitemapConfig(
            base_url="https://example.com",
            sections={"a": ["/"]},
            feeds=[Feed(name="sitemap.xml", sections=["a"])],
        )
    with pytest.raises(ConfigurationError, match="format"):
        Feed(name="feed.atom", sections=["a"], format="json")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="limit"):
        Feed(name="feed.atom", sections=["a"], limit=0)
    with pytest.raises(ConfigurationError, match="file name"):
        Feed(name="feeds/atom", sections=["a"])
    with pytest.raises(ConfigurationError, match="llms_txt names no section"):
        SitemapConfig(
            base_url="https://example.com",
            sections={"a": ["/"]},
            llms_txt=LlmsTxt(title="x", sections={"Docs": ["docs"]}),
        )


def test_the_schema_refuses_what_rfc_4287_refuses() -> None:
    """The schema is live: a feed without its id, or an entry without updated, fails."""
    body = atom_feed(_head(), ITEMS)
    assert atom_schema().validate(etree.fromstring(body.encode()))
    without_id = re.sub(r"<id>https://example.com/feed.atom</id>\n", "", body, count=1)
    assert not atom_schema().validate(etree.fromstring(without_id.encode()))
    without_updated = re.sub(r"<updated>2024-05-01T00:00:00Z</updated>", "", body)
    assert not atom_schema().validate(etree.fromstring(without_updated.encode()))
