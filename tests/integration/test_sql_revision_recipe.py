"""The SQLite revision trigger of docs/how-to/big-tables.md, as written, under a filtered
source: a column the source only filters on must move the revision too.

With ``AFTER UPDATE OF slug, updated_at`` (the recipe before), publishing one row and
unpublishing another in one transaction kept the row count and the newest revision, so
the page kept its ETag and served its old body.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, select
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_middleware.providers import SQLAlchemyProvider
from tests.docs_examples import DOCS, section
from tests.harness.core import fetch, header, make_core
from tests.harness.documents import check_document, child_urls, page_urls

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _recipe() -> str:
    """The SQL script of the documented SQLite recipe."""
    text = section(DOCS / "how-to" / "big-tables.md", "Keeping the revision column bumped")
    match = re.search(r'db\.executescript\("""(.*?)"""\)', text, re.S)
    assert match is not None
    return match[1]


async def test_a_column_the_source_filters_on_moves_the_page(tmp_path: Path) -> None:
    path = tmp_path / "shop.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(_recipe())
        db.execute("ALTER TABLE products ADD COLUMN published INTEGER NOT NULL DEFAULT 1")
        for n in range(1, 7):
            db.execute(
                "INSERT INTO products (slug, updated_at, published) VALUES (?, ?, ?)",
                (f"p{n}", "2024-05-01T00:00:00+00:00", int(n != 2)),
            )
    products = Table(
        "products",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("slug", String),
        Column("updated_at", String),
        Column("published", Integer),
        Column("revision", Integer),
    )
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    provider = SQLAlchemyProvider(
        engine,
        select(products).where(products.c.published == 1),
        key="id",
        location="/p/{slug}",
        version_column="revision",
        metadata_ttl=0,
    )
    core = make_core({"products": provider})
    try:
        _, index = await fetch(core, "/sitemap_index.xml")
        (page,) = [
            url.removeprefix("https://example.com") for url in child_urls(check_document(index))
        ]
        reply, body = await fetch(core, page)
        etag = header(reply, "ETag")
        assert etag is not None
        assert "https://example.com/p/p3" in page_urls(check_document(body))
        with sqlite3.connect(path) as db:  # one transaction: the count stays 5
            db.execute("UPDATE products SET published = 1 WHERE id = 2")
            db.execute("UPDATE products SET published = 0 WHERE id = 3")
        reply, body = await fetch(core, page, if_none_match=etag)
        assert reply.status == 200, "a stale 304"
        listed = page_urls(check_document(body))
        assert "https://example.com/p/p2" in listed and "https://example.com/p/p3" not in listed
    finally:
        await core.aclose()
        await engine.dispose()


@pytest.mark.parametrize("recursive", [False, True], ids=["plain", "recursive-triggers"])
def test_a_write_of_a_stale_revision_still_moves_it(recursive: bool) -> None:
    """An ORM saving an object it loaded before another write (Django's ``save()`` writes
    every field) writes the revision that object was read with. With ``WHEN NEW.revision
    IS OLD.revision`` the trigger did not fire and the row went back to its old revision,
    so its page's version matched one from before both writes: a stale ``304``."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute(f"PRAGMA recursive_triggers = {'ON' if recursive else 'OFF'}")
    db.executescript(_recipe())
    for slug in ("tea", "mate"):
        db.execute("INSERT INTO products (slug, updated_at) VALUES (?, '2024-05-01')", (slug,))
    (loaded,) = db.execute("SELECT revision FROM products WHERE id = 1").fetchone()
    db.execute("UPDATE products SET slug = 'green-tea' WHERE id = 1")  # another writer
    db.execute("UPDATE products SET slug = 'black-tea', revision = ? WHERE id = 1", (loaded,))
    assert db.execute("SELECT id, revision FROM products ORDER BY id").fetchall() == [
        (1, 4),
        (2, 2),
    ]
    assert db.execute("SELECT n FROM revision_counter").fetchone() == (4,)
