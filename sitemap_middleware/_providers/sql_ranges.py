"""Key ranges kept between plans, and brought up to date by what changed.

With a revision column (bumped from one sequence on every insert and update), the rows
that changed since the last plan are the rows whose revision is above the one read
before it: an indexed query. Only the ranges holding them are measured again; rows
past the last range form new ranges at the end. Deletions leave no revision, so the
ranges' row counts must add up to the table's ``count(*)``: when they do not (a row was
deleted from a range nothing else touched), every range is measured again. Without a
revision column every plan measures every range (one grouped query), as after the newest
revision went down (a reset counter, a restored dump: rows changed below the kept one).
The SQLAlchemy provider and the Django QuerySet planner both plan through
:func:`kept_or_measured`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from .ranges import KeyRange

__all__ = [
    "MAX_CHANGED",
    "PARALLEL_ROWS",
    "ChangedKeys",
    "KeptRanges",
    "MeasureKeys",
    "kept_or_measured",
    "measured",
    "updated_ranges",
]

#: Changed rows beyond which measuring every range is the cheaper way.
MAX_CHANGED = 10_000
#: Rows from which a section's ranges are measured in two halves at once.
PARALLEL_ROWS = 200_000

#: Measures the ranges of ``after < key <= upto`` (None: open).
MeasureKeys = Callable[[Any, Any], Awaitable[list[KeyRange]]]
#: The keys (at most ``limit``, in any order: no ORDER BY, so the database reads the
#: revision's index rather than scanning in key order) of rows of a revision above.
ChangedKeys = Callable[[Any, int], Awaitable[Sequence[Any]]]


@dataclass(frozen=True, slots=True)
class KeptRanges:
    """Ranges of ``rows_per_range`` keys, as they were at ``revision``."""

    rows_per_range: int
    revision: Any
    ranges: tuple[KeyRange, ...]


async def measured(
    measure: MeasureKeys, rows: int, key_at: Callable[[int], Awaitable[Any]]
) -> list[KeyRange]:
    """Every range of ``rows`` rows; a big table's two halves at once, on two connections
    (a window query runs on one core: the database cannot split it itself). ``key_at``
    gives the key at a position in key order (None past the end)."""
    split = await key_at(rows // 2) if rows >= PARALLEL_ROWS else None
    if split is None:
        return await measure(None, None)
    halves: list[list[KeyRange]] = [[], []]

    async def half(place: int, after: Any, upto: Any) -> None:
        halves[place] = await measure(after, upto)

    async with anyio.create_task_group() as group:
        group.start_soon(half, 0, None, split)
        group.start_soon(half, 1, split, None)
    return [*halves[0], *halves[1]]


async def kept_or_measured(
    kept: KeptRanges | None,
    rows_per_range: int,
    summary: tuple[int, Any],
    changed_since: ChangedKeys | None,
    measure: MeasureKeys,
    measure_all: Callable[[], Awaitable[list[KeyRange]]],
) -> tuple[list[KeyRange], KeptRanges]:
    """The ranges, and what to keep for the next plan: ``kept`` brought up to date when
    ``changed_since`` is given (a revision column, integer keys), else every range
    measured. ``summary`` is the row count and newest revision, read BEFORE the ranges
    (so kept ranges are never older than the revision they are kept at)."""
    rows, revision = summary
    ranges = None
    if (
        changed_since is not None
        and kept is not None
        and kept.revision is not None  # (an empty table has none)
        and revision is not None
        and not revision < kept.revision  # (a reset counter: rows changed below it)
        and kept.rows_per_range == rows_per_range
    ):
        changed = await changed_since(kept.revision, MAX_CHANGED + 1)
        if len(changed) <= MAX_CHANGED:
            ranges = await updated_ranges(kept, changed, rows, measure)
    if ranges is None:
        ranges = await measure_all()
    return ranges, KeptRanges(rows_per_range, revision, tuple(ranges))


async def updated_ranges(
    kept: KeptRanges, changed: Sequence[Any], rows: int, measure: MeasureKeys
) -> list[KeyRange] | None:
    """``kept`` with the ranges holding a ``changed`` key (any order) measured again;
    None when the counts do not add up to ``rows`` (measure everything)."""
    ranges = list(kept.ranges)
    if not ranges:
        return None
    lasts = [each.last_key for each in ranges]
    touched = sorted({bisect_left(lasts, key) for key in changed})
    out: list[KeyRange] = []
    place = 0
    for first, last in _runs(touched):
        out.extend(ranges[place:first])
        after = ranges[first - 1].last_key if first else None
        upto = ranges[last].last_key if last < len(ranges) else None
        out.extend(await measure(after, upto))
        place = min(last + 1, len(ranges))
    out.extend(ranges[place:])
    if sum(each.rows for each in out) != rows:
        return None
    return out


def _runs(places: list[int]) -> list[tuple[int, int]]:
    """Consecutive places as (first, last) runs, so neighbours are measured together."""
    runs: list[tuple[int, int]] = []
    for place in places:
        if runs and runs[-1][1] == place - 1:
            runs[-1] = (runs[-1][0], place)
        else:
            runs.append((place, place))
    return runs
