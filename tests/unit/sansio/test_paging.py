"""Pages planned by bytes as well as count: no page over budget, no URL lost or repeated."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware import (
    Alternate,
    InvalidEntryError,
    NewsArticle,
    Section,
    SitemapConfig,
    SitemapEntry,
)
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._engine.planning import page_room
from sitemap_middleware._sansio.paging import PageCutter
from sitemap_middleware._sansio.urls import BaseURL
from sitemap_middleware._sansio.urlset_writer import UrlsetWriter
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, child_urls, page_urls

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
LANGUAGES = ("de", "fr", "es", "it", "nl", "pl", "pt", "sv", "da", "fi", "cs", "x-default")


async def crawl(core: SitemapCore, max_bytes: int, max_urls: int) -> list[str]:
    """Follow the index like a crawler: every page within budget and XSD-valid."""
    reply, body = await fetch(core, "/sitemap_index.xml")
    if reply.status == 404:
        return []
    assert reply.status == 200, body
    urls: list[str] = []
    for child in child_urls(check_document(body)):
        reply, page = await fetch(core, child.removeprefix("https://example.com"))
        assert reply.status == 200, (child, page)
        assert len(page) <= max_bytes, (child, len(page))
        found = page_urls(check_document(page))
        assert 1 <= len(found) <= max_urls
        urls += found
    return urls


def _entry(number: int, path_length: int, alternates: int) -> SitemapEntry:
    path = f"/p/{number}-" + "x" * path_length
    return SitemapEntry(
        path,
        lastmod=datetime(2024, 1, 1 + number % 28, tzinfo=timezone.utc),
        alternates=[Alternate(lang, f"/{lang}{path}") for lang in LANGUAGES[:alternates]],
    )


@SETTINGS
@given(
    shapes=st.lists(st.tuples(st.integers(0, 300), st.integers(0, 12)), max_size=60),
    max_urls=st.integers(1, 12),
    max_bytes=st.integers(2048, 9000),
)
def test_pages_hold_at_most_max_urls_and_max_bytes(
    shapes: list[tuple[int, int]], max_urls: int, max_bytes: int
) -> None:
    """Whatever the entry sizes, every page fits both limits and every URL appears once, in order."""
    entries = [_entry(i, length, alts) for i, (length, alts) in enumerate(shapes)]

    def generator() -> list[SitemapEntry]:  # iterated: planned by measuring every entry
        return entries

    for provider in (entries, generator):  # a StaticProvider (count/page/version) and a callable
        core = make_core({"s": provider}, max_urls_per_page=max_urls, max_bytes_per_page=max_bytes)
        room = page_room(core.config, core.config.base)
        found = anyio.run(crawl, core, max_bytes, max_urls)
        # Every entry that fits a page at all is served exactly once, in provider order;
        # one whose <url> alone is larger than a page is left out (and logged).
        assert found == [f"https://example.com{e.loc}" for e in entries if _measured(e) <= room]


def _measured(entry: SitemapEntry) -> int:
    writer = UrlsetWriter(
        label="t",
        resolve=BaseURL.parse("https://example.com").join_if_relative,
        max_urls=1,
        max_bytes=1,
    )
    return writer.sizes([("https://example.com" + entry.loc, entry._tail, entry)])[0]


@pytest.mark.anyio
async def test_root_is_the_index_when_entries_fit_by_count_but_not_by_bytes() -> None:
    """sitemap.xml is a single urlset only when it fits by bytes as well as by count."""
    entries = [_entry(i, 200, 12) for i in range(40)]
    small = make_core({"s": entries[:2]}, max_bytes_per_page=16_384)
    reply, body = await fetch(small, "/sitemap.xml")
    assert len(page_urls(check_document(body))) == 2 and len(body) <= 16_384
    big = make_core({"s": entries}, max_bytes_per_page=16_384)
    reply, body = await fetch(big, "/sitemap.xml")
    children = child_urls(check_document(body))
    assert len(children) > 1  # 40 URLs is far below 50,000, but not below 16 KiB
    urls = await crawl(big, 16_384, 50_000)
    assert urls == [f"https://example.com{e.loc}" for e in entries]


@pytest.mark.anyio
async def test_news_pages_hold_at_most_1000_news_urls() -> None:
    """The news cap is planned too: 1,500 articles make two pages without max_urls=1000."""
    published = datetime(2024, 5, 1, tzinfo=timezone.utc)
    entries = [
        SitemapEntry(
            f"/n/{i}",
            news=NewsArticle(
                publication_name="Times", language="en", publication_date=published, title="T"
            ),
        )
        for i in range(1500)
    ]
    core = make_core({"news": entries, "pages": ["/"]})
    reply, body = await fetch(core, "/sitemap.xml")
    children = child_urls(check_document(body))
    assert children == [
        "https://example.com/sitemap-news-1.xml",
        "https://example.com/sitemap-news-2.xml",
        "https://example.com/sitemap-pages-1.xml",
    ]
    _, first = await fetch(core, "/sitemap-news-1.xml")
    assert first.count(b"<news:news") == 1000
    _, second = await fetch(core, "/sitemap-news-2.xml")
    assert second.count(b"<news:news") == 500
    # Section(max_urls=...) still caps pages below the global limit.
    capped = make_core({"news": Section(entries, max_urls=600)})
    _, body = await fetch(capped, "/sitemap.xml")
    assert len(child_urls(check_document(body))) == 3


@pytest.mark.anyio
async def test_entry_larger_than_a_page_is_left_out_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An entry that alone exceeds the budget cannot be served: it alone is left out, logged."""
    huge = _entry(0, 1800, 12)  # ~25 KB with its alternates
    core = make_core({"s": ["/a", huge, "/b"]}, max_bytes_per_page=8192)
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        reply, body = await fetch(core, "/sitemap.xml")
    assert page_urls(check_document(body)) == ["https://example.com/a", "https://example.com/b"]
    assert any(
        "larger than a whole page" in r.getMessage() and "'s'" in r.getMessage()
        for r in caplog.records
    )


