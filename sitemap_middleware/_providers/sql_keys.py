"""The key column of a SQL source: the ranges it can hold and the uniqueness it owes.

Pages of a SQL section are key ranges, so the key must be unique and never NULL. A key
that is its table's primary key, over a source that reads one table, is unique by the
schema; any other is counted in SQL with every version and checked while reading.
"""

from __future__ import annotations

from operator import eq
from typing import Any

from sqlalchemy import BigInteger, Select, SmallInteger, Table
from sqlalchemy.sql import ColumnElement

__all__ = ["key_bounds", "key_problem", "python_type", "unique_by_schema"]


def python_type(column: ColumnElement[Any]) -> type | None:
    """The Python type of a column's values, when its SQL type tells."""
    try:
        kind: type = column.type.python_type
    except NotImplementedError:
        return None
    return kind


def unique_by_schema(source: Table | Select[Any], key: ColumnElement[Any]) -> bool:
    """Whether the schema makes ``key`` unique and non-NULL over ``source``'s rows: the
    primary key (alone) of the one table a source reads, so no join can repeat it."""
    froms = [source] if isinstance(source, Table) else source.get_final_froms()
    if len(froms) != 1 or not isinstance(froms[0], Table):
        return False
    primary = list(froms[0].primary_key.columns)
    return len(primary) == 1 and key.primary_key


def key_bounds(
    key: ColumnElement[Any], dialect: str, after: Any, upto: Any
) -> tuple[Any, Any] | None:
    """A key range as the key column can compare it, or None when it holds no row.

    Ranges come from page names, which any client can write: a bound of another
    type than the column's, or an integer past its size, is answered here rather
    than by a database error; so is a key of a type no page name carries (a date, a
    UUID: such sections page by number). An integer below the column's least value is no bound
    at all (every key is above it); one past its greatest holds every key below it.
    """
    try:
        kind = key.type.python_type
    except NotImplementedError:
        return after, upto
    if kind is not int and kind is not str:
        return None  # page names carry int and str keys only: anything else is made up
    if kind is int:
        if any(type(b) is not int for b in (after, upto) if b is not None):
            return None
        bits = 64 if dialect == "sqlite" else 32
        if isinstance(key.type, BigInteger):
            bits = 64
        elif isinstance(key.type, SmallInteger):
            bits = 16
        least, greatest = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        if (after is not None and after >= greatest) or (upto is not None and upto < least):
            return None
        after = None if after is not None and after < least else after
        upto = None if upto is not None and upto > greatest else upto
    elif kind is str:
        for bound in (after, upto):
            if bound is None:
                continue
            if type(bound) is not str:
                return None
            try:
                bound.encode()
            except UnicodeEncodeError:  # a lone surrogate: no database holds one
                return None
            if "\x00" in bound and dialect == "postgresql":
                return None  # PostgreSQL text cannot hold NUL
    return after, upto


def key_problem(keys: list[Any], last: Any) -> str:
    """What is wrong with a batch of keys ("" if nothing): a NULL, or a key equal to the
    one before it (rows come in key order).

    Equality only: the database orders by the column's collation, which Python's <
    does not know (uniqueness itself is counted in SQL).
    """
    if None in keys:
        return "holds NULL"
    previous = keys[:-1] if last is None else [last, *keys[:-1]]
    current = keys[1:] if last is None else keys
    if any(map(eq, previous, current)):  # the scan at C speed; the culprit only then
        repeated = next(key for key, before in zip(current, previous, strict=True) if key == before)
        return f"is not unique ({repeated!r} appears more than once)"
    return ""
