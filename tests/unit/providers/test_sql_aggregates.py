"""``_providers/sql_aggregates.py``: the plain-value test each database runs."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select

from sitemap_middleware._providers.ranges import PLAIN_CHARACTERS
from sitemap_middleware._providers.sql_aggregates import _plain

_VALUES = Table("plain_values", MetaData(), Column("id", Integer), Column("slug", String))
_DEFINITION = re.compile(f"[{PLAIN_CHARACTERS}]*")


def _sqlite_plain(values: list[str]) -> list[bool]:
    engine = create_engine("sqlite://")
    with engine.begin() as conn:
        _VALUES.create(conn)
        conn.execute(_VALUES.insert(), [{"id": i, "slug": v} for i, v in enumerate(values)])
        test = _plain(_VALUES.c.slug, "sqlite")
        assert test is not None
        rows = conn.execute(select(_VALUES.c.id, test).order_by(_VALUES.c.id)).all()
    engine.dispose()
    return [bool(plain) for _, plain in rows]


def test_sqlite_finds_plain_exactly_the_plain_characters() -> None:
    """Each character of the first 1,024 code points, alone and between plain ones."""
    values = [text for code in range(1, 1024) for text in (chr(code), f"a{chr(code)}b")]
    assert _sqlite_plain(values) == [_DEFINITION.fullmatch(v) is not None for v in values]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(max_size=12), min_size=1, max_size=40))
def test_sqlite_finds_plain_what_the_definition_calls_plain(values: list[str]) -> None:
    """A value is plain for SQLite exactly when every character is of PLAIN_CHARACTERS
    (a NUL, which SQLite's GLOB stops at, included)."""
    assert _sqlite_plain(values) == [_DEFINITION.fullmatch(v) is not None for v in values]
