"""The content ledger (issue 27, item 5): honest per-URL lastmod from content digests,
in process and in Redis, and a stateful property: the written lastmod moves exactly
when the content does, the ETag whenever the body does, and no 304 for changed content."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from sitemap_middleware import Ledger, SitemapConfig, SitemapEntry
from sitemap_middleware._engine import shared
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._exceptions import ConfigurationError, InvalidEntryError
from sitemap_middleware._sansio.ledger import url_key
from sitemap_middleware.ops import PrometheusObserver
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import fetch, header, make_config

BASE = "https://example.com"
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
T0 = 1_750_000_000


class Rows:
    """A versioned section of mappings: ``loc``, an optional ``lastmod``, a ``digest``
    (its content), and a token of all of it (an honest provider version)."""

    def __init__(self, rows: dict[str, tuple[int, datetime | None]]) -> None:
        self.rows = rows

    def items(self) -> list[dict[str, Any]]:
        out = []
        for slug, (digest, lastmod) in sorted(self.rows.items()):
            item: dict[str, Any] = {"loc": f"/{slug}", "digest": f"d{digest}"}
            if lastmod is not None:
                item["lastmod"] = lastmod
            out.append(item)
        return out

    async def entries(self) -> AsyncIterator[dict[str, Any]]:
        for item in self.items():
            yield item

    async def version(self) -> ProviderVersion:
        content = repr(sorted(self.rows.items())).encode()
        return ProviderVersion(token=hashlib.sha256(content).hexdigest())


def lastmods(body: bytes) -> dict[str, str | None]:
    found = re.findall(r"<url><loc>([^<]+)</loc>(?:<lastmod>([^<]+)</lastmod>)?", body.decode())
    return {loc[len(BASE) :]: (lastmod or None) for loc, lastmod in found}


def _core(provider: Any, ledger: Ledger, clock: list[int], **kwargs: Any) -> SitemapCore:
    config = make_config({"p": provider}, base_url=BASE, ledger=ledger, **kwargs)
    assert config.ledger_book is not None
    config.ledger_book.clock = lambda: clock[0]
    return SitemapCore(config)


async def _get(core: SitemapCore, **headers: str) -> tuple[int, bytes, str | None]:
    reply, body = await fetch(core, "/sitemap.xml", **headers)
    return reply.status, body, header(reply, "etag")


@pytest.mark.anyio
async def test_entries_without_lastmod_get_the_time_their_content_was_first_seen() -> None:
    rows = Rows({"a": (1, None), "b": (1, None)})
    clock = [T0]
    core = _core(rows, Ledger(source="digest"), clock)
    _, body, etag = await _get(core)
    first = "2025-06-15T15:06:40+00:00"
    assert lastmods(body) == {"/a": first, "/b": first}
    clock[0] += 3600
    rows.rows["b"] = (2, None)  # b's content changed, a's did not
    _, body, new_etag = await _get(core)
    assert lastmods(body) == {"/a": first, "/b": "2025-06-15T16:06:40+00:00"}
    assert new_etag != etag


@pytest.mark.anyio
async def test_a_lastmod_moved_without_content_is_held_and_reported_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    told: list[tuple[str, int]] = []

    class Observer:
        def document_served(self, event: object) -> None:
            pass

        def lastmods_held(self, section: str, count: int) -> None:
            told.append((section, count))

    rows = Rows({"a": (1, START), "b": (1, START)})
    clock = [T0]
    core = _core(rows, Ledger(source="digest"), clock, observers=[Observer()])
    _, body, _ = await _get(core)
    assert lastmods(body) == {"/a": "2024-01-01T00:00:00+00:00", "/b": "2024-01-01T00:00:00+00:00"}
    rows.rows["a"] = (1, START + timedelta(days=3))  # a touch: same content, new lastmod
    rows.rows["b"] = (2, START + timedelta(days=2))  # an edit, dated by the provider
    with caplog.at_level(logging.INFO, logger="sitemap_middleware"):
        for _ in range(3):
            _, body, _ = await _get(core)
            assert lastmods(body) == {
                "/a": "2024-01-01T00:00:00+00:00",
                "/b": "2024-01-03T00:00:00+00:00",
            }
    assert told == [("p", 1)]
    held = [r for r in caplog.records if "moved while their content did not" in r.getMessage()]
    assert len(held) == 1 and "/a" in held[0].getMessage()


@pytest.mark.anyio
async def test_fields_digest_what_is_written_besides_loc_and_lastmod() -> None:
    """``source="fields"``: images, priority... are the content; the per-entry path too."""
    state: dict[str, Any] = {"image": "/a.jpg", "lastmod": START}

    def items() -> list[SitemapEntry]:
        return [
            SitemapEntry("/a", lastmod=state["lastmod"], images=[str(state["image"])]),
            SitemapEntry("/b", priority=0.5),
        ]

    clock = [T0]
    core = _core(items, Ledger(), clock)
    _, body, _ = await _get(core)
    assert lastmods(body) == {"/a": "2024-01-01T00:00:00+00:00", "/b": "2025-06-15T15:06:40+00:00"}
    state["lastmod"] = START + timedelta(days=1)  # moved, images the same: held
    clock[0] += 60
    _, body, _ = await _get(core)
    assert lastmods(body)["/a"] == "2024-01-01T00:00:00+00:00"
    state["image"] = "/a2.jpg"  # the content moved; the lastmod says so already
    _, body, _ = await _get(core)
    assert lastmods(body) == {"/a": "2024-01-02T00:00:00+00:00", "/b": "2025-06-15T15:06:40+00:00"}


@pytest.mark.anyio
async def test_a_content_change_under_an_unmoved_lastmod_is_dated_now() -> None:
    """A provider's digest by a function of the item; content that changes while the
    provider's lastmod stays put is dated when the change was first seen."""
    revisions = {"/a": 1}

    def items() -> list[SitemapEntry]:
        return [SitemapEntry("/a", lastmod=START)]

    clock = [T0]
    ledger = Ledger(source="digest", digest=lambda entry: revisions[entry.loc])
    core = _core(items, ledger, clock)
    assert lastmods((await _get(core))[1]) == {"/a": "2024-01-01T00:00:00+00:00"}
    revisions["/a"] = 2
    assert lastmods((await _get(core))[1]) == {"/a": "2025-06-15T15:06:40+00:00"}
    revisions["/a"] = 3  # again within the same second: still a later time
    assert lastmods((await _get(core))[1]) == {"/a": "2025-06-15T15:06:41+00:00"}


