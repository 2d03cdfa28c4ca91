"""One URL, one listing (issue 27, item 3): duplicates within and across sections are
served once, where they are first listed (config order, then position)."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware import ConfigurationError, Renders, SitemapConfig, SitemapEntry
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._ops.explain import explain
from sitemap_middleware._sansio.dedupe import Fingerprints, adjust_pages, collisions
from sitemap_middleware._sansio.paging import PagePlan
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import fetch
from tests.harness.documents import check_document, child_urls, page_urls
from tests.unit.engine.test_dedupe_keyed import KeyedTable, RangedTable, locs
from tests.unit.sansio.test_exclusion import _listed
from tests.unit.sansio.test_exclusion import _Observer as ExclusionObserver

BASE = "https://example.com"

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
PATHS = st.sampled_from(["/", "/a", "/b", "/c/d", "/e?x=1", "/f", "/g", "/h"])


class _Generated:
    """A provider without a version: with plan_ttl=0 each page is planned up to itself."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    async def entries(self) -> Any:
        for item in self.items:
            yield item


def _item(path: str, shape: int) -> Any:
    if shape == 1:
        return {"loc": path, "priority": 0.5}
    if shape == 2:
        return SitemapEntry(path, images=[path.rstrip("/") + "/i.jpg"])
    return path


def _provider(kind: str, raw: list[Any], gaps: int) -> Any:
    """A section of ``kind`` listing ``raw`` (keyset ones: keys ``gaps`` apart)."""
    rows = [(gaps * (place + 1), item) for place, item in enumerate(raw)]
    if kind == "keyed":
        return KeyedTable(rows)
    if kind == "ranged":
        return RangedTable(rows)
    if kind == "generated":
        return _Generated(raw)
    return (lambda: raw) if kind == "callable" else raw


def _firsts(sections: list[list[str]]) -> list[str]:
    return list(dict.fromkeys(BASE + path for paths in sections for path in paths))


async def _crawl_raw(core: SitemapCore, max_bytes: int, max_urls: int) -> list[str]:
    """Follow the index like a crawler, every ``<loc>`` as written (a parser merges
    repeats within a document): every page within budget, XSD-valid and not empty."""
    reply, body = await fetch(core, "/sitemap_index.xml")
    if reply.status == 404:
        return []
    assert reply.status == 200, body
    urls: list[str] = []
    for child in child_urls(check_document(body)):
        reply, page = await fetch(core, child.removeprefix(BASE))
        assert reply.status == 200, (child, page)
        assert len(page) <= max_bytes, (child, len(page))
        check_document(page)
        found = locs(page)
        assert 1 <= len(found) <= max_urls, child
        urls += found
    return urls


@pytest.mark.slow  # a property run over many examples
@SETTINGS
@given(
    sections=st.lists(
        st.tuples(
            st.lists(st.tuples(PATHS, st.integers(0, 2)), max_size=25),
            st.sampled_from(["list", "callable", "generated", "keyed", "ranged"]),
        ),
        min_size=1,
        max_size=4,
    ),
    max_urls=st.integers(1, 6),
    max_bytes=st.integers(1200, 3000),
    gaps=st.integers(1, 3),
)
def test_every_url_exactly_once_across_the_whole_site(
    sections: list[tuple[list[tuple[str, int]], str]], max_urls: int, max_bytes: int, gaps: int
) -> None:
    """Random sections of random URLs, duplicated within and across them, random page
    budgets, sections of every kind (lists, callables, unversioned generators, keyset
    sections planned by reading their rows or from their key ranges): the union of all
    pages of all sections is the set of distinct URLs, each exactly once, where it is
    first listed; no page empty or over its budgets."""
    expected = _firsts([[path for path, _ in items] for items, _ in sections])
    providers: dict[str, Any] = {}
    for number, (items, kind) in enumerate(sections):
        raw = [_item(path, shape) for path, shape in items]
        providers[f"s{number}"] = _provider(kind, raw, gaps)
    config = SitemapConfig(
        dedupe=True,
        base_url=BASE,
        sections=providers,
        max_urls_per_page=max_urls,
        max_bytes_per_page=max_bytes,
        renders=Renders(plan_ttl=0),
    )
    found = anyio.run(_crawl_raw, SitemapCore(config), max_bytes, max_urls)
    assert found == expected
    assert anyio.run(_listed, config) == expected