@pytest.mark.anyio
async def test_index_never_lists_a_page_whose_every_entry_is_invalid() -> None:
    """Invalid entries take no room: no page of only invalid entries is planned (no 404 child)."""
    items: list[Any] = ["/ok/1"] + [{"loc": "/bad", "priority": 7}] * 30 + ["/ok/2"]
    items += [{"loc": "/bad", "priority": 9}] * 30

    def provider() -> list[Any]:
        return items

    core = make_core({"s": provider}, max_urls_per_page=1)
    _, body = await fetch(core, "/sitemap_index.xml")
    children = child_urls(check_document(body))
    assert len(children) == 2
    assert await crawl(core, 10_485_760, 1) == [
        "https://example.com/ok/1",
        "https://example.com/ok/2",
    ]


def test_cutter_is_greedy_and_keeps_raw_positions() -> None:
    """The cutter starts a page when a count, byte or news limit would break; positions are raw."""
    cutter = PageCutter(max_urls=3, room=100)
    assert [cutter.add(p, 40) for p in (0, 1, 2)] == [0, 0, 1]  # 80 + 40 > 100
    assert cutter.add(5, 10) == 1  # positions 3-4 were invalid: they stay on page 1's range
    assert cutter.add(6, 10, news=True) == 1
    assert cutter.add(7, 10) == 2  # page 1 holds 3 URLs
    pages = cutter.finish(9)
    assert [(p.start, p.stop, p.urls, p.size, p.news) for p in pages] == [
        (0, 2, 2, 80, 0),
        (2, 7, 3, 60, 1),
        (7, 9, 1, 10, 0),
    ]


