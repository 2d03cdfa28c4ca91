"""``_providers/sql_aggregates.py``: the plain-value test each database runs."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select

from sitemap_middleware._providers.ranges import PLAIN_CHARACTERS
from sitemap_middleware._providers.sql_aggregates import (
    _plain,
    checksum_sum,
    register_sqlite_checksum,
)

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


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False)),
            st.one_of(st.none(), st.text(), st.binary(max_size=8), st.integers(0, 9)),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_the_checksum_of_texts_as_bytes_is_the_checksum_of_readable_rows(
    rows: list[tuple[Any, Any]],
) -> None:
    """Switching a provider to texts as bytes (after a text that is not UTF-8) keeps
    every readable row's number: no ETag moves for it (see checksum.py)."""
    table = Table("mixed", MetaData(), Column("a", Integer), Column("b", String))
    engine = create_engine("sqlite://")
    register_sqlite_checksum(engine)
    with engine.begin() as conn:
        table.create(conn)
        conn.execute(table.insert(), [{"a": a, "b": b} for a, b in rows])
        columns = [table.c.a, table.c.b]
        both = [
            conn.execute(select(checksum_sum(columns, "sqlite", as_bytes))).scalar()
            for as_bytes in (False, True)
        ]
    engine.dispose()
    assert both[0] == both[1]


def test_two_rows_that_swap_a_value_move_the_sqlite_checksum() -> None:
    """A CRC is linear (over XOR): summed over rows, two rows swapping a value kept the
    sum about once in 10,000 swaps of product slugs (a stale ETag). This pair did; each
    row's CRC is mixed before it is summed."""
    table = Table(
        "swapped", MetaData(), Column("id", Integer), Column("slug", String), Column("day", String)
    )
    engine = create_engine("sqlite://")
    register_sqlite_checksum(engine)

    def summed(first: str, second: str) -> int:
        with engine.begin() as conn:
            conn.execute(table.delete())
            rows = [{"id": 248467, "slug": first}, {"id": 707486, "slug": second}]
            conn.execute(table.insert(), [{**row, "day": "d"} for row in rows])
            columns = [table.c.id, table.c.slug, table.c.day]
            return int(conn.execute(select(checksum_sum(columns, "sqlite"))).scalar_one())

    with engine.begin() as conn:
        table.create(conn)
    before = summed("product-4168990", "product-3318086")
    assert summed("product-3318086", "product-4168990") != before
    engine.dispose()