async def _index_counts(core: SitemapCore) -> list[tuple[str, int]]:
    """Each child the index lists and the URLs its page holds."""
    _, body = await fetch(core, "/sitemap_index.xml")
    counts = []
    for child in child_urls(check_document(body)):
        _, page = await fetch(core, child.removeprefix(BASE))
        counts.append((child.removeprefix(BASE), len(page_urls(check_document(page)))))
    return counts


@pytest.mark.anyio
async def test_plans_count_what_pages_hold_and_list_no_page_of_duplicates_only() -> None:
    config = SitemapConfig(
        dedupe=True,
        base_url=BASE,
        sections={"a": ["/1", "/2", "/1"], "b": ["/2", "/1", "/3", "/3", "/4"]},
        max_urls_per_page=2,
    )
    core = SitemapCore(config)
    # b's first page (/2, /1) holds only URLs a listed first: the index leaves it out.
    assert await _index_counts(core) == [
        ("/sitemap-a-1.xml", 2),
        ("/sitemap-b-1.xml", 1),
        ("/sitemap-b-2.xml", 1),
    ]
    plans, _ = await core._documents.plans.plan_all(config.base)
    assert [plan.count for plan in plans] == [2, 2]
    assert [[page.urls for page in plan.pages] for plan in plans] == [[2], [1, 1]]


@pytest.mark.anyio
async def test_duplicates_are_counted_once_per_content(caplog: pytest.LogCaptureFixture) -> None:
    observer = ExclusionObserver()
    config = SitemapConfig(
        dedupe=True,
        base_url=BASE,
        sections={"a": ["/1", "/1", "/2"], "b": ["/2", "/3"]},
        observers=[observer],
        renders=Renders(plan_ttl=0),
    )
    core = SitemapCore(config)
    caplog.set_level(logging.INFO, "sitemap_middleware")
    for _ in range(2):
        assert (await fetch(core, "/sitemap_index.xml"))[0].status == 200
        assert (await fetch(core, "/sitemap-b-1.xml"))[0].status == 200
    assert observer.excluded == [("a", "duplicate", 1), ("b", "duplicate", 1)]
    lines = [r.getMessage() for r in caplog.records if "duplicate" in r.getMessage()]
    assert lines == [
        "sitemap section 'a' left out 1 of its 3 items on purpose (duplicate: 1)",
        "sitemap section 'b' left out 1 of its 2 items on purpose (duplicate: 1)",
    ]


@pytest.mark.anyio
async def test_explain_names_where_a_duplicate_is_listed_first() -> None:
    config = SitemapConfig(
        dedupe=True,
        base_url=BASE,
        sections={"a": ["/0", "/1"], "b": ["/2", "/1"]},
        max_urls_per_page=1,
    )
    (answer,) = await explain(config, ["/1"])
    assert answer.listed == [("a", "sitemap-a-2.xml", 1)]
    assert answer.left_out == ["section 'b': a duplicate, listed first in section 'a', page 2"]


def test_collisions_are_fingerprints_seen_twice_within_or_across() -> None:
    from array import array

    def taken(*batches: list[str], keep: bool = False) -> Any:
        prints = Fingerprints()
        for batch in batches:
            prints.add(batch)
        return prints.result(keep)

    # Repeats within a batch are found exactly; across batches, the batch may count.
    assert taken(["/a", "/b", "/a", "/c", "/c"]) == (None, frozenset(map(hash, ["/a", "/c"])))
    assert sorted(taken(["/a", "/b"], ["/c"], keep=True)[0]) == sorted(
        map(hash, ["/a", "/b", "/c"])
    )
    assert taken(["/a", "/b"], ["/c", "/a"])[1] >= frozenset([hash("/a")])
    assert collisions([frozenset()], [array("q", [1, 2, 3])]) == set()
    assert collisions([frozenset(), frozenset()], [array("q", [1, 2]), array("q", [4])]) == set()
    assert collisions([frozenset({1}), frozenset()], [array("q", [1, 2]), array("q", [3, 2])]) == {
        1,
        2,
    }


