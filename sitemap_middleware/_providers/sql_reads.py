"""Reading what a column holds when its type cannot read it (SQLite keeps anything).

SQLite stores any value in any column: a MySQL zero date (``0000-00-00 00:00:00``) or a
text in a ``DATETIME``, an unknown word in a non-native ``Enum``. SQLAlchemy's result
processor raises on such a value, and one row would cost the whole query: a version, a
plan, a batch of 10,000 URLs. So aggregates over a column are read raw and converted
here, a failure leaving the value as stored (then refused where it is used, as any
invalid value), and a batch that fails is read again in halves down to the rows that
fail, each left out and logged with its key (``SQLAlchemyProvider.keyed_batches``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Dialect, Select, type_coerce
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.sql import ColumnElement
from sqlalchemy.types import NullType, TypeEngine

from .._exceptions import InvalidEntryError, SitemapError
from .._logs import logger
from .._sansio.values import aware, to_datetime

__all__ = ["NewestReader", "cannot_read", "raw", "reader", "rows_apart"]


def raw(expression: ColumnElement[Any]) -> ColumnElement[Any]:
    """``expression`` selected as the driver gives it (no result processor to fail)."""
    return type_coerce(expression, NullType())


def reader(kind: TypeEngine[Any] | None, dialect: Dialect) -> Callable[[Any], Any]:
    """What ``kind``'s result processor makes of a :func:`raw` value; a value it cannot
    read is given back as stored."""
    process = None if kind is None else kind.dialect_impl(dialect).result_processor(dialect, None)
    if process is None:
        return lambda value: value

    def read(value: Any) -> Any:
        try:
            return process(value)
        except Exception:  # (ValueError, LookupError, decimal's: whatever the type raises)
            return value

    return read


#: The database's, the connection's (asyncio's timeout: no OSError before 3.11), ours.
_NOT_A_VALUE = (
    SQLAlchemyError,
    SitemapError,
    OSError,
    asyncio.TimeoutError,
    RuntimeError,
    MemoryError,
)


def cannot_read(exc: BaseException) -> bool:
    """Whether ``exc`` is a stored value its column type (or the driver) cannot read:
    a fault of rows, not of the database (which is not read again in parts). A result
    processor may raise anything (a TypeDecorator's own error, a decryption's): what is
    not the database's, the connection's or this package's is taken for a value's."""
    if isinstance(exc, DBAPIError):
        return "could not decode" in str(exc.orig).lower()  # (SQLite: text not UTF-8)
    return not isinstance(exc, _NOT_A_VALUE)


Read = Callable[[Any, Sequence[str]], Awaitable[Sequence[Any]]]
Items = Callable[[Sequence[Any], list[str]], tuple[list[Any], list[Any]]]


async def rows_apart(
    read: Read, key: Any, batch: Select[Any], by_column: list[str], items_of: Items
) -> tuple[list[Any], list[Any], list[Any]]:
    """A batch whose values its columns' types cannot all read, in halves down to the
    rows that fail (a few queries per such row, not one per row): each is an
    :class:`InvalidEntryError` in its place. The keys and items of the rows read, and
    every key the batch held (where the next batch starts)."""
    listed = [row[0] for row in await read(batch.with_only_columns(key), ())]
    keys: list[Any] = []
    items: list[Any] = []
    spans = [listed] if listed else []
    while spans:  # depth first, in key order
        span = spans.pop()
        part = batch.where(key == span[0] if len(span) == 1 else key.between(span[0], span[-1]))
        try:
            found, made = items_of(await read(part, by_column), by_column)
        except Exception as exc:
            if not cannot_read(exc):
                raise
            if len(span) > 1:
                spans += [span[len(span) // 2 :], span[: len(span) // 2]]
                continue
            problem = f"a value its column's type cannot read ({type(exc).__name__}: {exc})"
            found, made = span, [InvalidEntryError("row", {key.key: span[0]}, problem)]
        keys.extend(found)  # (a row deleted since the batch was read: none)
        items.extend(made)
    return keys, items, listed


class NewestReader:
    """The newest value of a lastmod column as Last-Modified; one that is no date
    leaves it out, logged once per value (the rows holding it are left out of
    ``<lastmod>`` or of the page as any invalid value; the version still sees them)."""

    def __init__(self, column: str | None, read: Callable[[Any], Any]) -> None:
        self._column, self._read = column, read
        self._bad: object = None

    def __call__(self, value: object) -> datetime | None:
        value = self._read(value)
        if value is None:
            return None
        try:
            if isinstance(value, datetime):
                return aware(value)
            return to_datetime(value)  # type: ignore[arg-type]
        except (ValueError, TypeError, AttributeError) as exc:
            if self._bad != value:
                self._bad = value
                logger.warning(
                    "lastmod column %r: the newest value %r is not a date (%s): "
                    "Last-Modified is left out until it is",
                    self._column,
                    value,
                    exc,
                )
            return None
