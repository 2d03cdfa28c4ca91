"""Plans where the data lives (issue 23, item 1): SQL key ranges sized by the database.

A column-mode section is planned from one grouped query: no row is read for the index
unless it holds a character that writing may change, and then only its range is. What
must hold whatever the data: no page outgrows the byte or URL budget, every listed row
appears exactly once, and the URLs are those the row-by-row plan serves.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, insert
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._providers import sql_ranges
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.sql import recorded_statements, row_by_row

metadata = MetaData()
items = Table(
    "range_items",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=True),
    Column("updated_at", DateTime, nullable=True),
)
START = datetime(2025, 3, 1)
#: Each example builds a database: slow, and large in data.
DATABASE_EXAMPLES: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
#: Slugs: mostly plain, with what percent-encoding, XML escaping, dot segments and
#: NULLs do to a location's length.
SLUGS = st.one_of(
    st.text("abcXYZ019-._~/", min_size=0, max_size=30),
    st.text("ab&'\"<> %#?é\u4e2d😀.", min_size=1, max_size=12),
    st.sampled_from(["..", ".", "a/../b", "x" * 300]),
    st.none(),
)


async def _engine(folder: str) -> AsyncEngine:
    engine = create_async_engine(f"sqlite+aiosqlite:///{Path(folder) / 'ranges.sqlite3'}")
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    return engine


def _core(provider: Any, max_urls: int, max_bytes: int) -> SitemapCore:
    return make_core({"items": provider}, max_urls_per_page=max_urls, max_bytes_per_page=max_bytes)


async def _crawl(core: SitemapCore, max_bytes: int) -> list[str]:
    """Every URL the index's pages list, checking each page against the budget."""
    reply, body = await fetch(core, "/sitemap_index.xml")
    if reply.status == 404:
        return []
    assert reply.status == 200
    urls: list[str] = []
    lastmods = dict(re.findall(rb"<loc>([^<]+)</loc><lastmod>([^<]+)</lastmod>", body))
    for child in child_urls(check_document(body)):
        reply, page = await fetch(core, child.removeprefix("https://example.com"))
        assert reply.status == 200, child
        assert len(page) <= max_bytes, (child, len(page))
        urls.extend(page_urls(check_document(page)))
        # The index never says a page is older than what it lists.
        newest = max(map(_instant, re.findall(rb"<lastmod>([^<]+)</lastmod>", page)), default=None)
        listed = lastmods.get(child.encode())
        assert newest is None or (listed is not None and _instant(listed) >= newest), child
    await core.aclose()
    return urls


@contextmanager
def _in_halves(halves: bool) -> Iterator[None]:
    """Every table measured in two halves at once (as tables of 200,000 rows are), or
    none."""
    kept = sql_ranges.PARALLEL_ROWS
    sql_ranges.PARALLEL_ROWS = 1 if halves else 10**12
    try:
        yield
    finally:
        sql_ranges.PARALLEL_ROWS = kept


def _instant(text: bytes) -> datetime:
    return datetime.fromisoformat(text.decode())


def _column_provider(engine: AsyncEngine) -> SQLAlchemyProvider:
    return SQLAlchemyProvider(
        engine,
        items,
        key="id",
        location="/p/{slug}/{id}",
        lastmod="updated_at",
        changefreq="daily",
    )


def _entry_provider(engine: AsyncEngine) -> SQLAlchemyProvider:
    def to_entry(row: Any) -> Any:
        if row.slug is None:
            return None
        slug = quote(row.slug, safe="/:@!$&'()*+,;=~")  # as a template fills its fields
        return {"loc": f"/p/{slug}/{row.id}", "lastmod": row.updated_at, "changefreq": "daily"}

    return _ByRows(engine, items, key="id", lastmod="updated_at", to_entry=to_entry)


_ByRows = row_by_row(SQLAlchemyProvider)


