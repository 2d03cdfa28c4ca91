"""The SQL the SQLAlchemy provider's versions are made of (see ``checksum.py`` for the rule).

A version is one aggregate over rows: ``count(*)`` with the sum of a per-row hash (or,
given a revision column, its maximum) and the newest lastmod. The same aggregate serves
the whole table (the section's version) and one key range (a page's version, which costs
that page's rows only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import BigInteger, Engine, Text, cast, event, func, literal
from sqlalchemy.dialects.postgresql import BIT
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ColumnElement

from .checksum import MD5_HEX_DIGITS, NULL_TEXT, SEPARATOR, SQLITE_CHECKSUM, sqlite_row_crc32

__all__ = ["checksum_sum", "register_sqlite_checksum"]


def _length_prefixed(column: Any, dialect: str) -> ColumnElement[Any]:
    """A column as ``<length>:<text>`` (NULL as :data:`NULL_TEXT`): moving a separator
    between two columns changes the row's text (see ``checksum.py``)."""
    text = cast(column, Text)
    length = cast(func.char_length(text), Text)
    if dialect == "mysql":
        return func.coalesce(func.concat(length, ":", text), NULL_TEXT)
    return func.coalesce(length.op("||")(literal(":")).op("||")(text), NULL_TEXT)


def register_sqlite_checksum(engine: AsyncEngine | Engine) -> None:
    """Register the row hash on every SQLite connection the engine hands out."""
    sync_engine = engine.sync_engine if isinstance(engine, AsyncEngine) else engine

    def on_checkout(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        # On checkout, once per connection: the pool may hold connections opened before
        # this provider was created.
        if not record.info.get(SQLITE_CHECKSUM):
            dbapi_connection.create_function(
                SQLITE_CHECKSUM, -1, sqlite_row_crc32, deterministic=True
            )
            record.info[SQLITE_CHECKSUM] = True

    event.listen(sync_engine, "checkout", on_checkout)


def checksum_sum(columns: Sequence[Any], dialect: str) -> ColumnElement[Any]:
    """The sum over rows of a hash of ``columns`` (order-independent)."""
    if dialect == "sqlite":
        return func.sum(getattr(func, SQLITE_CHECKSUM)(*columns))
    separator = literal(SEPARATOR)
    parts = [_length_prefixed(column, dialect) for column in columns]
    if dialect == "mysql":
        return func.sum(func.crc32(func.concat_ws(SEPARATOR, *parts)))
    text: ColumnElement[Any] = parts[0]
    for part in parts[1:]:
        text = text.op("||")(separator).op("||")(part)
    # md5 is documented and stable; its first 60 bits as a bigint, summed as numeric.
    hexed = literal("x").op("||")(func.substr(func.md5(text), 1, MD5_HEX_DIGITS))
    return func.sum(cast(cast(hexed, BIT(4 * MD5_HEX_DIGITS)), BigInteger))