@pytest.mark.anyio
async def test_values_the_xsds_reject_are_normalised_or_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Tiny priorities print as decimals, odd zone offsets become UTC, joined locs stay <= 2,048."""
    from datetime import timedelta

    odd_zone = timezone(timedelta(hours=15))
    lmt = timezone(timedelta(minutes=9, seconds=21))
    long_path = "/" + "x" * 2040  # fits alone, too long under https://example.com/shop
    items: list[Any] = [
        {"loc": "/a", "priority": 1e-05},
        SitemapEntry("/b", lastmod=datetime(2024, 5, 1, 12, 0, tzinfo=odd_zone)),
        SitemapEntry("/c", lastmod=datetime(2024, 5, 1, 12, 0, tzinfo=lmt)),
        {"loc": "/d", "lastmod": "2024-05-01T12:00:00+14:30"},
        {"loc": "/e", "lastmod": "2024-05-01T12:00:00-14:00"},
        long_path,
    ]
    core = make_core({"s": items}, base_url="https://example.com/shop")
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        _, body = await fetch(core, "/shop/sitemap.xml")
    check_document(body)  # the official XSDs
    assert b"<priority>0.00001</priority>" in body
    assert b"<lastmod>2024-04-30T21:00:00+00:00</lastmod>" in body  # 12:00+15:00
    assert b"<lastmod>2024-05-01T11:50:39+00:00</lastmod>" in body  # 12:00+00:09:21
    assert b"<lastmod>2024-04-30T21:30:00+00:00</lastmod>" in body  # 12:00+14:30
    assert b"<lastmod>2024-05-01T12:00:00-14:00</lastmod>" in body  # kept: within range
    assert long_path.encode() not in body
    assert any("longer than 2048" in r.getMessage() for r in caplog.records)


@pytest.mark.anyio
async def test_concurrent_cold_requests_share_one_planning_pass() -> None:
    """A burst of requests for an unplanned version waits for one measuring pass."""
    from tests.harness.providers import CountingProvider

    provider = CountingProvider(3000)
    core = make_core({"p": provider}, max_urls_per_page=1000)
    statuses: list[int] = []

    async def head(number: int) -> None:
        reply, _ = await fetch(core, f"/sitemap-p-{number % 3 + 1}.xml", method="HEAD")
        statuses.append(reply.status)

    async with anyio.create_task_group() as group:
        for number in range(12):
            group.start_soon(head, number)
    assert statuses == [200] * 12
    # One planning pass, then HEADs read their page's first batch (their status), shared
    # by concurrent HEADs of one page.
    assert core._documents.plans.passes == 1
    assert 1 + 3 <= provider.iterations <= 1 + 12


def test_key_range_tokens_decode_what_the_index_writes_and_refuse_the_rest() -> None:
    """Ranges the planner writes round-trip, string keys in any collation's order; ints
    beyond 64 bits (no database key holds them) and reversed int ranges are not ours."""
    from sitemap_middleware._sansio.paging import decode_key_range
    from sitemap_middleware._sansio.paging import encode_key_range as encoded

    def encode_key_range(after: Any, upto: Any) -> str:
        token = encoded(after, upto)
        assert token is not None
        return token

    assert decode_key_range(encode_key_range(None, 7)) == (None, 7)
    assert decode_key_range(encode_key_range(3, 7)) == (3, 7)
    # A case-insensitive or locale collation sorts "apple" before "Banana".
    assert decode_key_range(encode_key_range("apple", "Banana")) == ("apple", "Banana")
    assert decode_key_range(encode_key_range(7, 3)) is None
    assert decode_key_range(encode_key_range(None, 10**30)) is None
    assert decode_key_range(encode_key_range(-(10**30), 5)) is None


class KeyedRows:
    """A keyset provider of ``size`` rows keyed 1..size, ``/k/<key>`` each."""

    def __init__(self, size: int) -> None:
        self.size = size

    async def keyed(self, after: Any, upto: Any) -> Any:
        for key in range(1, self.size + 1):
            if (after is None or key > after) and (upto is None or key <= upto):
                yield key, f"/k/{key}"

    async def entries(self) -> Any:
        async for _, item in self.keyed(None, None):
            yield item


@pytest.mark.anyio
async def test_a_huge_int_in_a_page_name_is_404_not_503() -> None:
    """A made-up range with an int no key can hold: 404, not a data-source failure."""
    from sitemap_middleware._sansio.paging import encode_key_range

    core = make_core({"k": KeyedRows(3)})
    token = encode_key_range(None, 10**30)
    reply, _ = await fetch(core, f"/sitemap-k-1~{token}.xml")
    assert reply.status == 404


@pytest.mark.anyio
async def test_made_up_key_ranges_are_served_but_never_stored() -> None:
    """Any client can name ranges; their renders (and first-seen stamps) are not kept,
    so made-up names cannot fill the render store and push out real renders."""
    from sitemap_middleware._sansio.paging import encode_key_range
    from sitemap_middleware.providers import ProviderVersion

    class Versioned(KeyedRows):
        async def version(self) -> ProviderVersion:
            return ProviderVersion(token="v1")

    core = make_core({"k": Versioned(49)})
    for upto in range(2, 12):
        token = encode_key_range(1, upto)
        reply, body = await fetch(core, f"/sitemap-k-1~{token}.xml")
        assert reply.status == 200 and len(page_urls(check_document(body))) == upto - 1
    store = core._shared.store
    ranged = [k for k in store._items if "key_range='" in k]  # type: ignore[attr-defined]
    stamps = list(store._stamps)  # type: ignore[attr-defined]
    assert ranged == [] and [k for k in stamps if "key_range='" in k] == []
    # One stamp for the section's version, whatever ranges were named.
    assert len([k for k in stamps if "|ranges:k" in k]) == 1


@pytest.mark.anyio
async def test_a_keyed_provider_whose_int_keys_go_backwards_is_refused() -> None:
    """keyed() must yield increasing keys inside (after, upto]: integer keys out of order
    or outside the range answer 503 naming the section, never lost or repeated URLs."""
    from sitemap_middleware.providers import ProviderVersion

    class Lying:
        async def keyed(self, after: Any, upto: Any) -> Any:
            for key in (3, 1, 2):  # ignores the range and its own order
                yield key, f"/k/{key}"

        async def entries(self) -> Any:
            async for _, item in self.keyed(None, None):
                yield item

        async def version(self) -> ProviderVersion:
            return ProviderVersion(token="v1")

    core = make_core({"k": Lying()})
    reply, _ = await fetch(core, "/sitemap_index.xml")
    assert reply.status == 503


@pytest.mark.anyio
async def test_keyed_batches_of_keys_and_items_serve_every_key_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """keyed_batches() hands over (keys, items) as two lists: served like keyed()'s pairs.
    Lists of different lengths, or keys going backwards, are refused with a 503 that names
    the section and the problem."""
    from sitemap_middleware.providers import ProviderVersion

    class Batches:
        def __init__(self, extra_key: bool = False, backwards: bool = False) -> None:
            self.extra_key = extra_key
            self.backwards = backwards

        async def keyed_batches(self, after: Any, upto: Any) -> Any:
            keys = [k for k in range(1, 23) if (after is None or k > after)]
            keys = [k for k in keys if upto is None or k <= upto]
            for start in range(0, len(keys), 5):
                chunk = keys[start : start + 5]
                if self.backwards and start:
                    chunk = chunk[::-1]
                yield chunk + ([99] if self.extra_key else []), [f"/k/{k}" for k in chunk]

        async def keyed(self, after: Any, upto: Any) -> Any:
            async for keys, items in self.keyed_batches(after, upto):
                for pair in zip(keys, items, strict=False):
                    yield pair

        async def entries(self) -> Any:
            async for _, item in self.keyed(None, None):
                yield item

        async def version(self) -> ProviderVersion:
            return ProviderVersion(token="v1")

    core = make_core({"k": Batches()}, max_urls_per_page=8)
    _, body = await fetch(core, "/sitemap_index.xml")
    urls: list[str] = []
    for child in child_urls(check_document(body)):
        reply, page = await fetch(core, child.removeprefix("https://example.com"))
        assert reply.status == 200
        urls += page_urls(check_document(page))
    assert urls == [f"https://example.com/k/{k}" for k in range(1, 23)]
    for provider, problem in (
        (Batches(extra_key=True), "keyed_batches() gave 6 keys for 5 items"),
        (Batches(backwards=True), "keys must increase"),
    ):
        caplog.clear()
        reply, _ = await fetch(make_core({"k": provider}), "/sitemap_index.xml")
        assert reply.status == 503
        assert problem in caplog.text and "'k'" in caplog.text


@SETTINGS
@given(
    st.lists(st.lists(st.integers(1, 120), max_size=6), max_size=8),
    st.integers(1, 7),
    st.integers(50, 400),
)
def test_runs_are_cut_as_entry_by_entry(batches: list[list[int]], max_urls: int, room: int) -> None:
    """add_run places a run on the current page or declines: the pages are add()'s."""
    by_run = PageCutter(max_urls=max_urls, room=room)
    by_entry = PageCutter(max_urls=max_urls, room=room)
    position = 0
    for sizes in batches:
        when = datetime(2024, 1, 1 + len(sizes), tzinfo=timezone.utc)
        keys = list(range(position, position + len(sizes)))
        placed = by_run.add_run(
            len(sizes),
            sum(sizes),
            lastmod=when,
            first_key=keys[0] if keys else None,
            last_key=keys[-1] if keys else None,
        )
        for offset, size in enumerate(sizes):
            if by_entry.fits_alone(size):
                by_entry.add(position + offset, size, lastmod=when, key=position + offset)
            if not placed and by_run.fits_alone(size):
                by_run.add(position + offset, size, lastmod=when, key=position + offset)
        position += len(sizes)
    assert by_run.finish(position) == by_entry.finish(position)