def test_pages_lose_their_duplicates_and_an_emptied_page_joins_the_next() -> None:
    pages = (
        PagePlan(0, 2, 2, 20, 0, None),
        PagePlan(2, 4, 2, 20, 1, None),
        PagePlan(4, 6, 2, 20, 0, None),
    )
    # Two listings of page 2 (index 1, one of them news) and one of page 3 are dropped.
    adjusted, numbers = adjust_pages(pages, [(1, 10, False), (1, 10, True), (2, 10, False)])
    assert adjusted == (PagePlan(0, 2, 2, 20, 0, None), PagePlan(2, 6, 1, 10, 0, None))
    assert numbers == [0, 1, 1]
    # An emptied last page joins the one before it, keys included.
    keyed = tuple(replace(page, first_key=page.start, last_key=page.stop - 1) for page in pages)
    adjusted, numbers = adjust_pages(keyed[:2], [(1, 10, False), (1, 10, True)])
    assert adjusted == (PagePlan(0, 4, 2, 20, 0, None, 0, 3),)
    assert numbers == [0, 0]
    # A page counted empty already (nothing it holds is listed) joins the next.
    empty = replace(keyed[1], urls=0)
    adjusted, numbers = adjust_pages((keyed[0], empty, keyed[2]), ())
    assert adjusted == (keyed[0], PagePlan(2, 6, 2, 20, 0, None, 2, 5))
    assert numbers == [0, 1, 1]


@pytest.mark.anyio
async def test_without_dedupe_every_listing_is_served_and_no_fingerprint_taken() -> None:
    """dedupe is opt-in: by default a URL listed twice is served twice (check warns
    duplicate-url), and planning takes no fingerprint (the pass costs what it did)."""
    config = SitemapConfig(
        base_url=BASE, sections={"a": ["/0", "/1"], "b": ["/2", "/1"]}, max_urls_per_page=1
    )
    (answer,) = await explain(config, ["/1"])
    assert answer.listed == [("a", "sitemap-a-2.xml", 1), ("b", "sitemap-b-2.xml", 1)]
    core = SitemapCore(config)
    plans, _ = await core._documents.plans.plan_all(config.base)
    assert all(plan.prints is None and not plan.duplicates for plan in plans)
    with pytest.raises(ConfigurationError, match="dedupe must be True or False"):
        SitemapConfig(base_url=BASE, sections={"a": ["/"]}, dedupe="yes")  # type: ignore[arg-type]


class _Lagging:
    """Rows that change after their version was read (a write between a version query
    and the rows' query, or a version that misses a write): the version stays put."""

    def __init__(self, rows: list[tuple[int, str]]) -> None:
        self.rows = rows

    async def entries(self) -> Any:
        for _, path in list(self.rows):
            yield path

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


class _LaggingTable(KeyedTable):
    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")

    async def range_version(self, after: Any, upto: Any) -> tuple[int, ProviderVersion]:
        return len(self._in(after, upto)), ProviderVersion(token="v1")


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["list", "keyed", "ranged"])
async def test_a_page_never_lists_a_url_twice_when_rows_change_after_planning(kind: str) -> None:
    """The plan found no duplicate; then a row became a copy of another row on the same
    page before the page was rendered (found by concurrent writes under uvicorn): the
    page wrote the URL twice. A page writes each URL once, whatever the plan knew."""
    rows = [(1, "/x"), (2, "/y"), (3, "/z")]
    provider: Any = {"list": _Lagging, "keyed": _LaggingTable}.get(kind, RangedTable)(rows)
    if kind == "ranged":
        provider.version = _LaggingTable.version.__get__(provider)
        provider.range_version = _LaggingTable.range_version.__get__(provider)
    config = SitemapConfig(dedupe=True, base_url=BASE, sections={"a": ["/a"], "k": provider})
    core = SitemapCore(config)
    _, index = await fetch(core, "/sitemap_index.xml")
    page = child_urls(check_document(index))[1].removeprefix(BASE)
    provider.rows[2] = (3, "/x")
    reply, body = await fetch(core, page)
    assert reply.status == 200
    assert locs(body) == [BASE + "/x", BASE + "/y"]


