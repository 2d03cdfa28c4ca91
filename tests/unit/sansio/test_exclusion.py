"""Leaving URLs out on purpose: SKIP, Section(exclude=...), our own robots.txt (issue 27)."""

from __future__ import annotations

import fnmatch
import logging
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware import SKIP, Robots, RobotsGroup, Section, SitemapConfig, SitemapEntry
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._exceptions import ConfigurationError
from sitemap_middleware._ops.explain import explain
from sitemap_middleware._sansio.robots import AppRobots
from sitemap_middleware.providers import CallableProvider
from tests.harness.core import fetch
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.providers import ListProvider
from tests.unit.sansio.test_paging import crawl

BASE = "https://example.com"


def _config(sections: dict[str, Any], **kwargs: Any) -> SitemapConfig:
    return SitemapConfig(base_url=BASE, sections=sections, **kwargs)


async def _listed(config: SitemapConfig | SitemapCore) -> list[str]:
    core = config if isinstance(config, SitemapCore) else SitemapCore(config)
    reply, body = await fetch(core, "/sitemap.xml")
    if reply.status == 404:
        return []
    assert reply.status == 200, body
    parsed = check_document(body)
    children = child_urls(parsed)
    if not children:
        return page_urls(parsed)
    urls: list[str] = []
    for child in children:
        _, page = await fetch(core, child.removeprefix(BASE))
        urls += page_urls(check_document(page))
    return urls


def _urls(*paths: str) -> list[str]:
    return [BASE + path for path in paths]


class _Observer:
    def __init__(self) -> None:
        self.excluded: list[tuple[str, str, int]] = []

    def document_served(self, event: Any) -> None:
        pass

    def entries_excluded(self, section: str, reason: str, count: int) -> None:
        self.excluded.append((section, reason, count))


@pytest.mark.anyio
async def test_skip_from_a_static_list_and_a_callable_is_left_out_in_its_place() -> None:
    items: list[Any] = ["/a", SKIP, "/b", SitemapEntry("/c"), SKIP]
    for provider in (items, lambda: items, ListProvider(items)):
        assert await _listed(_config({"s": provider})) == _urls("/a", "/b", "/c")


@pytest.mark.anyio
async def test_map_returning_skip_or_none_leaves_the_row_out_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """None from map= used to log a WARNING per row: now it means SKIP, counted, quiet."""
    rows = [{"slug": "tea", "public": True}, {"slug": "x", "public": False}, {"slug": "y"}]

    def to_entry(row: dict[str, Any]) -> Any:
        if "public" not in row:
            return None
        return f"/p/{row['slug']}" if row["public"] else SKIP

    observer = _Observer()
    config = _config({"s": CallableProvider(lambda: rows, map=to_entry)}, observers=[observer])
    core = SitemapCore(config)
    with caplog.at_level(logging.INFO, logger="sitemap_middleware"):
        for _ in range(3):  # once per content, not per request
            assert await _listed(core) == _urls("/p/tea")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    excluded = [r.getMessage() for r in caplog.records if "on purpose" in r.getMessage()]
    assert excluded == ["sitemap section 's' left out 2 of its 3 items on purpose (provider: 2)"]
    assert observer.excluded == [("s", "provider", 2)]


@pytest.mark.anyio
async def test_section_exclude_globs_match_the_decoded_path_from_the_site_root() -> None:
    pages = ["/", "/drafts/1", "/drafts/2", "/blog/caf%C3%A9", "/blog/tea?page=2", "/admin"]
    section = Section(pages, exclude=["/drafts/*", "/blog/café", "/admin", "*?page=*"])
    assert await _listed(_config({"s": section})) == _urls("/")
    with pytest.raises(ConfigurationError, match="glob patterns"):
        Section(pages, exclude=[""])


@pytest.mark.anyio
async def test_urls_our_robots_txt_disallows_are_not_listed() -> None:
    """For '*' and for any configured group; Allow wins a longer match (RFC 9309)."""
    groups = (
        RobotsGroup(disallow=["/private", "/*.pdf$"], allow=["/private/open"]),
        RobotsGroup(user_agents=["Googlebot"], disallow=["/nogoogle"]),
    )
    pages = ["/", "/private/x", "/private/open/y", "/doc.pdf", "/doc.pdf?x", "/nogoogle/1"]
    observer = _Observer()
    config = _config({"s": pages}, robots=Robots(groups=groups), observers=[observer])
    assert await _listed(config) == _urls("/", "/private/open/y", "/doc.pdf?x")
    assert observer.excluded == [("s", "robots", 3)]


