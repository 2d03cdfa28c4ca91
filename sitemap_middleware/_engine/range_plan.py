"""Section plans from the database: key ranges counted and sized where the rows live.

A provider with :class:`SupportsRangeStats` answers one grouped query (see
``_providers/ranges.py``); this module sizes its ranges and hands them, whole, to the
page cutter (``_sansio/paging.py``, where the rule lives): the bytes of a range are the
bound its provider proves for plain rows, or, for a range holding any other row, what
measuring that range row by row gives (as every row was measured before). Where the
database cannot help (a generator, ``to_entry``, a location function) the section is
measured in Python, one pass over its rows (``planning.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime
from typing import Any

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._providers.ranges import RangeStats, SupportsRangeStats
from .._sansio.models import entry_parts
from .._sansio.paging import PageCutter, PagePlan
from .._sansio.urls import BaseURL
from .._sansio.urlset_writer import UrlsetWriter
from .._sansio.values import to_datetime
from .stream import call_provider

__all__ = ["MeasureRange", "RangePlan", "plan_by_ranges", "rows_per_range"]

#: What measuring ``(after, upto]`` row by row gives: (listed rows, bytes, newest lastmod).
MeasureRange = Callable[[Any, Any], Awaitable[tuple[int, int, datetime | None]]]
#: Pages, rows read and rows left out (a location column was NULL).
RangePlan = tuple[tuple[PagePlan, ...], int, int]

#: Keys per range: a page is cut at a range's end, so a range is small beside a page,
#: and a million rows are a few thousand result rows.
MAX_ROWS_PER_RANGE = 500


def rows_per_range(max_urls: int) -> int:
    """Keys per range for pages of ``max_urls``: a page spans at least 20 ranges, and
    whole ranges fill it exactly (the largest such divisor), so where bytes do not bind
    pages are cut where the row-by-row pass cuts them."""
    most = max(1, min(MAX_ROWS_PER_RANGE, max_urls // 20))
    return next(size for size in range(most, 0, -1) if max_urls % size == 0)


async def plan_by_ranges(
    config: SitemapConfig,
    section: _ResolvedSection,
    base: BaseURL,
    measurer: UrlsetWriter,
    max_urls: int,
    room: int,
    measure: MeasureRange,
) -> RangePlan | None:
    """The section's pages from its provider's key ranges; None when it has none to give
    (or one range alone outgrows a page: then the rows are measured one by one)."""
    provider = section.provider
    if not isinstance(provider, SupportsRangeStats):
        return None
    stats = await call_provider(
        section.name,
        config.provider_timeout,
        lambda: provider.range_stats(rows_per_range(max_urls)),
    )
    if stats is None:
        return None
    if not isinstance(stats, RangeStats):
        raise ProviderError(section.name, f"range_stats() gave {stats!r:.100}, not RangeStats")
    bound = _row_bound(stats.samples, base, measurer)
    if bound is None:
        return None
    cutter = PageCutter(max_urls=max_urls, room=room)
    position = left_out = 0
    after: Any = None
    for each in stats.ranges:
        if each.odd:
            urls, size, newest = await measure(after, each.last_key)
        else:
            urls, size = each.urls, each.urls * bound + each.plain_bytes
            newest = _date(each.newest)
        if not cutter.fits_alone(size):
            return None
        cutter.add_block(
            position, urls, size, lastmod=newest, first_key=each.first_key, last_key=each.last_key
        )
        left_out += each.rows - urls
        position += each.rows
        after = each.last_key
    return cutter.finish(position), position, left_out


def _row_bound(
    samples: Sequence[tuple[Any, int]], base: BaseURL, measurer: UrlsetWriter
) -> int | None:
    """The largest ``<url>`` element of the samples, less their value bytes: with a
    plain row's value bytes added, a bound on its element (see ``ranges.py``)."""
    bound: int | None = None
    for entry, value_bytes in samples:
        try:
            loc, tail, extended = entry_parts(entry)
            admitted = (base.locate(loc), tail, extended)
        except InvalidEntryError:
            return None  # such rows are refused: only measuring them tells which
        size = measurer.sizes([admitted])[0] - value_bytes
        bound = size if bound is None else max(bound, size)
    return bound


def _date(value: object) -> datetime | None:
    """A range's newest lastmod as the plan keeps it; a value that is no date: unknown."""
    if value is None or not isinstance(value, date | str):
        return None
    try:
        return to_datetime(value)
    except (InvalidEntryError, ValueError, TypeError):
        return None