@pytest.mark.anyio
async def test_a_ledger_of_some_sections_leaves_the_others_as_given() -> None:
    """Ledger(sections=[...]): only those sections' URLs are dated by content; the others
    are written as their providers give them and cost nothing."""
    rows, others = Rows({"a": (1, None)}), ["/b"]
    config = SitemapConfig(
        base_url=BASE,
        sections={"p": rows, "q": others},
        ledger=Ledger(source="digest", sections=["p"]),
    )
    assert config.ledger_book is not None
    config.ledger_book.clock = lambda: T0
    reply, body = await fetch(SitemapCore(config), "/sitemap.xml")
    assert lastmods(body) == {"/a": "2025-06-15T15:06:40+00:00", "/b": None}
    with pytest.raises(ConfigurationError, match="names no section"):
        SitemapConfig(base_url=BASE, sections={"p": rows}, ledger=Ledger(sections=["x"]))


def test_ledger_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="source"):
        Ledger(source="page")
    with pytest.raises(ConfigurationError, match="digest"):
        Ledger(source="digest", digest="")
    with pytest.raises(ConfigurationError, match="max_urls"):
        Ledger(max_urls=0)
    with pytest.raises(ConfigurationError, match="ledger"):
        SitemapConfig(base_url=BASE, sections={"p": ["/"]}, ledger="fields")  # type: ignore[arg-type]


def test_prometheus_counts_lastmods_held() -> None:
    prometheus_client = pytest.importorskip("prometheus_client")
    registry = prometheus_client.CollectorRegistry()
    observer = PrometheusObserver(registry=registry)
    observer.lastmods_held("p", 3)
    value = registry.get_sample_value(
        "sitemap_lastmod_moved_without_content_total", {"section": "p"}
    )
    assert value == 3


