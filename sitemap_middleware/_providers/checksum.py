"""The row checksum behind SQL versions: one rule for SQLAlchemy and Django alike.

A version made of count, newest key and newest lastmod misses renames, a delete plus an
insert at a lower key and updates that keep their lastmod. So the SQL providers sum a
per-row hash in the database (order-independent, one aggregate query):

* SQLite has no hash function: :func:`sqlite_row_crc32` is registered on each connection
  as :data:`SQLITE_CHECKSUM`; it hashes the ``repr`` of the row's values (a CRC-32,
  mixed: summed over rows a bare CRC misses two rows swapping a value). A text that is
  not UTF-8 cannot be handed to it (sqlite3 fails before the call): from the first such
  failure a provider hands texts over as bytes to :func:`sqlite_row_crc32_of_bytes`
  (:data:`SQLITE_CHECKSUM_BYTES`), which gives every readable row the same number.
* PostgreSQL and MySQL/MariaDB hash the row as text: every column cast to text and
  written ``<length>:<text>`` (so a separator moved between two columns changes the
  row's text), NULL as :data:`NULL_TEXT`, joined by :data:`SEPARATOR`. PostgreSQL sums
  ``hashtextextended(text COLLATE "C", 0)`` (64 bits, a bigint; the sum is numeric),
  MySQL ``crc32()``. ``hashtextextended`` is the hash behind hash partitioning, so its
  values are kept stable across releases; it is 4x cheaper than ``md5()`` (issue 23).
  ``COLLATE "C"`` because the hashtext family follows a nondeterministic collation:
  ``'Apple'`` and ``'apple'`` would hash alike in a case-insensitive column.

Any other database gets no checksum: the provider asks for an explicit revision column.
"""

from __future__ import annotations

import zlib

from .._logs import logger

__all__ = [
    "BIG_TABLE_ROWS",
    "NULL_TEXT",
    "SEPARATOR",
    "SQLITE_CHECKSUM",
    "SQLITE_CHECKSUM_BYTES",
    "ChecksumHint",
    "sqlite_row_crc32",
    "sqlite_row_crc32_of_bytes",
]

#: Name of the function registered on every SQLite connection.
SQLITE_CHECKSUM = "sitemap_row_crc32"
#: Name of its variant taking each value after its ``typeof()``, texts as bytes.
SQLITE_CHECKSUM_BYTES = "sitemap_row_crc32_of_bytes"
#: Joins a row's columns (as text) before hashing.
SEPARATOR = "|"
#: Stands for NULL in a row's text, so ``NULL`` and ``''`` hash apart.
NULL_TEXT = "\\N"


#: Rows from which a version read as the checksum of every row is worth a warning.
BIG_TABLE_ROWS = 200_000
LOG_BIG_CHECKSUM = (
    "%s: its version is a checksum of all %d rows (%.2f s a read, again whenever "
    "anything was committed, at most once per metadata_ttl); pass %s= (a revision "
    "bumped on every insert and update, indexed) to read only what changed: "
    "docs/how-to/big-tables.md"
)


#: The option each provider takes instead of the checksum.
_INSTEAD = {"SQLAlchemyProvider": "version_column", "DjangoQuerySetProvider": "version_field"}
#: (provider, source, database) warned of in this process: a provider made again (a
#: tenant resolved anew) has nothing new to say.
_TOLD: set[tuple[str, str]] = set()


class ChecksumHint:
    """Warns once that a provider's checksum reads a big table (the default version of
    a SQL section costs a scan of every row; a revision column costs lookups)."""

    def __init__(self, owner: str, source: object, revision: str | None, where: object) -> None:
        self._owner, self._source, self._where = owner, source, where
        self._done = revision is not None  # (a revision column: no checksum to warn of)

    def read(self, rows: int, seconds: float) -> None:
        if self._done or rows < BIG_TABLE_ROWS:
            return
        self._done = True
        try:
            source = str(self._source)
        except Exception:  # (a construct only one dialect compiles: named by its type)
            source = type(self._source).__name__
        label = f"{self._owner}({source:.60})"
        where = str(getattr(self._where, "url", self._where))
        if (label, where) not in _TOLD:
            _TOLD.add((label, where))
            logger.warning(LOG_BIG_CHECKSUM, label, rows, seconds, _INSTEAD[self._owner])


def sqlite_row_crc32(*values: object) -> int:
    """CRC-32 of one row's values, mixed (deterministic: same values, same number).

    A CRC is linear over XOR: summed over rows, two rows swapping a value kept the sum
    about once in 10,000 swaps. A multiply and a shift break that (none in millions);
    the result stays below 2**32, so a sum over any table fits SQLite's integers.
    """
    mixed = zlib.crc32(repr(values).encode("utf-8", "surrogatepass")) * 0x9E3779B1 & 0xFFFFFFFF
    return mixed ^ (mixed >> 16)


def sqlite_row_crc32_of_bytes(*typed: object) -> int:
    """:func:`sqlite_row_crc32` of values each given after its SQLite ``typeof()``, a
    text as its bytes: read back with ``surrogateescape``, a UTF-8 text is the string
    sqlite3 would have handed over (the same number), any other is read losslessly."""
    values = [
        value.decode("utf-8", "surrogateescape") if kind == "text" else value  # type: ignore[attr-defined]
        for kind, value in zip(typed[::2], typed[1::2], strict=True)
    ]
    return sqlite_row_crc32(*values)
