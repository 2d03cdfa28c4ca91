"""SQLAlchemyProvider on SQLite (aiosqlite, and a sync engine) and on a real PostgreSQL."""

from __future__ import annotations

import os
import re
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    cast,
    create_engine,
    event,
    insert,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from werkzeug.http import parse_date

from sitemap_middleware import ConfigurationError, Renders
from sitemap_middleware._engine import shared
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._sansio.paging import encode_key_range
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.core import crawled_urls, fetch, make_core, revalidated_together
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.sql import recorded_statements

pytestmark = pytest.mark.anyio
POSTGRES_ENV = "SITEMAP_TEST_POSTGRES_URL"
START = datetime(2024, 1, 1)
ROWS = 2_345
#: Key-range pages keep 1 % headroom for rows inserted during a crawl: 990 of 1,000.
PAGE = 990
metadata = MetaData()
products = Table(
    "sitemap_products",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("published", Integer, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # aiosqlite and asyncpg are asyncio drivers


def _rows() -> list[dict[str, Any]]:
    # Keys with gaps (multiples of 3) so that key ranges differ from row numbers.
    return [
        {
            "id": i * 3,
            "slug": f"p{i}",
            "published": i % 10 != 0,
            "updated_at": START + timedelta(minutes=i),
        }
        for i in range(1, ROWS + 1)
    ]


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'test.sqlite3'}"
    else:
        url = os.environ.get(POSTGRES_ENV, "")
        if not url:
            pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server (.ci/run starts one)")
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
        await conn.run_sync(metadata.create_all)
        await conn.execute(insert(products), _rows())
    yield engine
    async with engine.begin() as conn:
        await conn.run_sync(metadata.drop_all)
    await engine.dispose()


def _to_entry(row: Any) -> dict[str, Any]:
    return {"loc": f"/products/{row.slug}", "lastmod": row.updated_at}


def _published_keyset(engine: AsyncEngine, **config: Any) -> tuple[SQLAlchemyProvider, SitemapCore]:
    """The published rows as key-range pages of 1,000 URLs, read 400 rows at a time."""
    provider = SQLAlchemyProvider(
        engine,
        products.select().where(products.c.published == 1),
        key="id",
        lastmod="updated_at",
        to_entry=_to_entry,
        batch_size=400,
    )
    sections = {"products": provider}
    config = {"max_urls_per_page": 1000, **config}
    return provider, make_core(sections, **config)


def _core(engine: Any, **kwargs: Any) -> SitemapCore:
    kwargs.setdefault("max_urls_per_page", 1000)
    return make_core({"products": _provider(engine)}, **kwargs)


def _provider(engine: Any, source: Any = products) -> SQLAlchemyProvider:
    return SQLAlchemyProvider(
        engine, source, key="id", lastmod="updated_at", to_entry=_to_entry, batch_size=400
    )


async def test_count_version_and_key_ranges(engine: AsyncEngine) -> None:
    """count() and version() come from one aggregate; keyed(after, upto) reads a key range."""
    provider = _provider(engine)
    assert await provider.count() == ROWS
    version = await provider.version()
    assert version.last_modified == (START + timedelta(minutes=ROWS)).replace(tzinfo=timezone.utc)
    everything = [key async for key, _ in provider.keyed(None, None)]
    assert everything == [i * 3 for i in range(1, ROWS + 1)]
    assert [key async for key, _ in provider.keyed(30, 45)] == [33, 36, 39, 42, 45]
    assert len([e async for e in provider.entries()]) == ROWS


async def test_pages_use_key_ranges_not_offset(engine: AsyncEngine) -> None:
    """Page queries filter by key range (id > :after AND id <= :upto) and never use OFFSET."""
    statements: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        statements.append((statement, parameters))

    core = _core(engine)
    await fetch(core, "/sitemap_index.xml")  # plan (one keyed pass, kept for the version)
    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        reply, body = await fetch(core, "/sitemap-products-3.xml")
        assert len(page_urls(check_document(body))) == ROWS - 2 * PAGE
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
    page_queries = [(s, p) for s, p in statements if "ORDER BY" in s and "LIMIT" in s]
    assert page_queries
    # SQLite's dialect always renders "OFFSET ?"; it must stay 0 (no growing scans).
    assert all(p[-1] == 0 for s, p in statements if "OFFSET" in s.upper())
    assert "sitemap_rows.id >" in page_queries[0][0] and "sitemap_rows.id <=" in page_queries[0][0]


async def test_select_source_and_sync_engine(engine: AsyncEngine, tmp_path: Path) -> None:
    """A select() with a filter works as a source; a sync engine is adapted through a thread."""
    query = select(products).where(products.c.published == 1)
    filtered = _provider(engine, query)
    assert await filtered.count() == ROWS - ROWS // 10
    if engine.dialect.name == "sqlite":
        sync = create_engine(f"sqlite:///{engine.url.database}")
        provider = _provider(sync)
        assert await provider.count() == ROWS
        assert len([k async for k, _ in provider.keyed(3000, 6000)]) == 1000
        sync.dispose()
    with pytest.raises(ConfigurationError, match="key column 'nope' is not in the source"):
        SQLAlchemyProvider(engine, products, key="nope", to_entry=_to_entry)


async def test_served_through_the_core(engine: AsyncEngine) -> None:
    """The index carries each page's lastmod; pages validate; a 304 needs only aggregates."""
    core = _core(engine)
    reply, body = await fetch(core, "/sitemap.xml")
    children = child_urls(check_document(body))
    # Keyset pages carry their key range: (None, 2970], (2970, 5940], (5940, 7035].
    assert [re.sub(r"~[A-Za-z0-9_-]+", "", c) for c in children] == [
        f"https://example.com/sitemap-products-{n}.xml" for n in (1, 2, 3)
    ]
    assert body.count(b"<lastmod>") == 3
    reply, body = await fetch(core, children[2].removeprefix("https://example.com"))
    assert len(page_urls(check_document(body))) == ROWS - 2 * PAGE
    assert (await fetch(core, children[2].removeprefix("https://example.com")[:-4] + "x.xml"))[
        0
    ].status == 404  # not a key range of ours
    reply, body = await fetch(core, "/sitemap-products-3.xml")
    urls = page_urls(check_document(body))
    assert len(urls) == ROWS - 2 * PAGE and urls[0] == "https://example.com/products/p1981"
    etag = dict(reply.headers)["ETag"]
    again, _ = await fetch(core, "/sitemap-products-3.xml", if_none_match=etag)
    assert again.status == 304
    assert (await fetch(core, "/sitemap-products-4.xml"))[0].status == 404


async def _validators(core: SitemapCore, path: str) -> tuple[str | None, str | None, bytes]:
    reply, body = await fetch(core, path)
    headers = dict(reply.headers)
    return headers.get("ETag"), headers.get("Last-Modified"), body


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE sitemap_products SET slug = 'renamed' WHERE id = 30",  # a rename, same lastmod
        "DELETE FROM sitemap_products WHERE id = 6",  # then re-insert below: same count
        "UPDATE sitemap_products SET updated_at = '2020-01-01 00:00:00' WHERE id = 9",  # older
    ],
    ids=["rename", "delete+insert-lower-key", "lastmod-backwards"],
)
async def test_version_sees_every_change(engine: AsyncEngine, change: str) -> None:
    """ETag and Last-Modified change (Last-Modified forwards) whenever the content does."""
    from sqlalchemy import text

    core = _core(engine, max_urls_per_page=50_000)
    etag, modified, body = await _validators(core, "/sitemap.xml")
    assert etag and modified
    async with engine.begin() as conn:
        await conn.execute(text(change))
        if change.startswith("DELETE"):
            await conn.execute(
                insert(products), [{"id": 1, "slug": "p1", "published": 1, "updated_at": START}]
            )
    await anyio.sleep(0.05)
    provider = core.config.resolved_sections[0].provider
    provider.forget()  # type: ignore[attr-defined]  # skip the 1 s metadata reuse
    etag2, modified2, body2 = await _validators(core, "/sitemap.xml")
    assert body2 != body and etag2 != etag
    # Forwards, or (changed within the second of the last stamp) not sent until it can be.
    assert modified2 is None or parse_date(modified2) > parse_date(modified)  # type: ignore[operator]
    reply, _ = await fetch(core, "/sitemap.xml", if_modified_since=modified or "")
    assert reply.status == 200  # never a 304 for changed content


