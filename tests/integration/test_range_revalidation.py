"""No stale 304 for a key-range page validated by its own rows (issue 23, item 2).

Hypothesis drives a SQLite table through renames, deletes, inserts at lower keys and
lastmods that move backwards, with the default checksum version and with a revision
column (also with a row count a trigger keeps, ``row_count=``), while a crawler revalidates the pages the index lists with If-None-Match or
If-Modified-Since. Whenever a page answers 304, the page as served now is exactly the
body the crawler holds; while nothing was written, its ETag stays.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    insert,
    select,
    text,
)

from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine import shared
from sitemap_middleware._sansio.paging import decode_key_range
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.core import SitemapCore, fetch, header
from tests.harness.documents import check_document, child_urls, page_urls

START = datetime(2024, 1, 1)
metadata = MetaData()
rows_table = Table(
    "revalidated",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    Column("revision", Integer, nullable=False),
)
totals = Table("revalidated_totals", metadata, Column("total", Integer, nullable=False))
COUNTED = [  # the trigger recipe of docs/how-to/big-tables.md
    "CREATE TRIGGER counted_in AFTER INSERT ON revalidated BEGIN "
    "UPDATE revalidated_totals SET total = total + 1; END",
    "CREATE TRIGGER counted_out AFTER DELETE ON revalidated BEGIN "
    "UPDATE revalidated_totals SET total = total - 1; END",
]


# A factory of a state machine class: mccabe counts every rule's branches in it.
def _machine(folder: Path, mode: str) -> type[RuleBasedStateMachine]:  # noqa: C901
    class Crawl(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            path = folder / f"t{id(self)}.sqlite3"
            path.unlink(missing_ok=True)
            self.engine = create_engine(f"sqlite:///{path}")
            metadata.create_all(self.engine)
            self.sequence = 0
            with self.engine.begin() as conn:
                conn.execute(insert(totals).values(total=0))
                for trigger in COUNTED if mode == "counted" else ():
                    conn.execute(text(trigger))
                conn.execute(
                    insert(rows_table),
                    [self._row(10 * i, f"s{i}", START + timedelta(hours=i)) for i in range(1, 13)],
                )
            provider = SQLAlchemyProvider(
                self.engine,
                rows_table,
                key="id",
                location="/p/{slug}",
                lastmod="updated_at",
                version_column=None if mode == "checksum" else "revision",
                row_count=select(totals.c.total) if mode == "counted" else None,
                metadata_ttl=0,
            )
            config = SitemapConfig(
                base_url="https://example.com", sections={"p": provider}, max_urls_per_page=4
            )
            self.core = SitemapCore(config)
            self.now = 1_700_000_000.0
            #: page -> (body, ETag, Last-Modified, writes before) as the crawler got them
            self.held: dict[str, tuple[bytes, str, str | None, int]] = {}
            self.writes = 0

        def _row(self, key: int, slug: str, when: datetime) -> dict[str, Any]:
            self.sequence += 1
            return {"id": key, "slug": slug, "updated_at": when, "revision": self.sequence}

        def _write(self, statement: Any) -> None:
            self.writes += 1
            with self.engine.begin() as conn:
                conn.execute(statement)

        def _keys(self) -> list[int]:
            with self.engine.connect() as conn:
                return [row[0] for row in conn.execute(rows_table.select().order_by("id"))]

        def _listed(self, page: str) -> list[str]:
            after, upto = decode_key_range(page.split("~")[1].removesuffix(".xml")) or (0, 0)
            with self.engine.connect() as conn:
                found = conn.execute(rows_table.select().order_by("id")).all()
            return [
                f"https://example.com/p/{row.slug}"
                for row in found
                if (after is None or row.id > after) and row.id <= upto
            ]

        @rule(place=st.integers(0, 20), slug=st.sampled_from(["a", "b", "long-slug"]))
        def rename(self, place: int, slug: str) -> None:
            keys = self._keys()
            if keys:
                key = keys[place % len(keys)]
                update = rows_table.update().where(rows_table.c.id == key)
                self._write(
                    update.values(slug=f"{slug}{key}", revision=self._row(0, "", START)["revision"])
                )

        @rule(place=st.integers(0, 20))
        def delete(self, place: int) -> None:
            keys = self._keys()
            if len(keys) > 1:
                self._write(rows_table.delete().where(rows_table.c.id == keys[place % len(keys)]))

        @rule(key=st.integers(1, 125), hours=st.integers(-50, 50))
        def insert_or_move_back(self, key: int, hours: int) -> None:
            if key in self._keys():  # a lastmod moved backwards, the revision bumped
                update = rows_table.update().where(rows_table.c.id == key)
                when = START + timedelta(hours=hours)
                self._write(
                    update.values(updated_at=when, revision=self._row(0, "", START)["revision"])
                )
            else:
                self._write(insert(rows_table).values(**self._row(key, f"n{key}", START)))

        @rule(seconds=st.sampled_from([0.3, 1.0, 2.5]))
        def time_passes(self, seconds: float) -> None:
            self.now += seconds

        @rule(by_date=st.booleans())
        def crawl(self, by_date: bool) -> None:
            async def run() -> None:
                reply, index = await fetch(self.core, "/sitemap_index.xml")
                if reply.status != 200:
                    return
                for url in child_urls(check_document(index)):
                    page = url.removeprefix("https://example.com")
                    held = self.held.get(page)
                    headers: dict[str, str] = {}
                    if held is not None:
                        if by_date and held[2]:
                            headers["if_modified_since"] = held[2]
                        else:
                            headers["if_none_match"] = held[1]
                    reply, body = await fetch(self.core, page, **headers)
                    truth = self._listed(page)  # what the page holds now, from the table
                    if reply.status == 304:
                        assert held is not None
                        assert page_urls(check_document(held[0])) == truth, f"stale 304: {page}"
                        continue
                    assert reply.status in (200, 404), reply.status
                    if reply.status == 200:
                        assert page_urls(check_document(body)) == truth, f"stale body: {page}"
                        etag = header(reply, "ETag") or ""
                        # (a write that leaves the body as it was, a revision bumped, may
                        # move the version: a spurious 200, never a stale 304)
                        if held is not None and body == held[0] and held[3] == self.writes:
                            assert etag == held[1], f"{page}: the same body, another ETag"
                        modified = header(reply, "Last-Modified")
                        self.held[page] = (body, etag, modified, self.writes)

            original = shared.wall_clock
            shared.wall_clock = lambda: self.now
            try:
                anyio.run(run)
            finally:
                shared.wall_clock = original

        def teardown(self) -> None:
            anyio.run(self.core.aclose)
            self.engine.dispose()

    return Crawl


@pytest.mark.parametrize("mode", ["checksum", "revision", "counted"])
def test_a_key_range_page_answers_304_only_for_what_the_crawler_holds(
    tmp_path: Path, mode: str
) -> None:
    run_state_machine_as_test(
        _machine(tmp_path, mode),
        settings=settings(max_examples=25, stateful_step_count=12, deadline=None),
    )


@pytest.mark.parametrize("mode", ["checksum", "revision", "counted"])
def test_a_page_revalidated_a_second_later_is_not_304_after_a_row_goes(
    tmp_path: Path, mode: str
) -> None:
    """Found by the machine above: the rows' lastmods are ahead of the clock, so a reply
    dated them "now"; page 3, revalidated by date a second later, was sent that date,
    and its next version (row 90 deleted) got the same one: a stale 304."""
    state: Any = _machine(tmp_path, mode)()  # (its rules are not on the base type)
    try:
        state.crawl(by_date=False)
        state.time_passes(seconds=1.0)
        state.crawl(by_date=True)
        state.delete(place=8)
        state.crawl(by_date=True)
    finally:
        state.teardown()