def _rows(n: int, invalid: set[int], extended: set[int]) -> list[Any]:
    """n usual rows (URLs with "&" and "'" to escape, of varied lengths), some invalid,
    some entries with an image (which the per-item path renders)."""
    rows: list[Any] = [
        {
            "loc": f"https://example.com/p/{i}?a=1&b='{'x' * (i % 97)}'",
            "lastmod": f"2024-{1 + i % 12:02}-{1 + i % 28:02}T10:00:00+02:00",
            "changefreq": ("daily", "weekly", "never")[i % 3],
            "priority": (0.5, 1.0, 0.0)[i % 3],
        }
        for i in range(n)
    ]
    for i in invalid & set(range(n)):
        rows[i] = {**rows[i], "lastmod": "2024-13-01"}
    for i in (extended - invalid) & set(range(n)):
        rows[i] = SitemapEntry(rows[i]["loc"], images=["https://example.com/i.png"])
    return rows


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    n=st.integers(0, 2600),
    invalid=st.sets(st.integers(0, 2600), max_size=4),
    extended=st.sets(st.integers(0, 2600), max_size=2),
    max_urls=st.integers(200, 2500),
    max_bytes=st.integers(20_000, 400_000),
)
def test_large_generators_are_planned_in_large_batches_with_every_url_once(
    n: int, invalid: set[int], extended: set[int], max_urls: int, max_bytes: int
) -> None:
    """A generator's rows are planned in batches of up to PLAN_BATCH_SIZE (what one
    worker-thread hop handed over): the same plan as batches of BATCH_SIZE give, every
    page within both limits, every valid URL served once, in order."""
    from sitemap_middleware._engine import planning
    from sitemap_middleware._engine.stream import BATCH_SIZE

    rows = _rows(n, invalid, extended)

    def generator() -> Any:
        yield from rows

    core = make_core({"s": generator}, max_urls_per_page=max_urls, max_bytes_per_page=max_bytes)
    config = core.config
    section = config.resolved_sections[0]

    async def plans() -> list[Any]:
        found = []
        for size in (planning.PLAN_BATCH_SIZE, BATCH_SIZE):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(planning, "PLAN_BATCH_SIZE", size)
                found.append(await planning.plan_section(config, section, config.base, None))
        return found

    large, small = anyio.run(plans)
    assert large == small == _planned_entry_by_entry(rows, config)
    expected = [
        row["loc"] if isinstance(row, dict) else row.loc
        for i, row in enumerate(rows)
        if i not in invalid
    ]
    assert large.count == len(expected)
    assert anyio.run(crawl, core, max_bytes, max_urls) == expected


