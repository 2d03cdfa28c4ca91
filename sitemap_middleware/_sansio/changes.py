"""The changes sitemap's rule: entries whose lastmod is within a window, newest first,
at most ``limit``, each URL once, picked in O(limit) memory (a min-heap of ``limit``).

Entries without a lastmod cannot be placed in time and are left out. A lastmod in the
future counts as within the window (it is not older than the window's start). The
version tokens of providers do not say which URLs changed, and no per-URL content ledger
exists: the lastmods are what the document is made of.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from datetime import datetime

from .models import Admitted
from .values import to_datetime
from .xml import split_tail

__all__ = ["RecentN", "changed_at"]


def changed_at(tail: str, entry: object) -> datetime | None:
    """An admitted entry's lastmod as an aware datetime, or ``None`` without one."""
    lastmod = getattr(entry, "lastmod", None)
    if lastmod is not None:
        return to_datetime(lastmod)
    text = split_tail(tail)[0]
    return to_datetime(text) if text else None


class RecentN:
    """The ``n`` newest entries changed at or after ``since``, each URL once.

    Ties go to the entry offered first. A URL offered again keeps its newest lastmod
    (its older offer is superseded in place, so memory stays O(n)).
    """

    def __init__(self, n: int, since: datetime) -> None:
        self.n, self.since = n, since
        self._heap: list[tuple[datetime, int, Admitted]] = []
        self._kept: dict[str, tuple[datetime, int]] = {}  # loc -> its live heap key
        self._offered = 0
        self.undated = 0

    def offer(self, item: Admitted) -> None:
        when = changed_at(item[1], item[2])
        if when is None:
            self.undated += 1
            return
        if when < self.since:
            return
        self._offered += 1
        key = (when, -self._offered)
        loc = item[0]
        held = self._kept.get(loc)
        if held is not None:
            if when <= held[0]:
                return
            # Supersede in place: the heap's order holds (the key only grows).
            index = next(i for i, k in enumerate(self._heap) if k[:2] == held)
            self._heap[index] = (when, held[1], item)
            self._kept[loc] = (when, held[1])
            heapq._siftup(self._heap, index)  # type: ignore[attr-defined]
            return
        if len(self._heap) < self.n:
            heapq.heappush(self._heap, (*key, item))
        elif key > self._heap[0][:2]:
            dropped = heapq.heapreplace(self._heap, (*key, item))
            del self._kept[dropped[2][0]]
        else:
            return
        self._kept[loc] = key

    def extend(self, items: Iterable[Admitted]) -> None:
        for item in items:
            self.offer(item)

    def newest(self) -> list[tuple[datetime, Admitted]]:
        """The kept entries with their lastmods, newest first (ties: first offered)."""
        ordered = sorted(self._heap, key=lambda k: k[:2], reverse=True)
        return [(when, item) for when, _, item in ordered]
