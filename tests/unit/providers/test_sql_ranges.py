"""``kept_or_measured`` (``_providers/sql_ranges.py``) without a database."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from sitemap_middleware._providers.ranges import KeyRange
from sitemap_middleware._providers.sql_ranges import KeptRanges, kept_or_measured

KEPT = KeptRanges(10, 500, (KeyRange(1, 10, 10, 10, 10, 0, None),))
FRESH = [KeyRange(1, 10, 10, 10, 300, 0, None)]


@pytest.mark.parametrize("revision", [499, 1, None])
def test_a_newest_revision_below_the_kept_one_measures_every_range(revision: Any) -> None:
    """Nothing is above the kept revision after a reset counter (or an emptied then
    refilled table), yet the rows changed: every range is measured, none kept."""

    async def nothing_changed(since: Any, limit: int) -> list[Any]:
        return []

    async def measure(after: Any, upto: Any) -> list[KeyRange]:
        return FRESH

    async def measure_all() -> list[KeyRange]:
        return FRESH

    async def plan() -> tuple[list[KeyRange], KeptRanges]:
        return await kept_or_measured(
            KEPT, 10, (10, revision), nothing_changed, measure, measure_all
        )

    ranges, kept = anyio.run(plan)
    assert ranges == FRESH and kept.revision == revision