@pytest.mark.anyio
async def test_groups_of_crawlers_that_read_no_sitemap_do_not_empty_it() -> None:
    """Blocking an AI crawler (GPTBot, CCBot) from the whole site is common; their groups
    leave nothing out. A search crawler's group does (Googlebot: it reads the sitemap,
    and Search Console flags a listed URL it may not fetch); Robots(sitemap_agents=...)
    names which agents' rules count."""
    groups = (
        RobotsGroup(user_agents=["GPTBot", "CCBot"], disallow=["/"]),
        RobotsGroup(user_agents=["bingbot"], disallow=["/nobing"]),
    )
    pages = ["/", "/a", "/nobing/1"]
    config = _config({"s": pages}, robots=Robots(groups=groups))
    assert await _listed(config) == _urls("/", "/a")
    honour_gpt = Robots(groups=groups, sitemap_agents=("GPTBot",))
    assert await _listed(_config({"s": pages}, robots=honour_gpt)) == []
    with pytest.raises(ConfigurationError, match="sitemap_agents"):
        Robots(sitemap_agents="Googlebot")


@pytest.mark.anyio
async def test_append_mode_honours_the_apps_robots_txt_once_read() -> None:
    config = _config({"s": ["/", "/secret/1"]}, robots=Robots(mode="append"))
    core = SitemapCore(config)
    assert await _listed(config) == _urls("/", "/secret/1")
    request_path = "/robots.txt"
    from sitemap_middleware._engine.core import RequestInfo

    request = RequestInfo("GET", request_path, {})
    target = core.route(request)
    assert target is not None
    app = AppRobots(200, b"User-agent: *\nDisallow: /secret\n")
    reply = await core.respond(target, request, app)
    assert reply.status == 200
    reply, body = await fetch(core, "/sitemap.xml")
    assert page_urls(check_document(body)) == _urls("/")


@pytest.mark.anyio
async def test_an_apps_robots_txt_starting_with_a_byte_order_mark_keeps_its_first_group() -> None:
    from sitemap_middleware._engine.core import RequestInfo

    config = _config({"s": ["/", "/secret/1"]}, robots=Robots(mode="append"))
    core = SitemapCore(config)
    request = RequestInfo("GET", "/robots.txt", {})
    target = core.route(request)
    assert target is not None
    text = "\ufeffUser-agent: *\nDisallow: /secret\n".encode()
    assert (await core.respond(target, request, AppRobots(200, text))).status == 200
    _, body = await fetch(core, "/sitemap.xml")
    assert page_urls(check_document(body)) == _urls("/")


def test_a_rule_of_many_wildcards_is_matched_without_backtracking() -> None:
    # As a regex, /*a*a*a*a*a*a*a*a*b took 44 s on a path of 60 a's; this one never ended.
    from sitemap_middleware._sansio.exclusion import RobotsExclusion

    rules = RobotsExclusion("", ())
    rules.learn("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*b\nDisallow: /*x*y$\n")
    paths = ["/" + "a" * 5000, "/" + "a" * 5000 + "b", "/" + "xy" * 2000 + "z", "/xzy"]
    assert rules.disallowed(paths) == [1, 3]


@pytest.mark.anyio
async def test_append_mode_honours_the_apps_search_crawler_groups_only() -> None:
    from sitemap_middleware._engine.core import RequestInfo

    config = _config({"s": ["/", "/g/1", "/b/1"]}, robots=Robots(mode="append"))
    core = SitemapCore(config)
    request = RequestInfo("GET", "/robots.txt", {})
    target = core.route(request)
    assert target is not None
    text = b"User-agent: googlebot\nDisallow: /g\n\nUser-agent: GPTBot\nDisallow: /\n"
    assert (await core.respond(target, request, AppRobots(200, text))).status == 200
    _, body = await fetch(core, "/sitemap.xml")
    assert page_urls(check_document(body)) == _urls("/", "/b/1")