class LedgerMachine(RuleBasedStateMachine):
    """Random edits of content and lastmods between requests and revalidations."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = [T0]
        self._real = shared.wall_clock
        shared.wall_clock = lambda: float(self.clock[0])
        self.rows = Rows({s: (0, None if s == "c" else START) for s in ("a", "b", "c", "d")})
        self.core = _core(self.rows, Ledger(source="digest"), self.clock)
        #: What the client last saw: body, ETag, Last-Modified, lastmods, digests.
        self.seen: tuple[bytes, str | None, str | None, dict[str, str | None], dict[str, int]]
        self.seen = self._fresh()

    def teardown(self) -> None:
        shared.wall_clock = self._real

    def _fresh(self) -> Any:
        reply, body = anyio.run(lambda: fetch(self.core, "/sitemap.xml"))
        assert reply.status == 200
        digests = {f"/{s}": d for s, (d, _) in self.rows.rows.items()}
        modified = header(reply, "last-modified")
        return body, header(reply, "etag"), modified, lastmods(body), digests

    @rule(slug=st.sampled_from("abcd"), moves=st.sampled_from([None, -1, 0, 1, 7]))
    def edit(self, slug: str, moves: int | None) -> None:
        """New content; its lastmod gone, unmoved, earlier or later."""
        digest, lastmod = self.rows.rows[slug]
        if moves is not None:
            lastmod = (lastmod or START) + timedelta(days=moves)
        self.rows.rows[slug] = (digest + 1, None if moves is None else lastmod)

    @rule(slug=st.sampled_from("abcd"), days=st.sampled_from([-2, 1, 30]))
    def touch(self, slug: str, days: int) -> None:
        """The lastmod moves, the content does not."""
        digest, lastmod = self.rows.rows[slug]
        self.rows.rows[slug] = (digest, (lastmod or START) + timedelta(days=days))

    @rule(slug=st.sampled_from("abcd"))
    def revert(self, slug: str) -> None:
        digest, lastmod = self.rows.rows[slug]
        self.rows.rows[slug] = (max(0, digest - 1), lastmod)

    @rule(seconds=st.sampled_from([0, 1, 3600]))
    def tick(self, seconds: int) -> None:
        self.clock[0] += seconds

    @rule(how=st.sampled_from(["inm", "ims", "both"]))
    def revalidate(self, how: str) -> None:
        body, etag, modified, written, digests = self.seen
        headers: dict[str, str] = {}
        if how in ("inm", "both") and etag:
            headers["if_none_match"] = etag
        if how in ("ims", "both") and modified:
            headers["if_modified_since"] = modified
        reply, _ = anyio.run(lambda: fetch(self.core, "/sitemap.xml", **headers))
        now = self._fresh()
        if reply.status == 304:
            assert now[0] == body, "a 304 for changed content"
        if now[0] != body:
            assert now[1] != etag, "the body changed, the ETag did not"
        for loc, lastmod in now[3].items():
            moved = lastmod != written[loc]
            changed = now[4][loc] != digests[loc]
            assert moved == changed, f"{loc}: lastmod moved {moved}, content changed {changed}"
        self.seen = now


@pytest.mark.slow  # a property run over many examples
def test_written_lastmod_moves_exactly_when_content_does() -> None:
    run_state_machine_as_test(
        LedgerMachine, settings=settings(max_examples=80, stateful_step_count=25, deadline=None)
    )


@pytest.mark.anyio
async def test_a_lastmod_before_1970_and_foreign_records_are_no_error() -> None:
    """A provider's lastmod before 1970 (no record holds it) is written as given; a
    record of a poisoned store whose time has a five-digit year is not adopted (each
    raised ValueError from the render: a 500)."""
    old = START.replace(year=1960)
    rows = Rows({"a": (1, old), "b": (1, None)})
    clock = [T0]
    core = _core(rows, Ledger(source="digest"), clock)
    book = core.config.ledger_book
    assert book is not None
    digest = int.from_bytes(hashlib.blake2b(b"d1", digest_size=8).digest(), "big")
    book.adopt("p", {url_key(f"{BASE}/b"): digest << 40 | ((1 << 38) - 1) << 2})
    for _ in range(2):
        status, body, _ = await _get(core)
        assert status == 200
        assert lastmods(body) == {
            "/a": "1960-01-01T00:00:00+00:00",
            "/b": "2025-06-15T15:06:40+00:00",
        }
        clock[0] += 60


@pytest.mark.anyio
async def test_a_url_listed_twice_with_two_contents_gets_one_steady_date() -> None:
    """Each listing replaced the other's record at every pass: both lastmods (and the
    section's version) moved at every request though nothing changed."""
    items = [{"loc": "/a", "digest": "x"}, {"loc": "/a", "digest": "y"}, {"loc": "/b"}]

    async def entries() -> AsyncIterator[dict[str, Any]]:
        for item in items:
            yield dict(item)

    clock = [T0]
    core = _core(entries, Ledger(source="digest"), clock)
    bodies = []
    for _ in range(3):
        _, body, _ = await _get(core)
        bodies.append(body)
        clock[0] += 100
    first = "2025-06-15T15:06:40+00:00"
    assert bodies[0].decode().count(f"<lastmod>{first}</lastmod>") == 2
    assert bodies[0] == bodies[1] == bodies[2]


