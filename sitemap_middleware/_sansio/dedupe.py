"""One URL, one listing: the first listing wins (issue 27, item 3).

This module alone decides which listing of a URL stays: the first, in the order a
crawler of the index meets them, sections in config order, then positions within a
section. Every later listing is left out, reason ``"duplicate"``, like the other
exclusions (``exclusion.py``): after them (a URL left out on purpose lists nothing), a
batch at a time.

How it stays cheap (the engine's side is ``_engine/dedupe.py``):

* The planning pass puts each admitted URL in one set a batch at a time, and finds
  those the section repeats as it goes (:class:`Fingerprints`). A site of several
  sections keeps each one's distinct fingerprints (Python's ``hash()`` of the absolute
  loc) with its plan (:func:`kept_prints`: a set, or 8 bytes a URL in an array), in
  this process only (the hash is salted per process: nothing stored holds one).
* :func:`collisions` finds the fingerprints seen twice; without any, nothing else
  happens. With some, the sections holding them are read again for those URLs only,
  strings compare (a hash collision of two URLs is no duplicate), and the plan keeps the
  duplicated locs alone, each with its first ``(section, page)``: :class:`Duplicates`.
* Pages only lose URLs (:func:`adjust_pages`): counts, bytes and news counts drop by the
  URLs left out, so no page outgrows its plan; a page left empty joins the next one (the
  last one, the one before it), so the index lists no empty page and the page numbers
  before it stay. A page's lastmod may stay that of a duplicate it no longer lists.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from typing import Any

from .exclusion import Exclusion
from .paging import PagePlan

__all__ = [
    "DUPLICATE",
    "Duplicates",
    "adjust_pages",
    "collisions",
    "Fingerprints",
    "first_listings",
    "kept_prints",
    "page_of",
    "range_firsts",
]

#: Why a listing was left out: the URL is listed before it.
DUPLICATE = "duplicate"


#: URLs a planning pass holds as strings before it holds their hashes alone.
MAX_HELD = 100_000
#: Distinct fingerprints a plan keeps as a set (about 4.5 MB), more as an array.
MAX_KEPT_SET = 1 << 16


class Fingerprints:
    """The URLs a planning pass reads, and those it reads more than once.

    One set takes a batch's locs at once (a string's hash is computed as it goes in, and
    kept on the string); only when the set grew by less than the batch is the batch
    looked at: its repeats within, else the whole batch counts as repeated (a superset:
    ``dedupe.py`` compares the URLs themselves). Past :data:`MAX_HELD` strings the set
    keeps their hashes instead, so a big section costs 8 bytes a URL.
    """

    __slots__ = ("_seen", "_hashed", "_repeated")

    def __init__(self, hashed: bool = False) -> None:
        self._seen: set[Any] = set()
        #: Hashes from the start where they are kept (several sections compare them).
        self._hashed = hashed
        self._repeated: set[int] = set()

    def add(self, locs: list[str]) -> None:
        seen = self._seen
        before = len(seen)
        seen.update(map(hash, locs) if self._hashed else locs)
        lost = len(locs) - (len(seen) - before)
        if lost:
            twice = {loc: n for loc, n in Counter(locs).items() if n > 1}
            within = sum(twice.values()) - len(twice)
            self._repeated.update(map(hash, twice if within == lost else locs))
        if not self._hashed and len(seen) > MAX_HELD:
            self._seen, self._hashed = set(map(hash, seen)), True

    def result(self, keep: bool) -> tuple[Collection[int] | None, frozenset[int]]:
        """The distinct fingerprints (None unless ``keep``: only a site of several
        sections compares them later) and those seen more than once (or maybe so)."""
        prints = None
        if keep:
            prints = kept_prints(self._seen if self._hashed else set(map(hash, self._seen)))
        return prints, frozenset(self._repeated)


def kept_prints(distinct: set[int]) -> Collection[int]:
    """Distinct fingerprints as a plan keeps them: the set itself while small (sets meet
    sets ten times faster than arrays, whose items are boxed one by one), else an
    ``array('q')`` (8 bytes each, against about 70 in a set)."""
    if len(distinct) <= MAX_KEPT_SET:
        return distinct
    return array("q", list(distinct))  # (from a list: taken at C speed)


def collisions(repeated: Iterable[frozenset[int]], prints: Sequence[Collection[int]]) -> set[int]:
    """Fingerprints that occur more than once: within a section (``repeated``) or in
    two sections' distinct ``prints``."""
    found: set[int] = set().union(*repeated)
    seen: set[int] = set()
    for number, distinct in enumerate(prints if len(prints) > 1 else ()):
        if number:  # (each holds distinct fingerprints)
            found.update(seen.intersection(distinct))
        if number < len(prints) - 1:
            seen.update(distinct)
    return found


