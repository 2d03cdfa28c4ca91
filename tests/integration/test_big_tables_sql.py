"""Every ``sql`` block of docs/how-to/big-tables.md, run as written on the database it is
for, and held to what the page says it does (a revision bumped by each write, a row
count that stays the table's or the filtered source's). The Python blocks run in
tests/test_docs.py; the SQLite revision recipe's filter rule in
test_sql_revision_recipe.py.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.docs_examples import DOCS, section
from tests.harness.sql import database_url

pytestmark = pytest.mark.anyio
PAGE = DOCS / "how-to" / "big-tables.md"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _blocks(heading: str, language: str) -> list[str]:
    text = section(PAGE, heading)
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def test_the_page_has_the_sql_blocks_these_tests_run() -> None:
    """(A block added to the page needs a test here.)"""
    assert len(re.findall(r"^```sql\n", PAGE.read_text(encoding="utf-8"), re.M)) == 4
    assert len(_blocks("Keeping the revision column bumped", "sql")) == 2
    assert len(_blocks("A row count a trigger keeps", "sql")) == 2


def test_a_category_rename_bumps_its_products_revisions(tmp_path: Path) -> None:
    """The SQLite recipe, then the page's trigger on the joined table."""
    revision_script = re.search(
        r'db\.executescript\("""(.*?)"""\)',
        section(PAGE, "Keeping the revision column bumped"),
        re.S,
    )
    assert revision_script is not None
    category_trigger = _blocks("Keeping the revision column bumped", "sql")[0]
    with sqlite3.connect(tmp_path / "shop.sqlite3") as db:
        db.executescript(revision_script[1])
        db.executescript(
            "CREATE TABLE categories (id INTEGER PRIMARY KEY, slug TEXT NOT NULL);"
            "ALTER TABLE products ADD COLUMN category_id INTEGER;"
        )
        db.executescript(category_trigger)
        db.executemany("INSERT INTO categories VALUES (?, ?)", [(1, "tea"), (2, "coffee")])
        for slug, category in [("green", 1), ("black", 1), ("espresso", 2)]:
            db.execute(
                "INSERT INTO products (slug, updated_at, category_id) VALUES (?, '2024-05-01', ?)",
                (slug, category),
            )
        before = dict(db.execute("SELECT slug, revision FROM products"))
        db.execute("UPDATE categories SET slug = 'teas' WHERE id = 1")
        after = dict(db.execute("SELECT slug, revision FROM products"))
    assert after["green"] > max(before.values()) and after["black"] > max(before.values())
    assert after["espresso"] == before["espresso"]  # (another category's: untouched)
    assert len(set(after.values())) == 3  # one revision each, from the counter


@pytest.fixture
async def postgres(tmp_path: Path) -> AsyncIterator[Any]:
    """An asyncpg connection in a schema of its own (the page's SQL names no schema)."""
    asyncpg = pytest.importorskip("asyncpg")
    url = database_url("postgresql", tmp_path).replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(url)
    schema = f"big_tables_{uuid.uuid4().hex[:8]}"
    await connection.execute(f"CREATE SCHEMA {schema}; SET search_path TO {schema}")
    try:
        yield connection
    finally:
        await connection.execute(f"DROP SCHEMA {schema} CASCADE")
        await connection.close()


async def test_the_postgresql_trigger_bumps_every_insert_and_update(postgres: Any) -> None:
    await postgres.execute(
        "CREATE TABLE products (id serial PRIMARY KEY, slug text NOT NULL, "
        "revision bigint NOT NULL DEFAULT 0)"
    )
    await postgres.execute(_blocks("Keeping the revision column bumped", "sql")[1])
    await postgres.execute("INSERT INTO products (slug) VALUES ('tea'), ('coffee')")
    await postgres.execute("UPDATE products SET slug = 'green-tea' WHERE slug = 'tea'")
    rows = await postgres.fetch("SELECT slug, revision FROM products ORDER BY id")
    assert [tuple(row) for row in rows] == [("green-tea", 3), ("coffee", 2)]


async def test_the_postgresql_row_counts_follow_the_table_and_the_filter(postgres: Any) -> None:
    """Both blocks: the table's count and the published rows' count, through inserts,
    updates moving rows in and out of the filter, and deletes (many rows a statement)."""
    table_count, published_count = _blocks("A row count a trigger keeps", "sql")
    await postgres.execute(
        "CREATE TABLE products (id int PRIMARY KEY, slug text, published boolean NOT NULL)"
    )
    await postgres.execute("INSERT INTO products VALUES (1, 'a', true), (2, 'b', false)")
    await postgres.execute(table_count)
    await postgres.execute(published_count)
    writes = [
        "INSERT INTO products SELECT n, 'p' || n, n % 3 = 0 FROM generate_series(3, 40) n",
        "UPDATE products SET published = NOT published WHERE id % 4 = 0",
        "UPDATE products SET slug = slug || '!' WHERE id < 10",
        "DELETE FROM products WHERE id % 5 = 0",
        "DELETE FROM products WHERE id > 35",
    ]
    for write in writes:
        await postgres.execute(write)
        kept = dict(await postgres.fetch("SELECT name, total FROM row_counts"))
        assert kept["products"] == await postgres.fetchval("SELECT count(*) FROM products")
        assert kept["published_products"] == await postgres.fetchval(
            "SELECT count(*) FROM products WHERE published"
        )
