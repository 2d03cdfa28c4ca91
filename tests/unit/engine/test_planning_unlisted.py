"""A section whose every entry is left out is reported by the planning pass.

The planning pass is quiet (its entries are logged when their page is served), but a
section of invalid entries only has no page: the index leaves it out, /sitemap.xml may
answer 404, and nothing would ever be logged. The pass says so once per content.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware import Renders, SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.providers import CallableProvider, ProviderVersion, SQLAlchemyProvider
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, page_urls

pytestmark = pytest.mark.anyio
LOGGER = "sitemap_middleware"


def _warnings(caplog: pytest.LogCaptureFixture, text: str = "lists no URL") -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == LOGGER and r.levelno == logging.WARNING and text in r.getMessage()
    ]


def _core(provider: Any, plan_ttl: float = 5.0) -> SitemapCore:
    """plan_ttl=0: a section without a version is measured anew on every request."""
    return make_core({"things": provider}, renders=Renders(plan_ttl=plan_ttl))


ROWS = [{"id": 1}, {"id": 2}, {"id": 3}]


class _Outside:
    """Entries all outside the base (the location rule leaves each out), with a version."""

    def __init__(self) -> None:
        self.token = "v1"
        self.locs = ["https://other.example/a", "https://other.example/b"]

    async def entries(self) -> AsyncIterator[str]:
        for loc in self.locs:
            yield loc

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=self.token)


def _missing_key(row: dict[str, Any]) -> Any:
    return row["missing"]


@pytest.mark.parametrize(
    ("provider", "count", "first"),
    [
        (
            CallableProvider(lambda: ROWS, map=_missing_key),
            3,
            "invalid _missing_key {'id': 1}: KeyError: 'missing'",
        ),
        (
            CallableProvider(lambda: [{"loc": "/a", "priority": 7.0}] * 2),
            2,
            "invalid priority 7.0",
        ),
        (_Outside(), 2, "invalid loc 'https://other.example/a'"),
    ],
)
@pytest.mark.parametrize("plan_ttl", [5.0, 0])
async def test_a_section_with_no_valid_entry_is_reported_once(
    caplog: pytest.LogCaptureFixture, provider: Any, count: int, first: str, plan_ttl: float
) -> None:
    """The index lists no page and /sitemap.xml answers 404: one warning names the
    section, how many items were left out and the first error; later requests for the
    same content (the index, the sitemap again, each measuring it anew without plans
    kept) log nothing more."""
    core = _core(provider, plan_ttl)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        reply, _ = await fetch(core, "/sitemap.xml")
        assert reply.status == 404
        await fetch(core, "/sitemap.xml")
        await fetch(core, "/sitemap_index.xml")
    (message,) = _warnings(caplog)
    assert "'things'" in message and f"{count} of its {count} items" in message, message
    assert first in message, message


async def test_reported_again_when_the_content_changes(caplog: pytest.LogCaptureFixture) -> None:
    """Once per content: another version, or other items left out (a provider without
    version), is reported again; a section that lists URLs again and relapses too."""
    rows: list[dict[str, Any]] = [{"loc": "/a", "priority": 7.0}]
    core = _core(CallableProvider(lambda: list(rows)), plan_ttl=0)
    outside = _Outside()
    versioned = _core(outside)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        await fetch(core, "/sitemap.xml")
        await fetch(core, "/sitemap.xml")
        assert len(_warnings(caplog)) == 1
        rows.append({"loc": "/b", "priority": 8.0})  # two left out now
        await fetch(core, "/sitemap.xml")
        assert len(_warnings(caplog)) == 2
        rows[:] = [{"loc": "/a"}]  # fixed: listed, nothing to report
        reply, _ = await fetch(core, "/sitemap.xml")
        assert reply.status == 200
        assert len(_warnings(caplog)) == 2
        rows[:] = [{"loc": "/a", "priority": 7.0}]  # broken again, as the first time
        await fetch(core, "/sitemap.xml")
        assert len(_warnings(caplog)) == 3

        await fetch(versioned, "/sitemap.xml")
        await fetch(versioned, "/sitemap.xml")
        assert len(_warnings(caplog)) == 4
        outside.token = "v2"  # new content, still all outside the base
        await fetch(versioned, "/sitemap.xml")
        assert len(_warnings(caplog)) == 5


async def test_a_section_with_some_valid_entries_is_left_to_its_pages(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Invalid entries beside valid ones are logged when their page is served (as
    before), not by the planning pass."""
    items = [{"loc": "/a"}, {"loc": "/b", "priority": 7.0}, {"loc": "https://other.example/"}]
    core = _core(CallableProvider(lambda: items))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200
    assert page_urls(check_document(body)) == ["https://example.com/a"]
    assert _warnings(caplog) == []
    assert len(_warnings(caplog, "skipping invalid entry")) == 2


async def test_an_index_beside_an_unlisted_section_is_served_and_names_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Other sections are served; the warning says which one the index leaves out."""
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"good": ["/a"], "bad": CallableProvider(lambda: ROWS, map=_missing_key)},
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        reply, body = await fetch(SitemapCore(config), "/sitemap.xml")
    assert reply.status == 200
    (message,) = _warnings(caplog)
    assert "'bad'" in message and "3 of its 3 items" in message


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # aiosqlite
async def test_sql_sections_of_failing_rows_are_reported(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """SQLAlchemyProvider: a to_entry or a location function that raises on every row."""
    pytest.importorskip("aiosqlite")
    from sqlalchemy import Column, Integer, MetaData, String, Table, text
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'rows.sqlite3'}")
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE items (id INTEGER PRIMARY KEY, slug TEXT)"))
        for key in range(1, 6):
            await conn.execute(text("INSERT INTO items VALUES (:k, :s)"), {"k": key, "s": "x"})
    items = Table(
        "items", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String)
    )

    def to_entry(row: Any) -> Any:
        return 1 / 0

    def location(row: Any) -> str:
        raise LookupError("no such category")

    providers: list[tuple[Callable[[], Any], str]] = [
        (
            lambda: SQLAlchemyProvider(engine, items, key="id", to_entry=to_entry),
            "ZeroDivisionError: division by zero",
        ),
        (
            lambda: SQLAlchemyProvider(engine, items, key="id", location=location),
            "LookupError: no such category",
        ),
    ]
    try:
        for make, error in providers:
            caplog.clear()
            core = _core(make())
            with caplog.at_level(logging.WARNING, logger=LOGGER):
                reply, _ = await fetch(core, "/sitemap.xml")
                await fetch(core, "/sitemap_index.xml")
            assert reply.status == 404
            (message,) = _warnings(caplog)
            assert "'things'" in message and "5 of its 5 items" in message, message
            assert error in message and "1" in message, message
    finally:
        await engine.dispose()


async def test_a_section_of_entries_larger_than_a_page_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An entry larger than a whole page is left out too (the render logs it with its
    page): a section of only such entries has no page, and the pass says why."""
    from sitemap_middleware import Image, SitemapEntry

    images = tuple(Image(f"/i/{n}.png") for n in range(60))
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"big": [SitemapEntry("/a", images=images)]},
        max_bytes_per_page=1024,
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        reply, _ = await fetch(SitemapCore(config), "/sitemap.xml")
    assert reply.status == 404
    (message,) = _warnings(caplog)
    assert "'big'" in message and "1 of its 1 items" in message, message
    assert "larger than a whole page (max_bytes_per_page 1024)" in message, message
