"""A row count the user keeps (``row_count=select(...)``), in place of ``count(*)``.

With a revision column a section's version is its row count (what sees deletes) and
two index lookups: the count is the one scan. A count a trigger keeps replaces it while
it holds. It is compared with ``count(*)`` in one statement (one snapshot) whenever a
plan is made, kept ranges or not (a count that drifted can equal the sum of kept ranges
that miss a delete, and a plan kept on it would list a range of deleted rows), and
whenever the whole section is read (how a section without ranges is planned). A count
that disagrees, or reads no number (NULL: no counter row), is logged and ``count(*)``
used for the rest of the process. A delete the count misses while no revision moves
changes no version, so no plan sees it: the count must be kept (see the docs' recipes).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.sql import ColumnElement, FromClause

from .._logs import logger

__all__ = ["KeptCount", "count_number"]


def count_number(value: object) -> int | None:
    """A count as read (an int, a Decimal, a float or a text of one) as an int; None
    when it is no whole number (NULL, ``'12.5'``)."""
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return number if number == value or str(number) == value else None


class KeptCount:
    """``row_count``'s statement, until it is caught wrong."""

    def __init__(self, statement: Select[Any] | None) -> None:
        self._statement = statement

    def column(self) -> ColumnElement[Any] | None:
        """The count as a scalar subquery, or None once given up (or never given)."""
        return None if self._statement is None else self._statement.scalar_subquery()

    def give_up(self, kept: object, real: int | None = None) -> None:
        """Log the count that was caught wrong (``real``: the rows ``count(*)`` read) and
        count with ``count(*)`` from now on."""
        if real is None:
            logger.warning(
                "sitemap row_count reads %r, not a count (no counter row?); counting with "
                "count(*) from now on",
                kept,
            )
        else:
            logger.warning(
                "sitemap row_count reads %s but the source holds %s rows: the count is not "
                "kept (a trigger missing?); counting with count(*) from now on",
                kept,
                real,
            )
        self._statement = None

    async def checked(
        self,
        run: Callable[[Any], Awaitable[Sequence[Any]]],
        source: FromClause,
        rows: int,
    ) -> int:
        """``rows`` (the version's count), or ``count(*)`` when the kept count disagrees
        with it now (given up, logged)."""
        column = self.column()
        if column is None:
            return rows
        counted = select(func.count()).select_from(source).scalar_subquery()
        kept, real = (await run(select(column, counted)))[0]
        if count_number(kept) == real:
            return rows
        self.give_up(kept, int(real))
        return int(real)
