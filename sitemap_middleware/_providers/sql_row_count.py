"""A row count the user keeps (``row_count=select(...)``), in place of ``count(*)``.

When it is read, checked and given up: ``row_count.py``. Here, the SQLAlchemy
statements: the count as a scalar subquery beside the version's other aggregates, and
the check ``SELECT (kept), (SELECT count(*) FROM source)`` (one snapshot).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.sql import ColumnElement, FromClause

from . import row_count
from .row_count import CHECK_EVERY, count_number

__all__ = ["CHECK_EVERY", "KeptCount", "count_number"]


class KeptCount(row_count.KeptCount[Select[Any]]):
    """``row_count``'s statement, until it is caught wrong."""

    def column(self) -> ColumnElement[Any] | None:
        """The count as a scalar subquery, or None once given up (or never given)."""
        return None if self.statement is None else self.statement.scalar_subquery()

    def version_columns(self, counted: ColumnElement[Any]) -> list[ColumnElement[Any]]:
        """The version's count: ``counted`` (``count(*)``) once given up or never given,
        else the kept count, with ``counted`` beside it when a check is due."""
        kept = self.column()
        if kept is None:
            return [counted]
        return [kept, counted] if self.due else [kept]

    async def check(
        self, run: Callable[[Any], Awaitable[Sequence[Any]]], source: FromClause
    ) -> None:
        """Compare the kept count with ``count(*)`` now, in one statement (one snapshot);
        nothing once given up (or never given)."""
        column = self.column()
        if column is not None:
            counted = select(func.count()).select_from(source).scalar_subquery()
            self.compared(*(await run(select(column, counted)))[0])