async def test_key_must_be_unique_and_not_null(engine: AsyncEngine, caplog: Any) -> None:
    """A key column with duplicates or NULLs is a ConfigurationError naming the column."""
    provider = SQLAlchemyProvider(
        engine, products, key="published", to_entry=_to_entry, lastmod="updated_at"
    )
    with pytest.raises(ConfigurationError, match="key column 'published' is not unique"):
        await provider.version()
    core = make_core({"products": provider})
    reply, _ = await fetch(core, "/sitemap-products-1.xml")
    assert reply.status == 503
    assert "key column 'published' is not unique" in caplog.text


async def test_string_keys_in_a_case_insensitive_collation(tmp_path: Path) -> None:
    """The database orders string keys by the column's collation (here NOCASE, as
    PostgreSQL's locale collations also differ from Python's order): every row is listed
    once, on key-range pages, and nothing is mistaken for a duplicate."""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'nocase.sqlite3'}")
    keys = ["apple", "Banana", "cherry", "Date", "elder", "Fig"]
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE items (id TEXT COLLATE NOCASE PRIMARY KEY)"))
        for key in keys:
            await conn.execute(text("INSERT INTO items VALUES (:k)"), {"k": key})
    items = Table("items", MetaData(), Column("id", String, primary_key=True))
    provider = SQLAlchemyProvider(engine, items, key="id", to_entry=lambda row: f"/i/{row.id}")
    core = make_core({"i": provider}, max_urls_per_page=2)
    try:
        reply, body = await fetch(core, "/sitemap_index.xml")
        assert reply.status == 200, body
        listed: list[str] = []
        for child in child_urls(check_document(body)):
            page, page_body = await fetch(core, child.removeprefix("https://example.com"))
            assert page.status == 200, page_body
            listed += page_urls(check_document(page_body))
        assert sorted(listed) == sorted(f"https://example.com/i/{k}" for k in keys)
    finally:
        await engine.dispose()