@pytest.mark.slow
@settings(max_examples=40, **DATABASE_EXAMPLES)
@given(
    count=st.integers(0, 300),
    slugs=st.lists(SLUGS, min_size=1, max_size=8),
    minutes=st.lists(st.one_of(st.none(), st.integers(0, 10**6)), min_size=1, max_size=5),
    max_urls=st.integers(20, 60),
    max_bytes=st.sampled_from([1024, 2048, 6000, 10**6]),
    halves=st.booleans(),
)
def test_pages_planned_by_the_database_hold_every_row_once_within_budget(
    count: int,
    slugs: list[str | None],
    minutes: list[int | None],
    max_urls: int,
    max_bytes: int,
    halves: bool,
) -> None:
    """Whatever the rows hold, the database's plan never makes an overfull page, lists
    each URL once, and lists exactly the rows that give a valid location (the URLs the
    row-by-row plan of the same rows serves)."""

    async def check() -> None:
        with tempfile.TemporaryDirectory() as folder:
            engine = await _engine(folder)
            rows = [
                {
                    "id": 2 * place + 1,
                    "slug": slug
                    if (slug := slugs[place % len(slugs)]) is None
                    else slug * (place % 3),
                    "updated_at": None
                    if (m := minutes[place % len(minutes)]) is None
                    else START + timedelta(minutes=m + place),
                }
                for place in range(count)
            ]
            if rows:
                async with engine.begin() as conn:
                    await conn.execute(insert(items), rows)
            provider = _column_provider(engine)
            stats = await provider.range_stats(1)
            assert stats is not None and sum(each.rows for each in stats.ranges) == len(rows)
            try:
                planned = await _crawl(_core(provider, max_urls, max_bytes), max_bytes)
                measured = await _crawl(
                    _core(_entry_provider(engine), max_urls, max_bytes), max_bytes
                )
            finally:
                await engine.dispose()
            assert len(planned) == len(set(planned))
            assert sorted(planned) == sorted(measured)

    with _in_halves(halves):
        asyncio.run(check())


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_index_of_plain_rows_reads_no_row(tmp_path: Path, anyio_backend: str) -> None:
    """The index of 5,000 plain rows is one grouped query (and the version's aggregate):
    no statement reads rows one by one; a range holding an odd row is read alone."""
    engine = await _engine(str(tmp_path))
    rows = [{"id": i, "slug": f"item-{i}", "updated_at": START} for i in range(1, 5001)]
    rows[2500]["slug"] = "caf\u00e9 & cr\u00e8me"  # one odd row: its range is measured
    async with engine.begin() as conn:
        await conn.execute(insert(items), rows)
    core = _core(_column_provider(engine), 1000, 10 * 1024 * 1024)
    try:
        with recorded_statements(engine) as statements:
            reply, body = await fetch(core, "/sitemap_index.xml")
    finally:
        await core.aclose()
        await engine.dispose()
    assert reply.status == 200 and len(child_urls(check_document(body))) == 6  # 990 a page
    probes = ("PRAGMA database_list", "SELECT type, sql FROM sqlite_master")  # once (sql_commits)
    row_reads = [e for e in statements if "count(" not in e.lower() and not e.startswith(probes)]
    assert len(row_reads) == 1, row_reads  # the odd row's range, bounded by its keys
    assert "sitemap_rows.id > ? AND sitemap_rows.id <= ?" in row_reads[0]


revisioned = Table(
    "revisioned_items",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=True),
    Column("updated_at", DateTime, nullable=True),
    Column("revision", Integer, nullable=False, index=True),
)
#: What a write does: a rename, a new row, a deleted row, a location gone NULL.
WRITES = st.tuples(st.sampled_from(["rename", "insert", "delete", "null"]), st.integers(0, 10**6))


def _revisioned_provider(engine: AsyncEngine) -> SQLAlchemyProvider:
    return SQLAlchemyProvider(
        engine,
        revisioned,
        key="id",
        location="/p/{slug}/{id}",
        lastmod="updated_at",
        version_column="revision",
        metadata_ttl=0,
    )


