"""One URL, one listing for sections paged by key ranges and for news sections (issue 27,
item 3): a key-range page leaves out what a section before it lists and what its own
section lists at a lower key; news sections are deduplicated among themselves only."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from html import unescape
from typing import Any

import pytest

from sitemap_middleware import NewsArticle, Renders, Section, SitemapConfig, SitemapEntry
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._ops.explain import explain
from sitemap_middleware._providers.ranges import PLAIN_CHARACTERS, KeyRange, RangeStats
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import fetch, header
from tests.harness.documents import check_document, child_urls
from tests.unit.sansio.test_exclusion import _Observer as ExclusionObserver

BASE = "https://example.com"
_PLAIN = set(PLAIN_CHARACTERS.replace("A-Z", "").replace("a-z", "").replace("0-9", ""))


def _plain(path: str) -> bool:
    """Whether a path holds only characters no step changes (an odd one is measured)."""
    return all(c.isascii() and (c.isalnum() or c in _PLAIN) for c in path)


def _digest(rows: list[tuple[int, Any]]) -> str:
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


class KeyedTable:
    """An in-memory keyset provider of ``(key, item)`` rows (a table keyed by ``id``),
    counting the rows it hands over. Without range statistics it is planned by reading
    its rows, as a ``to_entry`` SQL section is."""

    def __init__(self, rows: list[tuple[int, Any]]) -> None:
        self.rows = sorted(rows, key=lambda row: row[0])
        self.read = 0

    def _in(self, after: Any, upto: Any) -> list[tuple[int, Any]]:
        return [
            (k, v)
            for k, v in self.rows
            if (after is None or k > after) and (upto is None or k <= upto)
        ]

    async def keyed_batches(self, after: Any, upto: Any) -> Any:
        picked = self._in(after, upto)
        for start in range(0, len(picked), 7):
            chunk = picked[start : start + 7]
            self.read += len(chunk)
            yield [k for k, _ in chunk], [v for _, v in chunk]

    async def keyed(self, after: Any, upto: Any) -> Any:
        async for keys, items in self.keyed_batches(after, upto):
            for pair in zip(keys, items, strict=True):
                yield pair

    async def entries(self) -> Any:
        async for _, item in self.keyed(None, None):
            yield item

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=_digest(self.rows))

    async def range_version(self, after: Any, upto: Any) -> tuple[int, ProviderVersion]:
        picked = self._in(after, upto)
        return len(picked), ProviderVersion(token=_digest(picked))


class RangedTable(KeyedTable):
    """:class:`KeyedTable` sizing its key ranges as a database does: the index reads no
    row of it unless a range holds a path with an odd character."""

    async def range_stats(self, rows_per_range: int) -> RangeStats:
        ranges = []
        for start in range(0, len(self.rows), rows_per_range):
            part = self.rows[start : start + rows_per_range]
            plain = [v for _, v in part if isinstance(v, str) and _plain(v)]
            ranges.append(
                KeyRange(
                    part[0][0],
                    part[-1][0],
                    len(part),
                    len(part),
                    sum(len(v) for v in plain),
                    len(part) - len(plain),
                    None,
                )
            )
        return RangeStats(ranges, [("/a", 1)])


def _config(sections: dict[str, Any], **kwargs: Any) -> SitemapConfig:
    return SitemapConfig(base_url=BASE, sections=sections, dedupe=True, **kwargs)


async def _crawl(core: SitemapCore) -> list[tuple[str, list[str]]]:
    """Each page the index lists and its URLs; every page answers 200 with a URL."""
    reply, body = await fetch(core, "/sitemap_index.xml")
    assert reply.status == 200, body
    pages = []
    for child in child_urls(check_document(body)):
        reply, page = await fetch(core, child.removeprefix(BASE))
        assert reply.status == 200, (child, page)
        check_document(page)
        urls = locs(page)
        assert urls, child
        pages.append((child.removeprefix(BASE), urls))
    return pages


def locs(body: bytes) -> list[str]:
    """Every ``<loc>`` of a urlset as written, repeats included (a parser may merge them)."""
    return [unescape(loc.decode()) for loc in re.findall(rb"<loc>([^<]*)</loc>", body)]


def _urls(*paths: str) -> list[str]:
    return [BASE + path for path in paths]


@pytest.mark.anyio
@pytest.mark.parametrize("table", [KeyedTable, RangedTable])
async def test_a_key_range_page_leaves_out_urls_listed_before(table: type[KeyedTable]) -> None:
    """/2 is listed by section a, /3 twice by k (keys 2 and 3), /4 by k before b: each is
    served once, where it is first listed; k's page holding only duplicates is not
    listed (its keys join the next page)."""
    keyed = table([(1, "/2"), (2, "/3"), (3, "/3"), (4, "/2"), (5, "/4"), (6, "/6")])
    config = _config({"a": ["/1", "/2"], "k": keyed, "b": ["/4", "/5"]}, max_urls_per_page=2)
    core = SitemapCore(config)
    pages = await _crawl(core)
    served = [url for _, urls in pages for url in urls]
    assert served == _urls("/1", "/2", "/3", "/4", "/6", "/5")
    assert all("~" in name for name, _ in pages if name.startswith("/sitemap-k-"))
    plans, _ = await core._documents.plans.plan_all(config.base)
    assert [plan.count for plan in plans] == [2, 3, 1]
    answers = await explain(config, ["/3", "/2", "/4"])
    assert answers[0].left_out == ["section 'k': a duplicate, listed first in section 'k', page 1"]
    assert answers[1].left_out == [
        "section 'k': a duplicate, listed first in section 'a', page 1",
        "section 'k': a duplicate, listed first in section 'a', page 1",
    ]
    assert answers[2].left_out == ["section 'b': a duplicate, listed first in section 'k', page 2"]


@pytest.mark.anyio
async def test_key_range_pages_read_their_own_rows_and_a_change_reads_its_chunk_again() -> None:
    """The index of a section planned from key ranges reads its rows once (the
    fingerprints), each page then reads its own range only; after one row changes, the
    next index reads again only the keys around it (a page's worth), not the table."""
    rows = [(key, f"/p/{key % 50}") for key in range(1, 301)]  # each path six times
    keyed = RangedTable(rows)
    core = SitemapCore(_config({"k": keyed}, max_urls_per_page=40))
    reply, body = await fetch(core, "/sitemap_index.xml")
    assert reply.status == 200
    # Read once for the fingerprints, then the chunks holding duplicates for their URLs.
    assert keyed.read <= 2 * len(rows)
    before = keyed.read
    pages = await _crawl(core)
    assert sorted(url for _, urls in pages for url in urls) == sorted(_urls(*{p for _, p in rows}))
    assert keyed.read - before == len(rows)  # each page its own range, once
    before = keyed.read
    keyed.rows[250] = (251, "/new")
    reply, _ = await fetch(core, "/sitemap_index.xml")
    assert reply.status == 200
    assert keyed.read - before <= 2 * 40  # one chunk read, then its duplicates' strings


@pytest.mark.anyio
async def test_a_key_range_page_follows_what_the_sections_before_it_list_now() -> None:
    """Section a starts listing /k/2, which k's page listed: the page leaves it out at
    once, and its ETag moves with what it leaves out."""

    class Growing:
        def __init__(self) -> None:
            self.paths = ["/a"]

        async def entries(self) -> Any:
            for path in self.paths:
                yield path

        async def version(self) -> ProviderVersion:
            return ProviderVersion(token=repr(self.paths))

    first = Growing()
    core = SitemapCore(_config({"a": first, "k": RangedTable([(1, "/k/1"), (2, "/k/2")])}))
    pages = await _crawl(core)
    name, urls = pages[1]
    assert urls == _urls("/k/1", "/k/2")
    reply, _ = await fetch(core, name)
    etag = header(reply, "etag")
    first.paths.append("/k/2")
    reply, body = await fetch(core, name)
    assert locs(body) == _urls("/k/1")
    assert header(reply, "etag") != etag


@pytest.mark.anyio
async def test_duplicates_of_a_key_range_section_are_counted_once_per_content() -> None:
    """Observers and Prometheus hear of a key-range section's duplicates once per
    content, however many requests plan it."""
    from prometheus_client import CollectorRegistry

    from sitemap_middleware.ops import PrometheusObserver

    observer = ExclusionObserver()
    registry = CollectorRegistry()
    keyed = RangedTable([(1, "/x"), (2, "/y"), (3, "/x"), (4, "/a")])
    config = _config(
        {"a": ["/a"], "k": keyed}, observers=[observer, PrometheusObserver(registry=registry)]
    )
    core = SitemapCore(config)
    for _ in range(2):
        await _crawl(core)
    assert observer.excluded == [("k", "duplicate", 2)]
    labels = {"section": "k", "reason": "duplicate"}
    assert registry.get_sample_value("sitemap_entries_excluded_total", labels) == 2.0


def _article(path: str, title: str) -> SitemapEntry:
    published = datetime.now(timezone.utc).replace(microsecond=0)
    return SitemapEntry(
        path,
        news=NewsArticle(
            publication_name="The Daily", language="en", publication_date=published, title=title
        ),
    )


@pytest.mark.anyio
async def test_news_sections_are_deduplicated_among_themselves_only() -> None:
    """An article listed twice in news sections is served once there, where it is first
    listed; the same URL in a regular section stays listed there too: Google reads news
    sitemaps apart from the others (and asks that no URL be in two news sitemaps)."""
    news = [_article("/n/1", "One"), _article("/n/2", "Two"), _article("/n/1", "One again")]
    config = _config(
        {
            "pages": ["/n/1", "/about", "/about"],
            "news": Section(news, news=True),
            "wire": Section([_article("/n/2", "Two"), _article("/n/3", "Three")], news=True),
        },
        renders=Renders(plan_ttl=0),
    )
    pages = dict(await _crawl(SitemapCore(config)))
    assert pages == {
        "/sitemap-pages-1.xml": _urls("/n/1", "/about"),
        "/sitemap-news-1.xml": _urls("/n/1", "/n/2"),
        "/sitemap-wire-1.xml": _urls("/n/3"),
    }
    (one, two) = await explain(config, ["/n/1", "/n/2"])
    assert [section for section, _, _ in one.listed] == ["pages", "news"]
    assert one.left_out == ["section 'news': a duplicate, listed first in section 'news', page 1"]
    assert two.left_out == ["section 'wire': a duplicate, listed first in section 'news', page 1"]
