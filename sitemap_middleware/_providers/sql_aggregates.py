"""The SQL the SQLAlchemy provider's versions are made of (see ``checksum.py`` for the rule).

A version is one aggregate over rows: ``count(*)`` with the sum of a per-row hash (or,
given a revision column, its maximum) and the newest lastmod. The same aggregate serves
the whole table (the section's version) and one key range (a page's version, which costs
that page's rows only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    Engine,
    Integer,
    LargeBinary,
    Select,
    Text,
    and_,
    case,
    cast,
    event,
    func,
    literal,
    not_,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ColumnElement

from .checksum import (
    NULL_TEXT,
    SEPARATOR,
    SQLITE_CHECKSUM,
    SQLITE_CHECKSUM_BYTES,
    sqlite_row_crc32,
    sqlite_row_crc32_of_bytes,
)
from .ranges import PLAIN_CHARACTERS
from .sql_keys import python_type
from .sql_reads import raw

__all__ = ["checksum_sum", "range_stats_statement", "register_sqlite_checksum"]

#: :data:`PLAIN_CHARACTERS` as SQLite's GLOB reads them fastest (a fifth faster): ``-``,
#: ``.``, ``/`` and the digits are one run of code points, so the class has five items.
_PLAIN_GLOB = "--9A-Z_a-z~"


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
            for name, function in (
                (SQLITE_CHECKSUM, sqlite_row_crc32),
                (SQLITE_CHECKSUM_BYTES, sqlite_row_crc32_of_bytes),
            ):
                dbapi_connection.create_function(name, -1, function, deterministic=True)
            record.info[SQLITE_CHECKSUM] = True

    event.listen(sync_engine, "checkout", on_checkout)


def checksum_sum(
    columns: Sequence[Any], dialect: str, texts_as_bytes: bool = False
) -> ColumnElement[Any]:
    """The sum over rows of a hash of ``columns`` (order-independent). ``texts_as_bytes``
    (SQLite): the variant that takes a text that is not UTF-8 (see ``checksum.py``)."""
    if dialect == "sqlite" and texts_as_bytes:
        typed = [
            part
            for column in columns
            for part in (
                func.typeof(column),
                case((func.typeof(column) == "text", cast(column, LargeBinary)), else_=column),
            )
        ]
        return func.sum(getattr(func, SQLITE_CHECKSUM_BYTES)(*typed))
    if dialect == "sqlite":
        return func.sum(getattr(func, SQLITE_CHECKSUM)(*columns))
    separator = literal(SEPARATOR)
    parts = [_length_prefixed(column, dialect) for column in columns]
    if dialect == "mysql":
        return func.sum(func.crc32(func.concat_ws(SEPARATOR, *parts)))
    text: ColumnElement[Any] = parts[0]
    for part in parts[1:]:
        text = text.op("||")(separator).op("||")(part)
    # Bytes, not the collation's equivalence (see checksum.py); summed as numeric.
    return func.sum(func.hashtextextended(text.self_group().collate("C"), literal(0, BigInteger)))


def _octets(column: ColumnElement[Any], dialect: str) -> ColumnElement[Any]:
    """UTF-8 bytes of a text or integer column's text (a plain value's: see ``_plain``)."""
    if dialect == "sqlite":
        if _integer(column):
            return func.length(column)  # the length of an integer's text, no cast
        return func.length(cast(column, LargeBinary))  # of a text: its characters
    text = cast(column, Text)  # (an ENUM, a CHAR: as the driver hands it over)
    return func.length(text) if dialect == "mysql" else func.octet_length(text)


def _plain(column: ColumnElement[Any], dialect: str) -> ColumnElement[Any] | None:
    """Whether a value is written as the database has it, of :data:`PLAIN_CHARACTERS`
    only (see ``ranges.py``); None when every value of the column is.

    SQLite stores any type in any column (a text in an INTEGER column, a blob in a TEXT
    one), and its GLOB stops at a NUL: a value must be of the declared type, NUL-free.
    """
    if dialect == "sqlite":
        if _integer(column):
            return func.typeof(column) == "integer"
        return and_(
            func.typeof(column) == "text",
            func.instr(column, func.char(0)) == 0,
            column.op("NOT GLOB")(f"*[^{_PLAIN_GLOB}]*"),
        )
    if _integer(column):
        return None  # typed strictly: an integer's text is digits and a sign
    text = cast(column, Text)
    if dialect == "mysql":
        return text.op("NOT REGEXP")(f"[^{PLAIN_CHARACTERS}]")
    # The C collation: a nondeterministic one refuses regular expressions.
    return text.collate("C").op("!~")(f"[^{PLAIN_CHARACTERS}]")


def range_stats_statement(
    key: ColumnElement[Any],
    fields: Sequence[ColumnElement[Any]],
    lastmod: ColumnElement[Any] | None,
    rows_per_range: int,
    dialect: str,
    after: Any = None,
    upto: Any = None,
) -> Select[Any]:
    """One grouped query: per run of ``rows_per_range`` keys, what :class:`KeyRange` holds.

    ``fields`` are the columns the location is the text of, one per template field (text
    or integer columns: an integer's text is always plain). ``after``/``upto`` bound the
    keys read (None: open).
    """
    read = list(dict.fromkeys(fields))
    number = func.row_number().over(order_by=key) - 1
    bucket = number.self_group().op("DIV" if dialect == "mysql" else "/")(
        literal(rows_per_range, Integer)
    )
    nullable = [column for column in read if getattr(column, "nullable", True)]
    listed = and_(*(column.is_not(None) for column in nullable)) if nullable else None
    checks = [check for column in read if (check := _plain(column, dialect)) is not None]
    octets = sum((_octets(column, dialect) for column in fields), literal(0))
    # 0: left out (a NULL), 1: plain, 2: measured row by row.
    whens: list[tuple[Any, int]] = [] if listed is None else [(not_(listed), 0)]
    if checks:
        kind: ColumnElement[Any] = case(*whens, (and_(*checks), 1), else_=2)
    else:
        kind = case(*whens, else_=1) if whens else literal(1, Integer)
    rows: Select[Any] = select(
        key.label("key"),
        *([] if lastmod is None else [lastmod.label("lastmod")]),
        bucket.label("bucket"),
        kind.label("kind"),  # computed once a row: the window keeps this query whole
        octets.label("octets"),
    )
    if after is not None:
        rows = rows.where(key > after)
    if upto is not None:
        rows = rows.where(key <= upto)
    ranges = rows.subquery("sitemap_ranges")
    newest = (  # (raw: a value the column's type cannot read costs no plan, see sql_reads)
        literal(None)
        if lastmod is None
        else raw(func.max(case((ranges.c.kind > 0, ranges.c.lastmod))))
    )
    return (
        select(
            func.min(ranges.c.key),
            func.max(ranges.c.key),
            func.count(),
            func.sum(case((ranges.c.kind > 0, 1), else_=0)),
            func.sum(case((ranges.c.kind == 1, ranges.c.octets), else_=0)),
            func.sum(case((ranges.c.kind == 2, 1), else_=0)),
            newest,
        )
        .group_by(ranges.c.bucket)
        .order_by(ranges.c.bucket)
    )


def _integer(column: ColumnElement[Any]) -> bool:
    return python_type(column) is int