async def test_a_row_inserted_into_a_range_during_a_crawl_costs_no_other_row(
    tmp_path: Path,
) -> None:
    """Key-range pages are planned with headroom: a row inserted into a full range between
    the index and its page does not push a row that existed throughout off every page."""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'insert.sqlite3'}")
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE items (id INTEGER PRIMARY KEY)"))
        for key in range(2, 802, 2):
            await conn.execute(text("INSERT INTO items VALUES (:k)"), {"k": key})
    items = Table("items", MetaData(), Column("id", Integer, primary_key=True))
    provider = SQLAlchemyProvider(engine, items, key="id", to_entry=lambda row: f"/i/{row.id}")
    core = make_core({"i": provider}, max_urls_per_page=200)
    try:
        _, body = await fetch(core, "/sitemap_index.xml")
        children = child_urls(check_document(body))
        async with engine.begin() as conn:
            await conn.execute(text("INSERT INTO items VALUES (1)"))
        listed: list[str] = []
        for child in children:
            _, page_body = await fetch(core, child.removeprefix("https://example.com"))
            listed += page_urls(check_document(page_body))
        assert len(listed) == len(set(listed))
        assert {f"https://example.com/i/{k}" for k in range(2, 802, 2)} <= set(listed)
    finally:
        await engine.dispose()


# -- column mode: location/changefreq/priority instead of to_entry --------------------------


def _column_provider(engine: Any, location: Any, **kwargs: Any) -> SQLAlchemyProvider:
    kwargs.setdefault("changefreq", "daily")
    kwargs.setdefault("priority", 0.5)
    return SQLAlchemyProvider(
        engine,
        kwargs.pop("source", products),
        key="id",
        lastmod="updated_at",
        location=location,
        batch_size=400,
        **kwargs,
    )


async def _crawl(core: SitemapCore) -> list[bytes]:
    _, body = await fetch(core, "/sitemap_index.xml")
    pages = []
    for child in child_urls(check_document(body)):
        reply, page = await fetch(core, child.removeprefix("https://example.com"))
        assert reply.status == 200, page
        pages.append(page)
    return pages


async def test_column_mode_renders_what_the_equivalent_to_entry_renders(
    engine: AsyncEngine,
) -> None:
    """``location`` as a template, a column computed in SQL or a function, with the lastmod
    column and constant changefreq/priority, serves exactly the bytes of the to_entry
    mapping that builds the same fields: every row once, with every field."""

    def mapping(row: Any) -> dict[str, Any]:
        return {
            "loc": f"/products/{row.slug}?id={row.id}&x=1",
            "lastmod": row.updated_at,
            "changefreq": "daily",
            "priority": 0.5,
        }

    def core_of(provider: SQLAlchemyProvider) -> SitemapCore:
        return make_core({"products": provider}, max_urls_per_page=1000)

    expected = await _crawl(
        core_of(
            SQLAlchemyProvider(
                engine, products, key="id", lastmod="updated_at", to_entry=mapping, batch_size=400
            )
        )
    )
    urls = [url for page in expected for url in page_urls(check_document(page))]
    assert len(urls) == len(set(urls)) == ROWS
    assert all(page.count(b"<url>") == page.count(b"<lastmod>") for page in expected)
    assert all(page.count(b"<url>") == page.count(b"<priority>0.5</priority>") for page in expected)
    path = ("/products/" + products.c.slug + "?id=" + cast(products.c.id, String) + "&x=1").label(
        "path"
    )
    computed = select(products.c.id, path, products.c.updated_at)
    for provider in (
        _column_provider(engine, "/products/{slug}?id={id}&x=1"),
        _column_provider(engine, "path", source=computed),
        _column_provider(engine, lambda row: f"/products/{row.slug}?id={row.id}&x=1"),
    ):
        assert await _crawl(core_of(provider)) == expected


async def test_column_mode_builds_no_entry_and_calls_nothing_per_row(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A template or a column location renders rows as they come: no SitemapEntry, no
    Mapped row and no function call per row."""
    from sitemap_middleware._sansio import models

    built: list[str] = []
    for name in ("SitemapEntry", "Mapped"):
        cls = getattr(models, name)
        original = cls.__init__

        def counting(self: Any, *args: Any, _o: Any = original, _n: str = name, **kw: Any) -> None:
            built.append(_n)
            _o(self, *args, **kw)

        monkeypatch.setattr(cls, "__init__", counting)
    core = make_core(
        {"products": _column_provider(engine, "/products/{slug}")}, max_urls_per_page=1000
    )
    pages = await _crawl(core)
    assert sum(page.count(b"<url>") for page in pages) == ROWS
    assert built == []


async def test_column_mode_rows_it_cannot_list_are_left_out_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A NULL in a template's column, or a location function that raises, costs that row
    only: it is logged with the row, the rest is served."""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'nulls.sqlite3'}")
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE items (id INTEGER PRIMARY KEY, slug TEXT)"))
        for key in range(1, 11):
            slug = None if key in (3, 7) else f"/s{key}"
            await conn.execute(text("INSERT INTO items VALUES (:k, :s)"), {"k": key, "s": slug})
    items = Table(
        "items", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String)
    )

    def location(row: Any) -> str:
        if row.id == 5:
            raise LookupError("no such category")
        return f"/f/{row.id}"

    try:
        for provider, missing in (
            (SQLAlchemyProvider(engine, items, key="id", location="/i{slug}"), {3, 7}),
            (SQLAlchemyProvider(engine, items, key="id", location="slug"), {3, 7}),
            (SQLAlchemyProvider(engine, items, key="id", location=location), {5}),
        ):
            caplog.clear()
            core = make_core({"i": provider})
            reply, body = await fetch(core, "/sitemap.xml")
            assert reply.status == 200, body
            assert len(page_urls(check_document(body))) == 10 - len(missing)
            logged = caplog.text
            assert "skipping invalid entry" in logged
            if 5 in missing:
                assert "LookupError: no such category" in logged and "5" in logged
            else:
                assert "column 'slug' is NULL" in logged
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "pass to_entry= .* or location="),
        ({"location": "/p/{slug}", "to_entry": _to_entry}, "either to_entry or location"),
        ({"to_entry": _to_entry, "priority": 0.5}, "either to_entry or location"),
        ({"location": "/p/{nope}"}, r"names 'nope', which is not a column of the source \(id, "),
        ({"location": "/p/{}"}, "names '', which is not a column"),
        ({"location": "nope"}, "neither a column of the source .* nor a template"),
        ({"location": "/p/{slug", "priority": 0.5}, "location template '/p/{slug'"),
        ({"location": "slug", "priority": 7}, "invalid priority 7: must be between 0 and 1"),
        ({"location": "slug", "changefreq": "sometimes"}, "invalid changefreq 'sometimes'"),
        ({"location": 42}, "location must be a column name, a template or a function"),
        ({"location": "/p/{slug!x}"}, r"location template '/p/{slug!x}': unknown conversion"),
        ({"location": "/p/{id:{slug}}"}, r"location template '/p/{id:{slug}}': a format spec"),
    ],
)
def test_column_mode_refuses_what_cannot_work(kwargs: dict[str, Any], message: str) -> None:
    """Mistakes in the column mode's settings are ConfigurationErrors at start-up."""
    sync = create_engine("sqlite://")
    with pytest.raises(ConfigurationError, match=message):
        SQLAlchemyProvider(sync, products, key="id", **kwargs)
    sync.dispose()