class _Table:
    """The revisioned table and its sequence: every insert and update takes the next."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.revision = 0
        self.ids: list[int] = []

    def next(self) -> int:
        self.revision += 1
        return self.revision

    async def fill(self, count: int) -> None:
        rows = [
            {"id": 3 * i, "slug": f"s{i}", "updated_at": START, "revision": self.next()}
            for i in range(1, count + 1)
        ]
        self.ids = list(range(3, 3 * count + 1, 3))
        if rows:
            async with self.engine.begin() as conn:
                await conn.execute(insert(revisioned), rows)

    async def write(self, kind: str, number: int) -> None:
        table = revisioned
        async with self.engine.begin() as conn:
            if kind == "insert" or not self.ids:
                key = number * 3 + 1 + number % 2  # between the existing keys, or past them
                if key not in self.ids:
                    row = {
                        "id": key,
                        "slug": f"n{number}",
                        "updated_at": START,
                        "revision": self.next(),
                    }
                    await conn.execute(insert(table), [row])
                    self.ids.append(key)
                return
            key = self.ids[number % len(self.ids)]
            if kind == "delete":
                await conn.execute(table.delete().where(table.c.id == key))
                self.ids.remove(key)
                return
            slug = None if kind == "null" else f"r{number}"
            changed = START + timedelta(minutes=number)
            await conn.execute(
                table.update()
                .where(table.c.id == key)
                .values(slug=slug, updated_at=changed, revision=self.next())
            )


@pytest.mark.slow
@settings(max_examples=30, **DATABASE_EXAMPLES)
@given(
    count=st.integers(0, 300),
    writes=st.lists(WRITES, min_size=1, max_size=6),
    max_urls=st.integers(20, 60),
    halves=st.booleans(),
)
def test_ranges_measured_again_only_where_rows_changed_serve_what_a_fresh_plan_serves(
    count: int, writes: list[tuple[str, int]], max_urls: int, halves: bool
) -> None:
    """With a revision column the next plan measures only the ranges holding changed
    rows (issue 23, item 3). After every write, a crawl of the kept plan lists exactly the
    URLs a crawl of a fresh provider lists, each once, no page over budget and no listed
    page answering 404."""

    async def check() -> None:
        with tempfile.TemporaryDirectory() as folder:
            engine = await _engine(folder)
            table = _Table(engine)
            await table.fill(count)
            provider = _revisioned_provider(engine)
            try:
                await fetch(_core(provider, max_urls, 4096), "/sitemap_index.xml")
                for kind, number in writes:
                    await table.write(kind, number)
                    kept = await _crawl(_core(provider, max_urls, 4096), 4096)
                    fresh = await _crawl(_core(_revisioned_provider(engine), max_urls, 4096), 4096)
                    assert len(kept) == len(set(kept))
                    assert sorted(kept) == sorted(fresh)
            finally:
                await engine.dispose()

    with _in_halves(halves):
        asyncio.run(check())


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_after_one_write_the_next_index_measures_one_range(
    tmp_path: Path, anyio_backend: str
) -> None:
    """5,000 rows with a revision column: after one row's UPDATE the index reads the
    changed keys (by revision) and measures the one range holding them, nothing else."""
    engine = await _engine(str(tmp_path))
    table = _Table(engine)
    await table.fill(5000)
    provider = _revisioned_provider(engine)
    core = _core(provider, 1000, 10 * 1024 * 1024)
    _, before = await fetch(core, "/sitemap_index.xml")
    await table.write("rename", 2500)
    try:
        with recorded_statements(engine) as statements:
            reply, after = await fetch(core, "/sitemap_index.xml")
    finally:
        await core.aclose()
        await engine.dispose()
    assert reply.status == 200 and after != before  # the changed page's lastmod moved
    assert len(child_urls(check_document(after))) == len(child_urls(check_document(before)))
    measured = [each for each in statements if "row_number()" in each]
    assert len(measured) == 1 and "> ? AND" in measured[0], statements
    changed = [each for each in statements if "revision > ?" in each]
    # No ORDER BY key: SQLite would scan the table in key order instead of the index.
    assert changed and all("ORDER BY" not in each for each in changed), statements


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_languages_over_a_keyset_section_page_by_key_range(
    tmp_path: Path, anyio_backend: str
) -> None:
    """Languages over a SQL section keep its key ranges (issue 23, item 5): the index
    lists key-range pages, every row's languages are on one page, a deep page reads only
    its own range, and the crawl lists every URL once."""
    from sitemap_middleware import Languages, Section

    engine = await _engine(str(tmp_path))
    rows = [{"id": i, "slug": f"item-{i}", "updated_at": START} for i in range(1, 1001)]
    async with engine.begin() as conn:
        await conn.execute(insert(items), rows)
    languages = Languages(codes=("en", "de", "fr"), x_default="en")
    provider = _column_provider(engine)
    section = Section(provider, languages=languages, max_urls=100)  # 33 rows a page
    core = make_core({"items": section})
    reply, index = await fetch(core, "/sitemap_index.xml")
    pages = [url.removeprefix("https://example.com") for url in child_urls(check_document(index))]
    assert reply.status == 200 and len(pages) > 20 and all("~" in page for page in pages)
    with recorded_statements(engine) as statements:
        reply, deep = await fetch(core, pages[-2])
    assert reply.status == 200
    assert all("sitemap_rows.id <= ?" in each for each in statements), statements
    urls: list[str] = []
    for page in pages:
        _, body = await fetch(core, page)
        listed = page_urls(check_document(body))
        assert len(listed) <= 100 and len(listed) % 3 == 0  # whole rows, every language
        urls.extend(listed)
    await core.aclose()
    await engine.dispose()
    assert len(urls) == len(set(urls)) == 3000


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_fleet_plans_a_section_once(tmp_path: Path, anyio_backend: str) -> None:
    """With a Redis store, a new instance's first index reads the plan another instance
    made for the same version (issue 23, item 4): no planning pass, no grouped query, the
    same index; after a write the version differs and the plan is made again."""
    import os
    import uuid

    from sitemap_middleware import Renders
    from sitemap_middleware.stores import RedisRenderStore

    url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if not url:
        pytest.skip("SITEMAP_TEST_REDIS_URL is not set: no Redis server (.ci/run starts one)")
    engine = await _engine(str(tmp_path))
    table = _Table(engine)
    await table.fill(3000)
    prefix = f"test-{uuid.uuid4().hex}:"

    def instance() -> SitemapCore:
        config = SitemapConfig(
            base_url="https://example.com",
            sections={"items": _revisioned_provider(engine)},
            max_urls_per_page=1000,
            renders=Renders(store=RedisRenderStore(url, prefix=prefix)),
        )
        return SitemapCore(config)

    first, second = instance(), instance()
    try:
        _, planned = await fetch(first, "/sitemap_index.xml")
        with recorded_statements(engine) as statements:
            _, shared = await fetch(second, "/sitemap_index.xml")
        assert shared == planned and len(child_urls(check_document(shared))) == 4
        assert second._documents.plans.passes == 0
        assert not [each for each in statements if "row_number()" in each], statements
        await table.write("insert", 10**6)  # a row past the others: a new version
        _, again = await fetch(second, "/sitemap_index.xml")
        assert second._documents.plans.passes == 1 and again != planned
    finally:
        await first.aclose()
        await second.aclose()
        await engine.dispose()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_restarted_instance_reads_its_kept_plan(tmp_path: Path, anyio_backend: str) -> None:
    """Without Redis, ``Renders(plan_directory=...)`` keeps each plan in a file: a new
    process (a new core and store) on the same folder serves its first index from the
    kept plan (no planning pass, no grouped query, the same index); after a write the
    version differs and the plan is made again (issue 23, item 4)."""
    from sitemap_middleware import Renders

    engine = await _engine(str(tmp_path))
    table = _Table(engine)
    await table.fill(3000)

    def instance() -> SitemapCore:
        config = SitemapConfig(
            base_url="https://example.com",
            sections={"items": _revisioned_provider(engine)},
            max_urls_per_page=1000,
            renders=Renders(plan_directory=tmp_path / "plans"),
        )
        return SitemapCore(config)

    first = instance()
    try:
        _, planned = await fetch(first, "/sitemap_index.xml")
        assert first._documents.plans.passes == 1
    finally:
        await first.aclose()
    restarted = instance()
    try:
        with recorded_statements(engine) as statements:
            _, kept = await fetch(restarted, "/sitemap_index.xml")
        assert kept == planned and len(child_urls(check_document(kept))) == 4
        assert restarted._documents.plans.passes == 0
        assert not [each for each in statements if "row_number()" in each], statements
        await table.write("insert", 10**6)  # a row past the others: a new version
        _, again = await fetch(restarted, "/sitemap_index.xml")
        assert restarted._documents.plans.passes == 1 and again != planned
    finally:
        await restarted.aclose()
        await engine.dispose()


# -- found by the hostile review of issue 23 ------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("slug", "ab{i}\x00" + "&" * 50),  # GLOB stops at a NUL; the bytes do not
        ("num", "{i}x&" * 20),  # text in an INTEGER column (SQLite's type affinity)
        ("slug", b"ab" * 30),  # a blob in a TEXT column: Python writes b'...'
        ("num", 1.0000000000000002),  # a REAL in an INTEGER column: 17 digits in Python
    ],
    ids=["nul", "text-in-integer", "blob-in-text", "real-in-integer"],
)
async def test_values_sqlite_stores_otherwise_than_declared_are_measured(
    tmp_path: Path, anyio_backend: str, column: str, value: object
) -> None:
    """What SQLite holds is not always what the column declares: such rows are measured
    row by row, so every URL is served (the plan from the database cut 127 of 199)."""
    mixed = Table(
        "mixed",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("slug", String),
        Column("num", Integer),
    )
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'mixed.sqlite3'}")
    async with engine.begin() as conn:
        await conn.run_sync(mixed.metadata.create_all)
        for i in range(1, 200):
            held = value.format(i=i) if isinstance(value, str) else value
            row = {"slug": "a", "num": 1, column: held}
            await conn.exec_driver_sql(
                "INSERT INTO mixed (id, slug, num) VALUES (?, ?, ?)", (i, row["slug"], row["num"])
            )
    location = "/p/{slug}/{id}" if column == "slug" else "/p/{num}/{id}"
    provider = SQLAlchemyProvider(engine, mixed, key="id", location=location)
    try:
        urls = await _crawl(_core(provider, 40, 3000), 3000)
    finally:
        await engine.dispose()
    assert len(urls) == len(set(urls)) == 199


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_page_lastmod_from_text_with_other_offsets_is_the_latest_instant(
    tmp_path: Path, anyio_backend: str
) -> None:
    """A lastmod column of text with mixed offsets: the index gives each page its latest
    instant, never the greatest string (23:00-05:00 is after 23:30+00:00)."""
    texts = Table(
        "texts",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("slug", String),
        Column("updated", String),
    )
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'texts.sqlite3'}")
    rows = [
        {"id": i, "slug": f"s{i}", "updated": "2024-01-01T23:30:00+00:00"} for i in range(1, 300)
    ]
    rows[1]["updated"] = "2024-01-01T23:00:00-05:00"
    async with engine.begin() as conn:
        await conn.run_sync(texts.metadata.create_all)
        await conn.execute(insert(texts), rows)
    provider = SQLAlchemyProvider(engine, texts, key="id", location="/p/{slug}", lastmod="updated")
    try:
        urls = await _crawl(_core(provider, 100, 10**6), 10**6)  # (checks page lastmods)
        _, index = await fetch(_core(provider, 100, 10**6), "/sitemap_index.xml")
    finally:
        await engine.dispose()
    assert len(urls) == 299
    assert b"<lastmod>2024-01-01T23:00:00-05:00</lastmod>" in index


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_postgresql_enums_and_nondeterministic_collations_are_planned(
    anyio_backend: str,
) -> None:
    """A native ENUM, or text under a nondeterministic collation, in a location template
    plans like any text on PostgreSQL (both answered 503: no !~ for them)."""
    import os

    from sqlalchemy import Enum, text

    url = os.environ.get("SITEMAP_TEST_POSTGRES_URL")
    if not url:
        pytest.skip(
            "SITEMAP_TEST_POSTGRES_URL is not set: no PostgreSQL server (.ci/run starts one)"
        )
    kinds = MetaData()
    enum_table = Table(
        "range_enum",
        kinds,
        Column("id", Integer, primary_key=True),
        Column("kind", Enum("book", "film", name="range_kind")),
        Column("slug", String),
    )
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("DROP TABLE IF EXISTS range_enum, range_ci"))
        await conn.execute(text("DROP TYPE IF EXISTS range_kind"))
        await conn.run_sync(kinds.create_all)
        await conn.execute(
            insert(enum_table), [{"id": i, "kind": "book", "slug": f"s{i}"} for i in range(1, 101)]
        )
        await conn.execute(
            text(
                "CREATE COLLATION IF NOT EXISTS range_ci_collation "
                "(provider = icu, locale = 'und-u-ks-level2', deterministic = false)"
            )
        )
        await conn.execute(
            text(
                "CREATE TABLE range_ci (id integer PRIMARY KEY, slug text COLLATE range_ci_collation)"
            )
        )
        await conn.execute(
            text("INSERT INTO range_ci SELECT g, 'Slug' || g FROM generate_series(1, 100) g")
        )
    ci_table = Table(
        "range_ci", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String)
    )
    try:
        for source, location in ((enum_table, "/{kind}/{slug}"), (ci_table, "/p/{slug}")):
            provider = SQLAlchemyProvider(engine, source, key="id", location=location)
            urls = await _crawl(_core(provider, 40, 10**6), 10**6)
            assert len(urls) == len(set(urls)) == 100
    finally:
        async with engine.begin() as conn:
            await conn.execute(text("DROP TABLE IF EXISTS range_enum, range_ci"))
            await conn.execute(text("DROP TYPE IF EXISTS range_kind"))
        await engine.dispose()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("budget", ["urls", "bytes"])
async def test_a_row_whose_languages_outgrow_a_page_is_served_by_numbered_pages(
    tmp_path: Path, anyio_backend: str, budget: str
) -> None:
    """40 languages of a row on pages of 10 URLs (or of 100,000 bytes) cannot share a page:
    the section pages by number, and every URL is served once (hostile review of issue
    23: 50 of 200 served, pages named (1, 1] answering 404)."""
    from sitemap_middleware import Languages, Section

    engine = await _engine(str(tmp_path))
    async with engine.begin() as conn:
        await conn.execute(
            insert(items), [{"id": i, "slug": f"s{i}", "updated_at": START} for i in range(1, 6)]
        )
    codes = ["a" + chr(97 + i // 26) + chr(97 + i % 26) for i in range(40)]
    max_urls, max_bytes = (10, 10**6) if budget == "urls" else (50_000, 100_000)
    section = Section(_column_provider(engine), languages=Languages(codes=codes), max_urls=max_urls)
    config = SitemapConfig(
        base_url="https://example.com", sections={"items": section}, max_bytes_per_page=max_bytes
    )
    try:
        urls = await _crawl(SitemapCore(config), max_bytes)
    finally:
        await engine.dispose()
    assert len(urls) == len(set(urls)) == 5 * 40


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_numbered_page_of_a_keyed_plan_whose_range_grew_is_capped(
    tmp_path: Path, anyio_backend: str
) -> None:
    """Rows inserted into page 1's key range after the index: its numbered name serves
    what fits, as its key-range name does, never a response aborted mid-body."""
    engine = await _engine(str(tmp_path))
    async with engine.begin() as conn:
        await conn.execute(
            insert(items),
            [{"id": 10 * i, "slug": f"s{i}", "updated_at": START} for i in range(1, 301)],
        )
    provider = SQLAlchemyProvider(
        engine, items, key="id", to_entry=lambda row: f"/p/{row.slug}", metadata_ttl=60
    )
    core = _core(provider, 100, 10**6)
    try:
        await fetch(core, "/sitemap_index.xml")  # the plan: 99 rows a page
        async with engine.begin() as conn:
            await conn.execute(
                insert(items),
                [{"id": i, "slug": f"new{i}", "updated_at": START} for i in range(1, 8)],
            )
        reply, body = await fetch(core, "/sitemap-items-1.xml")
    finally:
        await core.aclose()
        await engine.dispose()
    assert reply.status == 200 and len(page_urls(check_document(body))) == 100


async def _surrogate_keyed() -> Any:
    for place, key in enumerate([*(f"a{i:03d}" for i in range(9)), "b\ud800"]):
        yield key, f"/k/{place}"


class _SurrogateKeys:
    async def version(self) -> Any:
        from sitemap_middleware.providers import ProviderVersion

        return ProviderVersion(token="v1")

    async def entries(self) -> Any:
        async for _, item in _surrogate_keyed():
            yield item

    def keyed(self, after: Any, upto: Any) -> Any:
        async def pairs() -> Any:
            async for key, item in _surrogate_keyed():
                if (after is None or key > after) and (upto is None or key <= upto):
                    yield key, item

        return pairs()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_key_no_page_name_can_carry_pages_by_number(anyio_backend: str) -> None:
    """A string key holding a lone surrogate cannot be written in a page name (nor in a
    shared plan): its page is numbered, not a crash (hostile review of issue 23)."""
    from sitemap_middleware import Section

    core = make_core({"k": Section(_SurrogateKeys(), max_urls=4)})
    urls = await _crawl(core, 10**6)
    assert len(urls) == len(set(urls)) == 10
