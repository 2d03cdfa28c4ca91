"""Section plans from the database: key ranges counted and sized where the rows live.

A provider with :class:`SupportsRangeStats` answers one grouped query (see
``_providers/ranges.py``); this module sizes its ranges and hands them, whole, to the
page cutter (``_sansio/paging.py``, where the rule lives): the bytes of a range are the
bound its provider proves for plain rows, or, for a range holding any other row, what
measuring that range row by row gives (as every row was measured before).

Where only Python builds the entries (``to_entry``, a location function) the ranges come
*unsized*: rows counted, newest lastmod from the ``lastmod`` column. A few ranges spread
over the section are measured row by row, and every other range is taken to hold rows
``HEADROOM`` times the largest of those ranges' bytes a row: pages from row counts, the
rows never read. That is an estimate, so each page is confirmed when rendered: one that
outgrows the budget is served up to it (a complete document) and the section planned
row by row from then on (``plan_memo.py``: ``outgrew``). Where the database cannot help
at all (a generator) the section is measured in Python, one pass over its rows
(``planning.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Sequence
from datetime import date, datetime
from math import ceil
from typing import Any
from weakref import WeakKeyDictionary

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._logs import logger
from .._providers.ranges import KeyRange, RangeStats, SupportsRangeStats
from .._sansio.models import entry_parts
from .._sansio.paging import PageCutter, PagePlan
from .._sansio.urls import BaseURL
from .._sansio.urlset_writer import UrlsetWriter
from .._sansio.values import to_datetime
from .stream import call_provider

__all__ = ["MeasureRange", "RangePlan", "plan_by_ranges", "rows_per_range"]

LOG_BY_ROWS = (
    "sitemap section %r: a sampled entry's lastmod (%s) is newer than its rows' lastmod "
    "column (%s): "
    "planned row by row; declare lastmod= the column entries take it from to plan "
    "in the database"
)

#: What measuring ``(after, upto]`` row by row gives: (listed rows, bytes, newest lastmod).
Measured = tuple[int, int, datetime | None]
MeasureRange = Callable[[Any, Any], Awaitable[Measured]]
#: Pages, rows read, rows left out (a location column was NULL), and whether the
#: pages' bytes are estimated (unsized ranges: each page confirmed when rendered).
RangePlan = tuple[tuple[PagePlan, ...], int, int, bool]

#: Unsized ranges measured row by row, spread over the section (the first and last
#: among them): what the others are sized from.
SAMPLED_RANGES = 8
#: An unsized range's bytes: its rows times this many times the largest bytes a row of
#: the sampled ranges (rows later in a table are often longer: newer slugs, more fields).
HEADROOM = 1.5
#: provider -> base URL prefix -> its sampled ranges' measures (see _kept_samples).
_SAMPLES: WeakKeyDictionary[object, dict[str, dict[Hashable, Measured]]] = WeakKeyDictionary()

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
    counted: bool = True,
) -> RangePlan | None:
    """The section's pages from its provider's key ranges; None when it has none to give
    (or one range alone outgrows a page: then the rows are measured one by one).
    ``counted``: whether unsized ranges may be planned (not once a page of theirs
    outgrew its budget)."""
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
    if not stats.sized:
        if not counted:
            return None
        kept = _kept_samples(provider, base.prefix)
        return await _by_counts(section.name, stats.ranges, (max_urls, room), measure, kept)
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
    return cutter.finish(position), position, left_out, False


def _kept_samples(provider: object, prefix: str) -> dict[Hashable, Measured]:
    """What the last plan of ``provider`` (for this base URL) measured of its sampled
    ranges, by range: a range the database counts as it did is not measured again (an
    estimate either way; each page is confirmed when rendered). Emptied for each plan."""
    try:
        kept = _SAMPLES.setdefault(provider, {})
    except TypeError:  # (a provider that takes no weak reference: measured each time)
        return {}
    return kept.setdefault(prefix, {})


async def _by_counts(
    name: str,
    ranges: Sequence[KeyRange],
    budget: tuple[int, int],
    measure: MeasureRange,
    kept: dict[Hashable, Measured],
) -> RangePlan | None:
    """Pages from counted ranges (see the module): None where the sampled rows carry
    lastmods the ``lastmod`` column does not (their pages' dates need every row), and
    for a section hardly larger than its samples (measured whole, as exactly)."""
    if len(ranges) <= 2 * SAMPLED_RANGES:
        return None
    last = len(ranges) - 1
    picks = {round(place * last / (SAMPLED_RANGES - 1)) for place in range(SAMPLED_RANGES)}
    measured: dict[int, Measured] = {}
    widest = 0.0  # the most bytes a listed row takes in a sampled range (on average)
    before, now = dict(kept), kept
    now.clear()
    for place in sorted(picks):
        after = ranges[place - 1].last_key if place else None
        each = ranges[place]
        known = (after, each.first_key, each.last_key, each.rows, each.newest)
        found = before.get(known) or await measure(after, each.last_key)
        urls, size, newest = measured[place] = now[known] = found
        column = _date(ranges[place].newest)
        if newest is not None and (column is None or newest > column):
            logger.info(LOG_BY_ROWS, name, newest, column)
            return None
        widest = max(widest, size / urls if urls else 0.0)
    if not widest:
        return None  # no sampled row listed: nothing to size the others by
    cutter = PageCutter(max_urls=budget[0], room=budget[1])
    position = left_out = 0
    for place, each in enumerate(ranges):
        urls, size, _ = measured.get(place) or (each.rows, ceil(each.rows * widest * HEADROOM), 0)
        if not cutter.fits_alone(size):
            return None
        newest = _date(each.newest)  # (the column's: what the index dates pages by)
        cutter.add_block(
            position, urls, size, lastmod=newest, first_key=each.first_key, last_key=each.last_key
        )
        left_out += each.rows - urls
        position += each.rows
    return cutter.finish(position), position, left_out, True


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