def test_sources_it_cannot_page_say_what_to_write() -> None:
    """A text() query, or a computed column without a label, gets a hint."""
    from sqlalchemy import text

    sync = create_engine("sqlite://")
    with pytest.raises(ConfigurationError, match=r"a text\(\) query has no columns to page by"):
        SQLAlchemyProvider(sync, text("SELECT id FROM t"), key="id", location="/{id}")  # type: ignore[arg-type]
    unlabelled = select(products.c.id, "/p/" + products.c.slug)
    with pytest.raises(ConfigurationError, match=r"label computed columns .*\.label\('path'\)"):
        SQLAlchemyProvider(sync, unlabelled, key="id", location="path")
    sync.dispose()


async def test_column_mode_a_value_its_template_cannot_format_costs_only_its_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A value the template's format spec refuses (``{n:05d}`` of a text) leaves out its
    row, logged with its key and the error; the rest of the page is served."""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'spec.sqlite3'}")
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE items (id INTEGER PRIMARY KEY, n)"))
        for key in range(1, 11):
            value = "oops" if key == 4 else key
            await conn.execute(text("INSERT INTO items VALUES (:k, :n)"), {"k": key, "n": value})
    items = Table("items", MetaData(), Column("id", Integer, primary_key=True), Column("n"))
    try:
        provider = SQLAlchemyProvider(engine, items, key="id", location="/p/{n:05d}")
        core = make_core({"i": provider})
        reply, body = await fetch(core, "/sitemap.xml")
        assert reply.status == 200, body
        urls = page_urls(check_document(body))
        assert len(urls) == 9 and "https://example.com/p/00010" in urls
        assert "'id': 4" in caplog.text and "Unknown format code 'd'" in caplog.text
    finally:
        await engine.dispose()


async def test_column_mode_with_a_function_reads_lastmod_by_its_column_key(
    tmp_path: Path,
) -> None:
    """``lastmod=`` names a column by its key, which may differ from its name in SQL."""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'key.sqlite3'}")
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE items (id INTEGER PRIMARY KEY, updated_at TEXT)"))
        await conn.execute(text("INSERT INTO items VALUES (1, '2024-05-01T10:00:00+00:00')"))
    items = Table(
        "items",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("updated_at", String, key="upd"),
    )
    try:
        provider = SQLAlchemyProvider(
            engine, items, key="id", lastmod="upd", location=lambda row: f"/i/{row.id}"
        )
        core = make_core({"i": provider})
        reply, body = await fetch(core, "/sitemap.xml")
        assert reply.status == 200, body
        assert b"<lastmod>2024-05-01T10:00:00+00:00</lastmod>" in body
    finally:
        await engine.dispose()


async def test_column_mode_settings_are_part_of_the_version(engine: AsyncEngine) -> None:
    """Other location, changefreq or priority settings over the same rows give another
    ETag: a client never gets 304 for a page whose bytes changed with a deploy."""
    etags = set()
    for kwargs in (
        {"location": "/p/{slug}"},
        {"location": "/products/{slug}"},
        {"location": "/products/{slug}", "priority": 0.1},
        {"location": "/products/{slug}", "priority": 0.1, "changefreq": "never"},
    ):
        provider = SQLAlchemyProvider(engine, products, key="id", lastmod="updated_at", **kwargs)
        etags.add(await _first_key_range_page_etag(provider))
    assert len(etags) == 4


async def _first_key_range_page_etag(provider: SQLAlchemyProvider) -> str:
    """The ETag of the index's first page, a key-range page (pages of 1,000 URLs)."""
    core = make_core({"products": provider}, max_urls_per_page=1000)
    _, index = await fetch(core, "/sitemap_index.xml")
    first = child_urls(check_document(index))[0].removeprefix("https://example.com")
    assert "~" in first  # a key-range page
    reply, _ = await fetch(core, first)
    return dict(reply.headers)["ETag"]


