"""A row count the user keeps (``row_count=``), in place of ``count(*)``: when to trust it.

With a revision column a section's version is its row count (what sees deletes) and
two index lookups: the count is the one scan. A count a trigger keeps replaces it while
it holds. It is compared with ``count(*)`` in one statement (one snapshot):

* in the version's own statement at most once every :data:`CHECK_EVERY` seconds, the
  first that long after the provider is made (a fleet's new instance serves its first
  index from another's plan without a scan; the instance that planned had checked);
* when the ranges of a whole-section measure do not add up to it (free otherwise);
* whenever the whole section is read (how a section without ranges is planned).

Not at every plan: after a write the next index re-measures the ranges that changed,
and a scan there would cost what the count saves. So a count that drifted to equal the
sum of kept ranges missing a delete is caught by the next periodic check (the version
then moves: planned again), not at once. A count that disagrees, or reads no number
(NULL: no counter row), is logged and ``count(*)`` used for the rest of the process. A
delete the count misses changes no version until a check: the count must be kept.

The rule is here, whatever the statement is: a ``select()`` (``sql_row_count.py``) or a
Django QuerySet of one value (``_django/row_count.py``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from .._logs import logger

__all__ = ["CHECK_EVERY", "KeptCount", "count_number"]

#: Seconds between two checks of a kept count in a version's statement.
CHECK_EVERY = 60.0
_S = TypeVar("_S")


def count_number(value: object) -> int | None:
    """A count as read (an int, a Decimal, a float or a text of one) as an int; None
    when it is no whole number (NULL, ``'12.5'``)."""
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return number if number == value or str(number) == value else None


class KeptCount(Generic[_S]):
    """``row_count``'s statement, until it is caught wrong."""

    def __init__(self, statement: _S | None, every: float | None = None) -> None:
        self._statement = statement
        self._every = CHECK_EVERY if every is None else every
        self._due = time.monotonic() + self._every

    @property
    def statement(self) -> _S | None:
        """The kept count's statement; None once given up (or never given)."""
        return self._statement

    @property
    def due(self) -> bool:
        """Whether the version's next read checks the kept count against ``count(*)``."""
        return time.monotonic() >= self._due

    def settle(self, values: Sequence[Any], kept: bool) -> int | None:
        """The version's row count from what was read: ``count(*)`` alone (``kept``
        false), the kept count alone, or the kept count and ``count(*)`` (a check was
        due); None when the kept count reads no number (given up: read the version
        again)."""
        if not kept:
            return int(values[0])
        if len(values) == 2:  # a check was due
            return self.compared(*values)
        rows = count_number(values[0])
        if rows is None:
            self.give_up(values[0])
        return rows

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

    def compared(self, kept: object, real: Any) -> int:
        """``count(*)`` as read beside the kept count; the kept count given up (logged)
        when the two differ. The next periodic check is due :data:`CHECK_EVERY` on."""
        self._due = time.monotonic() + self._every
        if count_number(kept) != real:
            self.give_up(kept, int(real))
        return int(real)