@pytest.mark.anyio
async def test_a_static_list_of_mappings_may_carry_digests() -> None:
    """A static list is made into SitemapEntry objects up front: its items' ``digest``
    key raised InvalidEntryError from SitemapConfig (a list across deploys, with Redis,
    is where first-seen times matter). Its version names the digests; a section the
    ledger does not date still refuses the key."""
    items: list[Any] = [
        {"loc": "/a", "digest": "rev-1"},
        {"loc": "/b", "lastmod": START, "digest": "rev-1"},
        "/c",
    ]
    clock = [T0]
    core = _core(items, Ledger(source="digest"), clock)
    _, body, _ = await _get(core)
    first = "2025-06-15T15:06:40+00:00"
    assert lastmods(body) == {"/a": first, "/b": "2024-01-01T00:00:00+00:00", "/c": None}
    book = core.config.ledger_book
    assert book is not None
    # the next deploy: /a's content moved, the fleet's records (here: adopted) say when
    # it was first seen
    edited = [{"loc": "/a", "digest": "rev-2"}, *items[1:]]
    clock[0] += 600
    later = _core(edited, Ledger(source="digest"), clock)
    assert later.config.ledger_book is not None
    later.config.ledger_book.adopt("p", book._records["p"])
    _, body, _ = await _get(later)
    assert lastmods(body) == {
        "/a": "2025-06-15T15:16:40+00:00",
        "/b": "2024-01-01T00:00:00+00:00",
        "/c": None,
    }
    providers: list[Any] = [c.config.resolved_sections[0].provider for c in (core, later)]
    versions = [await provider.version() for provider in providers]
    assert versions[0] != versions[1]
    with pytest.raises(InvalidEntryError, match="digest"):
        SitemapConfig(
            base_url=BASE,
            sections={"p": ["/x"], "q": items},
            ledger=Ledger(source="digest", sections=["p"]),
        )


def test_a_digest_key_may_not_be_an_entry_field() -> None:
    """``digest="loc"`` took every item's loc out (an empty sitemap, silently);
    ``"lastmod"`` every lastmod."""
    for name in ("loc", "lastmod", "changefreq", "priority", "alternates"):
        with pytest.raises(ConfigurationError, match="entry field"):
            Ledger(source="digest", digest=name)