@pytest.mark.anyio
async def test_explain_names_the_pattern_the_robots_rule_and_skip() -> None:
    groups = (RobotsGroup(disallow=["/private"]),)
    config = _config(
        {"s": Section(["/", "/drafts/1", "/private/2", SKIP], exclude=["/drafts/*"])},
        robots=Robots(groups=groups),
    )
    listed, drafted, private, unknown, outside = await explain(
        config, ["/", "/drafts/1", "/private/2", "/gone", "https://elsewhere.test/x"]
    )
    assert listed.listed and not listed.left_out
    assert drafted.left_out == ["section 's': excluded by pattern '/drafts/*'"]
    assert private.left_out == [
        "section 's': robots.txt rule 'Disallow: /private' for user-agent '*'"
    ]
    assert unknown.problems == [
        "maybe left out by its provider: section 's' left out 1 item (SKIP)"
    ]
    # a URL no section may list is not one a provider skipped
    assert len(outside.problems) == 1 and "is outside" in outside.problems[0], outside.problems


def _path(item: Any) -> str:
    return item if isinstance(item, str) else item["loc"] if isinstance(item, dict) else item.loc


SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
SEGMENTS = st.sampled_from(["a", "b", "ab", "x%20y", "c"])
PATHS = st.lists(SEGMENTS, min_size=1, max_size=3).map(lambda parts: "/" + "/".join(parts))


@SETTINGS
@given(
    items=st.lists(
        st.one_of(
            PATHS,
            PATHS.map(lambda p: {"loc": p, "priority": 0.5}),
            PATHS.map(lambda p: SitemapEntry(p, images=[p + ".jpg"])),
            st.just(SKIP),
        ),
        max_size=40,
        unique_by=lambda item: object() if item is SKIP else _path(item),  # (duplicates: once)
    ),
    patterns=st.lists(st.sampled_from(["/a*", "*/b", "/c/*", "*x y*", "/ab/a"]), max_size=2),
    disallow=st.lists(st.sampled_from(["/b", "/ab/", "/c/a", "/x%20y"]), max_size=2),
    max_urls=st.integers(1, 6),
    max_bytes=st.integers(1200, 3000),
)
def test_pages_hold_every_admitted_url_once_and_none_left_out(
    items: list[Any], patterns: list[str], disallow: list[str], max_urls: int, max_bytes: int
) -> None:
    """Whatever is skipped, excluded or disallowed: the union of the pages is the admitted
    set, each URL once, in order, and no page over its budgets."""

    def kept(item: Any) -> bool:
        if item is SKIP:
            return False
        decoded = _path(item).replace("%20", " ")
        if any(fnmatch.fnmatchcase(decoded, p) for p in patterns):
            return False
        return not any(decoded.startswith(rule.replace("%20", " ")) for rule in disallow)

    expected = [BASE + _path(item) for item in items if kept(item)]
    robots = Robots(groups=(RobotsGroup(disallow=disallow),))
    for provider in (items, lambda: items):
        config = _config(
            {"s": Section(provider, exclude=patterns)},
            robots=robots,
            max_urls_per_page=max_urls,
            max_bytes_per_page=max_bytes,
        )
        found = anyio.run(crawl, SitemapCore(config), max_bytes, max_urls)
        assert found == expected


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # aiosqlite
async def test_sql_location_function_and_to_entry_may_skip_a_row(
    tmp_path: Any, anyio_backend: str
) -> None:
    pytest.importorskip("aiosqlite")
    from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine

    from sitemap_middleware.providers import SQLAlchemyProvider

    path = tmp_path / "db.sqlite3"
    table = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String))
    sync = create_engine(f"sqlite:///{path}")
    table.metadata.create_all(sync)
    with sync.begin() as conn:
        conn.execute(table.insert(), [{"id": 1, "slug": "a"}, {"id": 2, "slug": "hidden"}])
    sync.dispose()
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    try:
        by_location = SQLAlchemyProvider(
            engine, table, key="id", location=lambda r: SKIP if r.slug == "hidden" else f"/{r.slug}"
        )
        by_entry = SQLAlchemyProvider(
            engine, table, key="id", to_entry=lambda r: None if r.slug == "hidden" else f"/{r.slug}"
        )
        for provider in (by_location, by_entry):
            assert await _listed(_config({"s": provider})) == _urls("/a")
    finally:
        await engine.dispose()