class _Flipping:
    """Each read of the rows sees them as a concurrent writer left them: the planning
    pass reads ``first``, every later read ``then``; the version stays put."""

    def __init__(self, first: list[str], then: list[str]) -> None:
        self.reads = [first]
        self.then = then

    async def entries(self) -> Any:
        for path in self.reads.pop() if self.reads else self.then:
            yield path

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


@pytest.mark.anyio
@pytest.mark.parametrize("sections", ["one", "two"])
async def test_a_page_served_from_its_planning_pass_lists_each_url_once(sections: str) -> None:
    """A one-page section is served from the planning pass made for the request. That
    pass read /x twice (or /a, which section a lists first); the rows changed before
    the duplicates were read again for their URLs, which found none, so the plan left
    nothing out and the pass's rows were served as read: /x (or /a) twice."""
    first, later = (["/x", "/y", "/x"], ["/x", "/y", "/z"])
    if sections == "two":
        first, later = (["/a", "/y"], ["/b", "/y"])
    providers: dict[str, Any] = {"k": _Flipping(first, later)}
    if sections == "two":
        providers = {"a": ["/a"], **providers}
    config = SitemapConfig(dedupe=True, base_url=BASE, sections=providers)
    reply, body = await fetch(SitemapCore(config), "/sitemap-k-1.xml")
    assert reply.status == 200
    served = locs(body) + ([BASE + "/a"] if sections == "two" else [])
    assert len(served) == len(set(served)), served


@pytest.mark.anyio
async def test_two_spellings_of_one_url_are_listed_once() -> None:
    config = SitemapConfig(
        dedupe=True,
        base_url=BASE,
        sections={"a": ["/caf%c3%a9", "/~x"], "b": ["/café", "/%7Ex", "/y"]},
    )
    core = SitemapCore(config)
    assert [url for _, url in await _index_counts(core)] == [2, 1]
    (answer,) = await explain(config, ["/caf%C3%A9"])
    assert answer.listed == [("a", "sitemap-a-1.xml", 0)]


@pytest.mark.anyio
async def test_a_section_may_stay_out_of_the_sites_dedupe(tmp_path: Any) -> None:
    """``Section(dedupe=False)`` under ``dedupe=True``: its URLs are listed as they are and
    compared with no other section's (a large section whose URLs no other lists pays no
    fingerprint pass); the others are deduplicated among themselves. Its plan, taking
    no part, is kept by a plan store (``Renders(plan_directory=...)``); theirs are not."""
    from sitemap_middleware import Section

    config = SitemapConfig(
        base_url=BASE,
        sections={
            "a": ["/x", "/y"],
            "b": Section(["/x", "/z"], dedupe=False),
            "c": ["/x", "/w"],
        },
        dedupe=True,
        renders=Renders(plan_directory=tmp_path),
    )
    core = SitemapCore(config)
    listed = {}
    for name in "abc":
        _, body = await fetch(core, f"/sitemap-{name}-1.xml")
        listed[name] = [url.removeprefix(BASE) for url in page_urls(check_document(body))]
    assert listed == {"a": ["/x", "/y"], "b": ["/x", "/z"], "c": ["/w"]}
    plans, _ = await core._documents.plans.plan_all(config.base)
    assert [plan.prints is None for plan in plans] == [False, True, False]
    assert len(list(tmp_path.iterdir())) == 1  # b's plan alone
    with pytest.raises(ConfigurationError, match="Section.dedupe must be True or False"):
        Section(["/"], dedupe="no")  # type: ignore[arg-type]
    await core.aclose()