class Listing:
    """A versioned section of mappings (its version moves only when its items do)."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    async def entries(self) -> AsyncIterator[dict[str, Any]]:
        for item in self.items:
            yield dict(item)

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=hashlib.sha256(repr(self.items).encode()).hexdigest())


async def _three_rounds(core: Any, clock: list[int]) -> list[list[tuple[bytes, str | None]]]:
    """Three rounds of the index and both pages (page 1 twice), 100 s apart: what each
    answered, and its tag."""
    rounds = []
    for _ in range(3):
        seen = []
        for path in ("/sitemap.xml", "/sitemap-p-1.xml", "/sitemap-p-2.xml", "/sitemap-p-1.xml"):
            reply, body = await fetch(core, path)
            assert reply.status == 200
            seen.append((body, header(reply, "etag")))
        rounds.append(seen)
        clock[0] += 100
    return rounds


@pytest.mark.anyio
async def test_a_url_listed_on_two_pages_with_two_contents_gets_one_steady_date() -> None:
    """/a on page 1 (content x) and on page 2 (content y): each page's render replaced
    the record the other wrote, so both pages' lastmods, and the section's version, moved
    at every request. The first listing in section order wins (a planning pass over the
    whole section says which that is), on every page."""
    items: list[dict[str, Any]] = [
        {"loc": "/a", "digest": "x"},
        {"loc": "/b", "digest": "b"},
        {"loc": "/c", "digest": "c"},
        {"loc": "/a", "digest": "y"},
    ]
    clock = [T0]
    core = _core(Listing(items), Ledger(source="digest"), clock, max_urls_per_page=2)
    rounds = await _three_rounds(core, clock)
    assert rounds[0] == rounds[1] == rounds[2]
    first = "2025-06-15T15:06:40+00:00"
    assert lastmods(rounds[0][1][0]) == {"/a": first, "/b": first}
    assert lastmods(rounds[0][2][0]) == {"/c": first, "/a": first}
    # the first listing's content moves: both listings are dated anew, once
    items[0] = {"loc": "/a", "digest": "x2"}
    later = [(await fetch(core, p))[1] for p in ("/sitemap-p-1.xml", "/sitemap-p-2.xml")] * 2
    clock[0] += 100
    again = [(await fetch(core, p))[1] for p in ("/sitemap-p-1.xml", "/sitemap-p-2.xml")]
    moved = lastmods(later[0])["/a"]
    assert moved is not None and moved > first
    assert lastmods(later[1])["/a"] == moved
    assert again == later[:2]


@settings(max_examples=40, deadline=None)
@given(
    listings=st.lists(
        st.tuples(st.sampled_from("abcd"), st.sampled_from("xyz")), min_size=1, max_size=12
    ),
    per_page=st.integers(1, 4),
    order=st.randoms(use_true_random=False),
)
def test_every_listing_of_a_url_carries_one_steady_date(
    listings: list[tuple[str, str]], per_page: int, order: Any
) -> None:
    """Whatever the repeats, pages and the order pages are asked in: each URL's
    listings share one lastmod, and nothing moves while nothing changes."""
    items = [{"loc": f"/{slug}", "digest": digest} for slug, digest in listings]
    clock = [T0]
    core = _core(Listing(items), Ledger(source="digest"), clock, max_urls_per_page=per_page)

    async def crawl() -> dict[str, bytes]:
        _, index = await fetch(core, "/sitemap.xml")
        paths = re.findall(r"<loc>https://example.com(/sitemap-p-\d+\.xml)</loc>", index.decode())
        paths = paths or ["/sitemap.xml"]
        order.shuffle(paths)
        found = {"index": index}
        for path in paths:
            found[path] = (await fetch(core, path))[1]
        return found

    first = anyio.run(crawl)
    clock[0] += 100
    assert anyio.run(crawl) == first
    dates: dict[str, set[str | None]] = {}
    for path, body in first.items():
        if path != "index" or len(first) == 1:
            for loc, lastmod in re.findall(
                r"<url><loc>([^<]+)</loc>(?:<lastmod>([^<]+)</lastmod>)?", body.decode()
            ):
                dates.setdefault(loc, set()).add(lastmod)
    assert all(len(found) == 1 for found in dates.values()), dates


@pytest.mark.anyio
async def test_a_lastmod_that_stayed_while_the_content_moved_is_not_reported_as_held() -> None:
    """Content edited under an unmoved provider lastmod is dated when it was first seen;
    the provider's older lastmod on the next passes did not move: no lastmods_held (each
    such URL was counted as "moved without content", once per content)."""
    told: list[tuple[str, int]] = []

    class Observer:
        def document_served(self, event: object) -> None:
            pass

        def lastmods_held(self, section: str, count: int) -> None:
            told.append((section, count))

    rows = Rows({"a": (1, START)})
    clock = [T0]
    core = _core(rows, Ledger(source="digest"), clock, observers=[Observer()])
    await _get(core)
    rows.rows["a"] = (2, START)
    clock[0] += 60
    for _ in range(3):
        _, body, _ = await _get(core)
        assert lastmods(body) == {"/a": "2025-06-15T15:07:40+00:00"}
    assert told == []
    book = core.config.ledger_book
    assert book is not None and book.held("p") == (0, [])
    rows.rows["a"] = (2, START + timedelta(days=600))  # now it moves on, content unmoved
    _, body, _ = await _get(core)
    assert lastmods(body) == {"/a": "2025-06-15T15:07:40+00:00"}
    assert told == [("p", 1)]
    assert book.held("p") == (
        1,
        [(BASE + "/a", "2025-08-23T00:00:00+00:00", "2025-06-15T15:07:40+00:00")],
    )


@pytest.mark.anyio
async def test_repeats_reach_later_pages_when_the_section_ends_on_a_batch_boundary() -> None:
    """A section of 1,000 items (two full batches of 500): the pass ended with an empty
    batch, which never told the book its repeats, so page 2 dated /a by its own listing
    and each page's render replaced the other's record."""
    items: list[dict[str, Any]] = [{"loc": f"/u{i}", "digest": "d"} for i in range(1000)]
    items[0] = {"loc": "/a", "digest": "x"}
    items[999] = {"loc": "/a", "digest": "y"}
    clock = [T0]
    core = _core(Listing(items), Ledger(source="digest"), clock, max_urls_per_page=500)
    rounds = await _three_rounds(core, clock)
    assert rounds[0] == rounds[1] == rounds[2]
    assert lastmods(rounds[0][2][0])["/a"] == lastmods(rounds[0][1][0])["/a"]
