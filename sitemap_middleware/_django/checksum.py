"""The row checksum of :mod:`.._providers.checksum` as Django ORM expressions.

``row_checksum(vendor, names)`` is ``Sum`` over a per-row hash of the named fields, for
an ``aggregate()`` beside the count and maxima: SQLite calls the CRC-32 function that
:func:`register_sqlite_checksum` puts on the connection, PostgreSQL sums
``hashtextextended(text COLLATE "C", 0)`` as numeric, MySQL/MariaDB sums
``CRC32(CONCAT_WS(...))``. The same rule (text of each column, NULL as ``\\N``, joined
by ``|``) as the SQLAlchemy provider's.
"""

from __future__ import annotations

from typing import Any

from .._providers.checksum import (
    NULL_TEXT,
    SEPARATOR,
    SQLITE_CHECKSUM,
    sqlite_row_crc32,
)

__all__ = ["CHECKSUM_VENDORS", "register_sqlite_checksum", "row_checksum"]

#: Database vendors (``connection.vendor``) with a row checksum.
CHECKSUM_VENDORS = ("sqlite", "postgresql", "mysql")


def register_sqlite_checksum(connection: Any) -> None:
    """Put the checksum function on a Django SQLite connection (opened if need be).

    Called in the worker thread before each aggregate: Django opens a connection per
    thread (and :func:`.orm.run_orm` closes it afterwards), so each one gets it.
    """
    connection.ensure_connection()
    connection.connection.create_function(SQLITE_CHECKSUM, -1, sqlite_row_crc32, deterministic=True)


def row_checksum(names: list[str]) -> Any:
    """``Sum`` of a per-row hash over the fields ``names`` (one value for the queryset)."""
    from django.db.models import BigIntegerField, F, Func, Sum

    class RowChecksum(Func):  # type: ignore[misc]  # Django ships no type hints
        output_field = BigIntegerField()

        def _texts(self, compiler: Any, cast: str) -> list[tuple[str, list[Any]]]:
            """Each field as ``<length>:<text>`` (NULL as ``\\N``) with its parameters:
            moving a separator between two fields changes the row's text."""
            texts: list[tuple[str, list[Any]]] = []
            for expression in self.get_source_expressions():
                sql, params = compiler.compile(expression)
                text = f"CAST({sql} AS {cast})"
                joined = f"CONCAT(CHAR_LENGTH({text}), ':', {text})"
                if cast == "text":  # PostgreSQL: || (CONCAT would make NULL '')
                    joined = f"CAST(CHAR_LENGTH({text}) AS text) || ':' || {text}"
                texts.append((f"COALESCE({joined}, %s)", [*params, *params, NULL_TEXT]))
            return texts

        def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
            return super().as_sql(compiler, connection, function=SQLITE_CHECKSUM, **extra)

        def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
            texts = self._texts(compiler, "text")
            sql, params = texts[0]
            for text, more in texts[1:]:
                sql, params = f"{sql} || %s || {text}", [*params, SEPARATOR, *more]
            return f'hashtextextended(({sql}) COLLATE "C", 0)', params

        def as_mysql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
            texts = self._texts(compiler, "char")
            params = [SEPARATOR, *(param for _, more in texts for param in more)]
            return f"CRC32(CONCAT_WS(%s, {', '.join(sql for sql, _ in texts)}))", params

        def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
            from .._exceptions import ConfigurationError

            raise ConfigurationError(
                f"no row checksum for the {connection.vendor!r} database: pass version_field="
            )

    return Sum(RowChecksum(*(F(name) for name in names)))
