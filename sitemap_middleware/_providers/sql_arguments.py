"""What ``SQLAlchemyProvider``'s arguments must be: each mistake a ``ConfigurationError``
that names the fix, raised when the provider is built (never at the first request)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Engine, Select, Table, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import Subquery
from sqlalchemy.sql.elements import TextClause

from .._exceptions import ConfigurationError
from .columns import column_hint

__all__ = ["check_columns", "check_engine", "check_entry_mode", "check_row_count", "source_rows"]


def check_engine(engine: object) -> None:
    if not isinstance(engine, AsyncEngine | Engine):
        raise ConfigurationError(
            f"engine must be a SQLAlchemy engine, got {engine!r:.80}: "
            "create_async_engine('sqlite+aiosqlite:///shop.sqlite3') (or create_engine(url))"
        )


def source_rows(source: Table | Select[Any]) -> Subquery:
    """The source as the subquery every statement selects from (one row per URL)."""
    if isinstance(source, TextClause):
        raise ConfigurationError(
            "source must be a Table or a select(): a text() query has no columns to "
            "page by (write it as select(...), or .columns(...) on the text)"
        )
    return (source if isinstance(source, Select) else select(source)).subquery("sitemap_rows")


def check_columns(
    sub: Subquery,
    key: str,
    lastmod: str | None,
    version_column: str | None,
    checksum_columns: Sequence[str] | None,
) -> None:
    """Every column named is a column of the source."""
    for label, name in (("key", key), ("lastmod", lastmod), ("version", version_column)):
        if name is not None and not isinstance(name, str):
            example = {"key": "id", "lastmod": "updated_at"}.get(label, "revision")
            raise ConfigurationError(
                f"{label} must be a column name (a str such as {example!r}), "
                f"got {type(name).__name__}"
            )
        if name is not None and name not in sub.c:
            raise ConfigurationError(
                f"{label} column {name!r} is not in the source's columns "
                f"({', '.join(sub.c.keys())}){column_hint(name, sub.c.keys())}"
            )
    for name in checksum_columns or ():
        if name not in sub.c:
            raise ConfigurationError(f"checksum column {name!r} is not in the source")


def check_entry_mode(
    to_entry: Callable[[Any], Any] | None,
    location: object,
    changefreq: str | None,
    priority: float | None,
) -> None:
    """One way to build entries: a function of the row, or the column mode."""
    if to_entry is not None and (
        location is not None or changefreq is not None or priority is not None
    ):
        raise ConfigurationError(
            "SQLAlchemyProvider: pass either to_entry or location/changefreq/priority, not both"
        )
    if to_entry is None and location is None:
        raise ConfigurationError(
            "SQLAlchemyProvider: pass to_entry= (a function from a row to an entry) or "
            "location= (a column, a '/path/{column}' template or a function of the row)"
        )


def check_row_count(row_count: object, version_column: str | None, unique: bool) -> None:
    """``row_count`` is a one-column ``select()``, given with a revision column over a
    key the schema makes unique."""
    if row_count is None:
        return
    if not isinstance(row_count, Select) or len(row_count.selected_columns) != 1:
        raise ConfigurationError(
            "row_count must be a select() of one value (the source's row count, kept "
            f"cheap to read, e.g. by a trigger), got {type(row_count).__name__}"
        )
    if version_column is None:
        raise ConfigurationError(
            "row_count needs version_column=: without a revision column the version "
            "checksum reads every row anyway"
        )
    if not unique:
        raise ConfigurationError(
            "row_count needs a key the schema makes unique (the primary key of the one "
            "table the source reads): over another source the version counts keys and "
            "distinct keys, which reads every row anyway. Read a joined table's column "
            "as a scalar subquery, select(categories.c.slug).where(categories.c.id == "
            "products.c.category_id).scalar_subquery().label('category_slug'), so the "
            "source reads one table, or leave row_count out"
        )