def _planned_entry_by_entry(rows: list[Any], config: SitemapConfig) -> Any:
    """The plan made the slow way: each row admitted, measured and placed on its own."""
    from sitemap_middleware._engine.measure import _lastmod
    from sitemap_middleware._engine.planning import SectionPlan
    from sitemap_middleware._sansio.models import entry_parts

    base = config.base
    writer = UrlsetWriter(label="t", resolve=base.join_if_relative, max_urls=1, max_bytes=1)
    cutter = PageCutter(max_urls=config.max_urls_per_page, room=page_room(config, base))
    for position, row in enumerate(rows):
        try:
            loc, tail, extended = entry_parts(row)
            loc = base.locate(loc)
        except InvalidEntryError:
            continue
        size = writer.sizes([(loc, tail, extended)])[0]
        if cutter.fits_alone(size):
            cutter.add(position, size, lastmod=_lastmod(tail))
    return SectionPlan("s", cutter.finish(len(rows)), len(rows), None)


@given(
    groups=st.lists(st.lists(st.integers(1, 300), min_size=1, max_size=4), min_size=1, max_size=60),
    max_urls=st.integers(1, 12),
    room=st.integers(300, 1500),
)
def test_items_of_one_key_share_a_page_unless_they_fill_more_than_one(
    groups: list[list[int]], max_urls: int, room: int
) -> None:
    """Consecutive items with one key (a row in every language) are never cut apart
    while they fit a page together; every item is placed once, in order, within the
    page's URL and byte budget, and each page's keys and lastmod are its own items'."""
    cutter = PageCutter(max_urls=max_urls, room=room)
    keys_at: list[int] = []
    position = 0
    for key, sizes in enumerate(groups):
        for size in sizes:
            when = datetime(2024, 1, 1 + position % 28, tzinfo=timezone.utc)
            cutter.add(position, size, lastmod=when, key=key)
            keys_at.append(key)
            position += 1
    pages = cutter.finish(position)
    assert sum(page.urls for page in pages) == position
    assert [page.start for page in pages] == [0, *[page.stop for page in pages[:-1]]]
    placed = [
        (keys_at[at], number)
        for number, page in enumerate(pages)
        for at in range(page.start, page.stop)
    ]
    for number, page in enumerate(pages):
        keys = [key for key, on in placed if on == number]
        assert keys and (page.first_key, page.last_key) == (keys[0], keys[-1])
        assert page.urls == len(keys) == page.stop - page.start
        group_sizes = [groups[key] for key in dict.fromkeys(keys)]
        fits = all(len(each) <= max_urls and sum(each) <= room for each in group_sizes)
        if fits:
            assert page.urls <= max_urls and page.size <= room
        dates = [
            datetime(2024, 1, 1 + p % 28, tzinfo=timezone.utc) for p in range(page.start, page.stop)
        ]
        assert page.lastmod == max(dates)
    for key, sizes in enumerate(groups):
        if len(sizes) <= max_urls and sum(sizes) <= room:
            assert len({on for k, on in placed if k == key}) == 1, key