def first_listings(
    occurrences: Sequence[tuple[str, Sequence[tuple[str, int]]]],
) -> tuple[dict[str, tuple[str, int]], list[list[int]]]:
    """The first ``(section, position)`` of every loc listed more than once, and per
    section the indices of its occurrences that are left out.

    ``occurrences``: per section in config order, ``(loc, raw position)`` in order.
    """
    first: dict[str, tuple[str, int]] = {}
    counts: Counter[str] = Counter()
    dropped: list[list[int]] = []
    for section, found in occurrences:
        left: list[int] = []
        for index, (loc, position) in enumerate(found):
            counts[loc] += 1
            if loc in first:
                left.append(index)
            else:
                first[loc] = (section, position)
        dropped.append(left)
    return {loc: where for loc, where in first.items() if counts[loc] > 1}, dropped


def adjust_pages(
    pages: Sequence[PagePlan], dropped: Iterable[tuple[int, int, bool]]
) -> tuple[tuple[PagePlan, ...], list[int]]:
    """``pages`` without the dropped listings ``(0-based page, size, news)``, and the new
    0-based number of each old page. An emptied page's raw range (and keys) joins the
    next page (the last one's, the page before it), so its positions still belong to a
    page; a page whose ``urls`` is 0 already (nothing it holds is listed) is one too."""
    urls = [page.urls for page in pages]
    sizes = [page.size for page in pages]
    news = [page.news for page in pages]
    for number, size, is_news in dropped:
        urls[number] -= 1
        sizes[number] -= size
        news[number] -= is_news
    kept: list[PagePlan] = []
    numbers: list[int] = []
    pending: PagePlan | None = None  # the first of emptied pages waiting for the next one
    for number, page in enumerate(pages):
        if urls[number] <= 0:
            pending = page if pending is None else pending
            numbers.append(len(kept))
            continue
        first = page if pending is None else pending
        pending = None
        kept.append(
            replace(
                page,
                start=first.start,
                first_key=first.first_key,
                urls=urls[number],
                size=max(sizes[number], 0),
                news=max(news[number], 0),
            )
        )
        numbers.append(len(kept) - 1)
    if pending is not None and kept:  # emptied last pages: joined to the one before
        kept[-1] = replace(kept[-1], stop=pages[-1].stop, last_key=pages[-1].last_key)
    numbers = [min(n, len(kept) - 1) for n in numbers] if kept else [0] * len(pages)
    return tuple(kept), numbers


def range_firsts(
    listings: Sequence[tuple[Any, str, bool, int]], number: int | None, after: Any, upto: Any
) -> dict[str, bool]:
    """Each duplicated loc a key-range page lists, and whether its first listing is
    there. ``listings``: a keyed plan's ``(key, loc, first, page)``; ``number``: the
    planned page (1-based) the range ``(after, upto]`` is, else None (a range the plan
    does not name: its keys are compared, as the database would for integers)."""
    firsts: dict[str, bool] = {}
    for key, loc, first, page in listings:
        if number is not None:
            inside = page == number
        else:
            try:
                inside = (after is None or key > after) and (upto is None or key <= upto)
            except TypeError:  # (a made-up range of another type: it lists nothing)
                inside = False
        if inside:
            firsts[loc] = firsts.get(loc, False) or first
    return firsts


def page_of(starts: list[int], position: int) -> int:
    """The page holding raw ``position`` (pages are ordered by their raw start)."""
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= position:
            low = middle
        else:
            high = middle - 1
    return low


class Duplicates(Exclusion):
    """The section's other exclusions, then the duplicates rule, for one page's render.

    ``firsts``: each duplicated loc the section lists, and whether this page is where
    it is listed first (then its first occurrence here stays, any later one is left out).
    A URL the page wrote already is left out too, whatever the plan knew: rows that
    changed after it was made (a write between a version's query and the rows') must not
    list a URL twice on one page.
    """

    __slots__ = ("_firsts", "_then", "_written")

    def __init__(self, firsts: dict[str, bool], then: Exclusion | None) -> None:
        super().__init__((), None)
        self._firsts = firsts
        self._then = then
        self._written: set[str] = set()

    def __bool__(self) -> bool:
        return True

    @property
    def token(self) -> str:
        return self._then.token if self._then is not None else ""

    def reasons(self, locs: list[str], cut: int) -> dict[int, str]:
        left = self._then.reasons(locs, cut) if self._then else {}
        firsts, written = self._firsts, self._written
        batch = set(locs)
        if (
            len(batch) == len(locs)
            and written.isdisjoint(batch)
            and firsts.keys().isdisjoint(batch)
        ):
            written |= batch  # the common batch: set operations alone
            return left
        for index, loc in enumerate(locs):
            if index in left:
                continue
            if loc in written or firsts.get(loc) is False:
                left[index] = DUPLICATE
            else:
                written.add(loc)
        return left

    def why(self, loc: str, cut: int) -> str | None:
        return self._then.why(loc, cut) if self._then is not None else None