async def test_a_lastmod_the_version_cannot_read_costs_only_last_modified(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A newest lastmod that is no date (text, a month 13) is not the provider's
    Last-Modified, logged once; the section is served with its ETag (rows with that value are left out
    of <lastmod> or the page as for any entry)."""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'bad.sqlite3'}")
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE items (id INTEGER PRIMARY KEY, changed)"))
    items = Table("items", MetaData(), Column("id", Integer, primary_key=True), Column("changed"))
    try:
        for newest in ("garbage", "2024-13-45"):
            async with engine.begin() as conn:
                await conn.execute(text("DELETE FROM items"))
                await conn.execute(text("INSERT INTO items VALUES (1, '2024-05-01')"))
                await conn.execute(text("INSERT INTO items VALUES (2, :v)"), {"v": newest})
            caplog.clear()
            provider = SQLAlchemyProvider(
                engine, items, key="id", lastmod="changed", location="/i/{id}"
            )
            core = make_core({"i": provider})
            reply, body = await fetch(core, "/sitemap.xml")
            assert reply.status == 200, body
            assert "ETag" in dict(reply.headers)  # Last-Modified: when first seen (see shared)
            assert "lastmod column 'changed': the newest value" in caplog.text
            assert b"https://example.com/i/1" in body
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    "bounds",
    [[None, "zzz"], ["a", "b"], [None, 2**62], [-(2**62), 10], [None, 2**40]],
    ids=["text-upto", "text-range", "int8-upto", "int8-after", "past-int4"],
)
async def test_a_forged_key_range_of_another_type_answers_404(
    engine: AsyncEngine, bounds: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Any client can name key ranges: one the key column cannot hold (text for an
    integer key, integers past the column's size) answers 404, not 503 and an error."""
    import base64
    import json

    core = _core(engine)
    token = base64.urlsafe_b64encode(json.dumps(bounds).encode()).decode().rstrip("=")
    reply, body = await fetch(core, f"/sitemap-products-1~{token}.xml")
    if isinstance(bounds[1], int):  # the rows in the range, or every row below the bound
        assert reply.status == 200, body
    else:
        assert reply.status == 404, body
    assert "ERROR" not in caplog.text


@pytest.mark.parametrize("bounds", [["a", "z"], [None, 5], [None, "x"]])
async def test_a_forged_key_range_over_a_date_or_uuid_key_answers_404(
    engine: AsyncEngine, bounds: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Keys of types no page name carries (dates, UUIDs: such sections page by number)
    make every key range a forgery: 404, never 503 and an ERROR (hostile review of
    issue 23: "'str' object has no attribute 'hex'")."""
    import base64
    import datetime
    import json
    import uuid

    from sqlalchemy import Date, Uuid

    keyed = MetaData()
    tables = [
        Table("forged_uuid", keyed, Column("k", Uuid, primary_key=True), Column("slug", String)),
        Table("forged_date", keyed, Column("k", Date, primary_key=True), Column("slug", String)),
    ]
    async with engine.begin() as conn:
        await conn.run_sync(keyed.drop_all)
        await conn.run_sync(keyed.create_all)
        await conn.execute(
            insert(tables[0]), [{"k": uuid.uuid4(), "slug": f"s{i}"} for i in range(5)]
        )
        await conn.execute(
            insert(tables[1]),
            [{"k": datetime.date(2020, 1, i + 1), "slug": f"s{i}"} for i in range(5)],
        )
    token = base64.urlsafe_b64encode(json.dumps(bounds).encode()).decode().rstrip("=")
    try:
        for table in tables:
            provider = SQLAlchemyProvider(engine, table, key="k", location="/p/{slug}")
            core = make_core({"s": provider})
            reply, body = await fetch(core, f"/sitemap-s-1~{token}.xml")
            assert reply.status == 404, (table.name, body)
    finally:
        async with engine.begin() as conn:
            await conn.run_sync(keyed.drop_all)
    assert "ERROR" not in caplog.text


def test_column_mode_refuses_names_given_as_column_objects_and_async_functions() -> None:
    """Column names are strings; a coroutine function cannot give a location."""
    sync = create_engine("sqlite://")

    async def location(row: Any) -> str:
        return "/x"

    wrong: dict[str, Any] = {"location": location}  # what the types would refuse
    with pytest.raises(ConfigurationError, match="location function must be a plain"):
        SQLAlchemyProvider(sync, products, key="id", **wrong)
    wrong = {"location": "/p/{slug}", "lastmod": products.c.updated_at}
    with pytest.raises(ConfigurationError, match="lastmod must be a column name"):
        SQLAlchemyProvider(sync, products, key="id", **wrong)
    wrong = {"location": "/p/{slug}", "priority": "prio"}
    with pytest.raises(ConfigurationError, match="the same for every URL; per-row values"):
        SQLAlchemyProvider(sync, products, key="id", **wrong)
    sync.dispose()


async def test_template_values_are_percent_encoded_as_path_text(tmp_path: Path) -> None:
    """A value filled into a template is data, not URL syntax: ``#``, ``?``, ``%`` and
    spaces in it are percent-encoded (``/`` is kept, as Django's reverse() keeps it), so
    the URL is the one meant and XSD-valid; format specs still apply to the value."""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'enc.sqlite3'}")
    slugs = {1: "c#", 2: "a b", 3: "50%", 4: "x/y", 5: "what?", 6: "caf\u00e9", 7: "r&d"}
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE items (id INTEGER PRIMARY KEY, slug TEXT)"))
        for key, slug in slugs.items():
            await conn.execute(text("INSERT INTO items VALUES (:k, :s)"), {"k": key, "s": slug})
    items = Table(
        "items", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String)
    )
    try:
        provider = SQLAlchemyProvider(engine, items, key="id", location="/t/{slug}?n={id:03d}")
        core = make_core({"i": provider})
        reply, body = await fetch(core, "/sitemap.xml")
        assert reply.status == 200, body
        assert page_urls(check_document(body)) == [
            "https://example.com/t/c%23?n=001",
            "https://example.com/t/a%20b?n=002",
            "https://example.com/t/50%25?n=003",
            "https://example.com/t/x/y?n=004",
            "https://example.com/t/what%3F?n=005",
            "https://example.com/t/caf%C3%A9?n=006",
            "https://example.com/t/r&d?n=007",
        ]
    finally:
        await engine.dispose()


async def test_templates_that_differ_only_in_a_format_spec_have_their_own_etags(
    engine: AsyncEngine,
) -> None:
    """``{id:05d}`` and ``{id:03d}`` write other URLs, so other ETags."""
    etags = set()
    for location in ("/p/{id:05d}", "/p/{id:03d}"):
        provider = SQLAlchemyProvider(engine, products, key="id", location=location)
        etags.add(await _first_key_range_page_etag(provider))
    assert len(etags) == 2


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE sitemap_products SET slug = 'renamed' WHERE id = 33",  # a rename, same lastmod
        "UPDATE sitemap_products SET published = 0 WHERE id = 36",  # an unpublish
        "DELETE FROM sitemap_products WHERE id = 6",
    ],
    ids=["rename", "unpublish", "delete"],
)
async def test_a_key_range_page_never_answers_304_for_changed_content(
    engine: AsyncEngine, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If-Modified-Since with the date a key-range page was sent gets a 200 once a row of
    its range is renamed, unpublished or deleted (the table's newest lastmod stays put)."""
    from sqlalchemy import text

    provider, core = _published_keyset(engine)
    now = [time.time() - 3600]  # a clock of our own, in the past (replies cap the future)
    monkeypatch.setattr(shared, "wall_clock", lambda: now[0])
    _, index = await fetch(core, "/sitemap_index.xml")
    first = child_urls(check_document(index))[0].removeprefix("https://example.com")
    assert "~" in first  # a key-range page
    etag, _, body = await _validators(core, first)  # its content first seen now
    now[0] += 5
    again, modified, _ = await _validators(core, first)
    assert again == etag and modified is not None
    assert (await fetch(core, first, if_modified_since=modified))[0].status == 304
    async with engine.begin() as conn:
        await conn.execute(text(change))
    provider.forget()  # skip the 1 s metadata reuse
    for _ in range(2):  # within the second the change was seen, and later
        reply, body2 = await fetch(core, first, if_modified_since=modified)
        assert reply.status == 200 and body2 != body  # never a 304 for changed content
        assert dict(reply.headers)["ETag"] != etag
        now[0] += 5


async def test_a_stored_key_range_page_that_changes_and_changes_back_is_stamped_anew(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A -> B -> A on a key-range page the index lists (stored), B rendered while the
    index no longer listed it (unstored): If-Modified-Since with B's date gets A whole,
    never a 304 with A's old stamp (found by the hostile review of issue 30)."""
    from sqlalchemy import text

    provider, core = _published_keyset(engine)
    now = [time.time() - 3600]
    monkeypatch.setattr(shared, "wall_clock", lambda: now[0])
    _, index = await fetch(core, "/sitemap_index.xml")
    first = child_urls(check_document(index))[0].removeprefix("https://example.com")
    _, _, a_body = await _validators(core, first)
    now[0] += 5
    async with engine.begin() as conn:
        slug = (
            await conn.execute(text("SELECT slug FROM sitemap_products WHERE id = 33"))
        ).scalar()
    try:
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE sitemap_products SET slug = 'renamed' WHERE id = 33"))
        provider.forget()
        await _validators(core, first)  # B first seen (its date is sent once it has passed)
        now[0] += 5
        _, b_modified, b_body = await _validators(core, first)
        assert b_body != a_body and b_modified is not None
        now[0] += 5
    finally:
        async with engine.begin() as conn:
            await conn.execute(
                text("UPDATE sitemap_products SET slug = :slug WHERE id = 33"), {"slug": slug}
            )
        provider.forget()
    reply, body = await fetch(core, first, if_modified_since=b_modified)
    assert reply.status == 200 and body == a_body


async def test_concurrent_conditional_requests_share_one_version_query(engine: AsyncEngine) -> None:
    """Thirty concurrent revalidations after metadata_ttl run one aggregate query, not
    thirty full-table checksums."""

    core = _core(engine, max_urls_per_page=50_000)
    etag, _, _ = await _validators(core, "/sitemap.xml")
    assert etag
    provider = core.config.resolved_sections[0].provider
    provider.forget()  # type: ignore[attr-defined]  # metadata_ttl has passed
    with recorded_statements(engine) as statements:
        statuses = await revalidated_together(core, "/sitemap.xml", etag)
    summaries = [each for each in statements if "count(" in each.lower()]
    assert statuses == [304] * 30
    assert len(summaries) == 1, summaries


async def test_key_range_pages_the_index_lists_are_stored_made_up_ones_are_not(
    engine: AsyncEngine,
) -> None:
    """A crawler's second pass over a keyset section is served from the store (issue 24,
    item 3); a range nobody listed is rendered and never kept (any number can be named)."""

    provider, core = _published_keyset(engine, renders=Renders(ttl=60))
    _, index = await fetch(core, "/sitemap_index.xml")
    pages = [url.removeprefix("https://example.com") for url in child_urls(check_document(index))]
    assert len(pages) > 1 and all("~" in page for page in pages)
    first_pass = [await fetch(core, page) for page in pages]
    with recorded_statements(engine) as row_reads:
        second_pass = [await fetch(core, page) for page in pages]
        assert [body for _, body in second_pass] == [body for _, body in first_pass]
        assert all(reply.cache == "hit" for reply, _ in second_pass)
        assert row_reads == []  # nothing read: every page from the store
        name, token = pages[0].rsplit("~", 1)
        made_up = f"{name}~{encode_key_range(3, 40)}.xml"  # a range of our own making
        assert made_up not in pages
        first, body = await fetch(core, made_up)
        assert first.status == 200 and b"<url>" in body
        reply2, _ = await fetch(core, made_up)
        assert reply2.cache != "hit"  # never stored
    await core.aclose()


async def test_a_separator_moved_between_two_columns_changes_the_version(
    engine: AsyncEngine,
) -> None:
    """('tea|green', 'sencha') -> ('tea', 'green|sencha'): the URL changes, so must the
    version (PostgreSQL joined the columns' texts with '|' and hashed them alike; hostile
    review of issue 30, F4)."""
    from sqlalchemy import text

    pairs = Table(
        "sitemap_pairs",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("category", String, nullable=False),
        Column("slug", String, nullable=False),
    )
    async with engine.begin() as conn:
        await conn.run_sync(pairs.metadata.create_all)
        await conn.execute(insert(pairs), [{"id": 1, "category": "tea|green", "slug": "sencha"}])
    try:
        provider = SQLAlchemyProvider(
            engine, pairs, key="id", location="/{category}/{slug}", metadata_ttl=0
        )
        before = await provider.version()
        async with engine.begin() as conn:
            await conn.execute(
                text("UPDATE sitemap_pairs SET category = 'tea', slug = 'green|sencha'")
            )
        after = await provider.version()
        assert before.token != after.token
    finally:
        async with engine.begin() as conn:
            await conn.run_sync(pairs.metadata.drop_all)


async def test_a_key_range_page_is_validated_by_its_own_rows_not_the_whole_table(
    engine: AsyncEngine,
) -> None:
    """A crawler revalidating a key-range page costs that range, not a full-table
    checksum (issue 23, item 2): every query of the conditional GET is bounded by the
    page's keys, it answers 304, and a change elsewhere in the table leaves it alone while
    a change inside its range does not."""
    from sqlalchemy import text

    provider, core = _published_keyset(engine)
    _, index = await fetch(core, "/sitemap_index.xml")
    pages = [url.removeprefix("https://example.com") for url in child_urls(check_document(index))]
    first, last = pages[0], pages[-1]
    etag, _, _ = await _validators(core, first)
    assert etag
    provider.forget()
    with recorded_statements(engine) as statements:
        reply, _ = await fetch(core, first, if_none_match=etag)
    assert reply.status == 304
    assert statements and all("sitemap_rows.id <=" in each for each in statements), statements
    last_etag, _, _ = await _validators(core, last)
    assert last_etag
    async with engine.begin() as conn:  # a row of the last page only
        await conn.execute(text("UPDATE sitemap_products SET slug = 'moved' WHERE id = 7035"))
    provider.forget()
    assert (await fetch(core, first, if_none_match=etag))[0].status == 304
    assert (await fetch(core, last, if_none_match=last_etag))[0].status == 200


async def test_concurrent_revalidations_of_a_key_range_page_share_one_range_query(
    engine: AsyncEngine,
) -> None:
    """Thirty concurrent conditional GETs of a key-range page past metadata_ttl run one
    aggregate over that range, and no full-table one (issue 23: thirty checksums)."""
    provider, core = _published_keyset(engine)
    _, index = await fetch(core, "/sitemap_index.xml")
    page = child_urls(check_document(index))[1].removeprefix("https://example.com")
    etag, _, _ = await _validators(core, page)
    assert etag
    provider.forget()  # metadata_ttl has passed
    with recorded_statements(engine) as statements:
        statuses = await revalidated_together(core, page, etag)
    assert statuses == [304] * 30
    assert len(statements) == 1 and "sitemap_rows.id <=" in statements[0], statements


async def test_a_deploy_that_changes_to_entry_changes_the_version(engine: AsyncEngine) -> None:
    """The same rows through another ``to_entry`` (or location function) are other
    documents: other versions, so no ETag, stored render or shared plan of the old code
    answers for the new (hostile review of issue 23: a fleet served the old URLs)."""

    def old(row: Any) -> str:
        return f"/p//{row.id}"

    def new(row: Any) -> str:
        return f"/p/{'x' * 200}/{row.id}"

    def also_old(row: Any) -> str:
        return f"/p//{row.id}"

    async def token(**mode: Any) -> str | None:
        provider = SQLAlchemyProvider(engine, products, key="id", **mode)
        return (await provider.version()).token

    assert await token(to_entry=old) != await token(to_entry=new)
    assert await token(to_entry=old) == await token(to_entry=also_old)  # the same code
    assert await token(location=old) != await token(location=new)


async def test_a_case_only_rename_in_a_case_insensitive_column_changes_the_version(
    engine: AsyncEngine,
) -> None:
    """'Apple' -> 'apple' in a column whose collation calls them equal: the URL changes, so
    must the version. The row hash must read bytes, never the column's collation (the
    collation-aware hashtext family would hash both spellings alike)."""
    from sqlalchemy import text

    if engine.dialect.name != "postgresql":
        pytest.skip("nondeterministic collations are PostgreSQL's")
    async with engine.begin() as conn:
        await conn.execute(text("DROP TABLE IF EXISTS sitemap_folded"))
        await conn.execute(
            text(
                "CREATE COLLATION IF NOT EXISTS sitemap_nocase "
                "(provider = icu, locale = 'und-u-ks-level2', deterministic = false)"
            )
        )
        await conn.execute(
            text(
                "CREATE TABLE sitemap_folded (id int PRIMARY KEY, slug text COLLATE sitemap_nocase)"
            )
        )
        await conn.execute(text("INSERT INTO sitemap_folded VALUES (1, 'Apple')"))
    folded = Table(
        "sitemap_folded",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("slug", String, nullable=False),
    )
    try:
        provider = SQLAlchemyProvider(engine, folded, key="id", location="/{slug}", metadata_ttl=0)
        before = await provider.version()
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE sitemap_folded SET slug = 'apple'"))
        provider.forget()
        assert (await provider.version()).token != before.token
    finally:
        async with engine.begin() as conn:
            await conn.execute(text("DROP TABLE sitemap_folded"))


@pytest.mark.parametrize("location", ["/products/{slug}", "function"])
async def test_a_column_no_entry_reads_leaves_the_version_alone(
    engine: AsyncEngine, location: str
) -> None:
    """With a location template the checksum covers what the entries read (key, the
    template's columns, lastmod): an update of another column (``published`` here; a stock
    count on a shop) writes the same bytes and keeps the version, a rename moves it. A
    location function may read any column: there every column counts."""
    from sqlalchemy import text

    how = (lambda row: f"/products/{row.slug}") if location == "function" else location
    provider = SQLAlchemyProvider(
        engine, products, key="id", location=how, lastmod="updated_at", metadata_ttl=0
    )
    tokens = [(await provider.version()).token]
    for change in ("published = 1 - published", "slug = 'renamed'"):
        async with engine.begin() as conn:
            await conn.execute(text(f"UPDATE sitemap_products SET {change} WHERE id = 21"))
        provider.forget()
        tokens.append((await provider.version()).token)
    assert tokens[2] != tokens[1]
    assert (tokens[1] == tokens[0]) == (location != "function")


@pytest.mark.parametrize("stored", ["garbage", "0000-00-00 00:00:00", "2024-13-45 00:00:00"])
@pytest.mark.parametrize("mode", ["location", "to_entry"])
async def test_a_value_its_column_type_cannot_read_costs_only_its_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, stored: str, mode: str
) -> None:
    """SQLite keeps any value in a DATETIME column (a MySQL zero date from an import, a
    text): SQLAlchemy cannot read such a row. That row alone is left out, logged with its
    key; the section's index, pages and version are served with every other row."""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'typed.sqlite3'}")
    table = Table(
        "typed",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("slug", String, nullable=False),
        Column("updated_at", DateTime, nullable=False),
    )
    async with engine.begin() as conn:
        await conn.run_sync(table.metadata.create_all)
        await conn.execute(
            insert(table),
            [
                {"id": i, "slug": f"p{i}", "updated_at": START + timedelta(hours=i)}
                for i in range(1, 31)
            ],
        )
        await conn.execute(text("UPDATE typed SET updated_at = :v WHERE id = 7"), {"v": stored})
    if mode == "location":
        provider = SQLAlchemyProvider(
            engine, table, key="id", location="/p/{slug}", lastmod="updated_at"
        )
    else:
        provider = SQLAlchemyProvider(
            engine,
            table,
            key="id",
            lastmod="updated_at",
            to_entry=lambda row: {"loc": f"/p/{row.slug}", "lastmod": row.updated_at},
        )
    core = make_core({"p": provider}, max_urls_per_page=10)
    try:
        urls = await crawled_urls(core)
        assert sorted(urls) == sorted(f"https://example.com/p/p{i}" for i in range(1, 31) if i != 7)
        assert "{'id': 7}" in caplog.text or "'id': 7" in caplog.text, caplog.text
    finally:
        await core.aclose()
        await engine.dispose()


async def test_a_text_that_is_not_utf8_costs_only_its_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLite keeps bytes that are no UTF-8 in a TEXT column (``CAST(X'ff41' AS TEXT)``),
    which its driver cannot read: that row alone is left out and logged. (Here with a
    revision column: the default checksum's SQLite function cannot take such a text,
    and the section fails, logged as "user-defined function raised exception".)"""
    from sqlalchemy import text

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'bytes.sqlite3'}")
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
        await conn.execute(insert(products), _rows()[:40])
        await conn.execute(
            text("UPDATE sitemap_products SET slug = CAST(X'ff41' AS TEXT) WHERE id = 9")
        )
    provider = SQLAlchemyProvider(
        engine, products, key="id", location="/p/{slug}", version_column="published"
    )
    core = make_core({"p": provider}, max_urls_per_page=10)
    try:
        urls = await crawled_urls(core)
        assert sorted(urls) == sorted(f"https://example.com/p/p{i}" for i in range(1, 41) if i != 3)
        assert "'id': 9" in caplog.text, caplog.text
    finally:
        await core.aclose()
        await engine.dispose()
