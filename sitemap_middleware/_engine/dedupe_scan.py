"""Fingerprints of the sections that ``dedupe.py`` reads: one URL, one listing.

A planning pass takes the fingerprints of the URLs it reads (``planning.py``), but a plan
from the database's key ranges (``range_plan.py``) reads no row. For such a section this
module reads them, a chunk of keys at a time, and keeps each chunk with its range's own
version (``range_version``, an aggregate of those rows alone): the next plan reads again
only the chunks whose rows changed, so a write costs the rows around it, not the table.

* A chunk holds the key and the fingerprint (``hash()`` of the absolute loc: this
  process only) of each listing, 16 bytes a URL for integer keys.
* Integer keys order in Python as in the database: chunks keep their bounds from one
  plan to the next (page bounds the first time; a chunk grown past two pages is split),
  and a listing's page is found by its key. Other keys (a collation may order them
  otherwise) are read a page at a time: chunks are the plan's pages.
* The chunks also count each page's listings as they are now (the database counts
  rows that exclusions leave out): a page with none is not listed, and no count grows.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any

from .._config import SitemapConfig, _ResolvedSection
from .._providers.base import SupportsKeyset
from .._sansio.dedupe import adjust_pages, kept_prints
from .._sansio.urls import BaseURL
from .._sansio.urlset_writer import UrlsetWriter
from .planning import PLAN_BATCH_SIZE, SectionPlan, news_cutoff, page_room, range_version
from .stream import EntryStream

__all__ = ["Chunk", "Listing", "ScanBook", "chunk_listings", "read_listings"]

#: A listing read again: loc, position (in the order read), size, news, key, 0-based page.
Listing = tuple[str, int, int, bool, Any, int]

#: Chunks kept: a few keyed sections times a few base URLs (as plans are).
MAX_SCANS = 256


@dataclass(frozen=True, slots=True)
class Chunk:
    """The listings of the keys ``(after, upto]`` (None: open), as read under ``token``
    (its range's version; "": read again next time)."""

    after: Any
    upto: Any
    token: str
    keys: Sequence[Any]
    prints: array[int]
    #: The fingerprints read again for their URLs, and those listings (loc, size, news,
    #: key): a duplicate that stays is read once per version of its chunk, not per plan.
    known: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


class ScanBook:
    """The chunks of each keyed section's last scan, per base URL."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str], tuple[Chunk, ...]] = OrderedDict()

    async def scanned(
        self,
        config: SitemapConfig,
        section: _ResolvedSection,
        base: BaseURL,
        plan: SectionPlan,
        retain: bool,
    ) -> SectionPlan:
        """``plan`` (from key ranges) with its fingerprints, its chunks and each page's
        listings counted; chunks whose range's version moved (or new ones) are read."""
        name = (base.prefix, section.name)
        before = self._kept.get(name, ())
        ints = all(type(page.last_key) is int for page in plan.pages)
        if ints and before and all(type(c.upto) in (int, type(None)) for c in before):
            bounds = [(chunk.after, chunk.upto) for chunk in before]
        else:
            bounds = _page_bounds(plan)
        old = {(chunk.after, chunk.upto): chunk for chunk in before}
        chunks: list[Chunk] = []
        for after, upto in bounds:
            _, version = await range_version(config, section, after, upto)
            token = version.token if version is not None and version.token else ""
            kept = old.get((after, upto))
            if token and kept is not None and kept.token == token:
                chunks.append(kept)
                continue
            keys, prints, _ = await read_listings(config, section, base, key_range=(after, upto))
            chunk = Chunk(after, upto, token, _compact(keys), prints)
            chunks.extend(_split(chunk, section.max_urls) if ints else [chunk])
        self._kept[name] = tuple(chunks)
        self._kept.move_to_end(name)
        while len(self._kept) > MAX_SCANS:
            self._kept.popitem(last=False)
        return _fingerprinted(plan, chunks, retain, ints)


def _page_bounds(plan: SectionPlan) -> list[tuple[Any, Any]]:
    """One chunk a page, the last open (rows past it are listed once planned)."""
    lasts: list[Any] = [page.last_key for page in plan.pages[:-1]]
    return list(zip([None, *lasts], [*lasts, None], strict=True))


def _compact(keys: list[Any]) -> Sequence[Any]:
    """Integer keys in 8 bytes each where they fit."""
    if keys and all(type(key) is int for key in keys):
        try:
            return array("q", keys)
        except OverflowError:
            pass
    return keys


def _split(chunk: Chunk, size: int) -> list[Chunk]:
    """A chunk grown past two pages, cut about every ``size`` listings between keys
    (pieces are read again next time: their ranges have no version yet)."""
    keys = chunk.keys
    if len(keys) <= 2 * size:
        return [chunk]
    cuts = [i for i in range(size, len(keys) - size + 1, size) if keys[i] != keys[i - 1]]
    pieces: list[Chunk] = []
    start, after = 0, chunk.after
    for cut in [*cuts, len(keys)]:
        upto = keys[cut - 1] if cut < len(keys) else chunk.upto
        pieces.append(Chunk(after, upto, "", keys[start:cut], chunk.prints[start:cut]))
        start, after = cut, upto
    return pieces


def _fingerprinted(plan: SectionPlan, chunks: list[Chunk], retain: bool, ints: bool) -> SectionPlan:
    seen: set[int] = set()
    repeated: set[int] = set()
    for chunk in chunks:
        unique = set(chunk.prints)
        if len(unique) < len(chunk.prints):
            repeated.update(h for h, n in Counter(chunk.prints).items() if n > 1)
        repeated.update(seen.intersection(unique))
        seen |= unique
    if ints:
        keys: Sequence[Any] = list(chain.from_iterable(chunk.keys for chunk in chunks))
        lasts = [page.last_key for page in plan.pages]
        edges = [bisect_right(keys, last) for last in lasts]
        counts = [b - a for a, b in zip([0, *edges], edges, strict=False)]
    else:
        counts = [len(chunk.keys) for chunk in chunks]
    pages = tuple(
        replace(page, urls=min(page.urls, count))
        for page, count in zip(plan.pages, counts, strict=False)
    )
    pages, numbers = adjust_pages(pages, ())
    # A chunk's page: by its keys (integers), else the page it is (one chunk a page).
    places = [-1] * len(chunks) if ints else [*numbers, 0][: len(chunks)]
    return replace(
        plan,
        pages=pages,
        prints=kept_prints(seen) if retain else None,
        repeated=frozenset(repeated),
        chunks=tuple(zip(chunks, places, strict=True)),
    )


async def chunk_listings(
    config: SitemapConfig,
    section: _ResolvedSection,
    base: BaseURL,
    plan: SectionPlan,
    wanted: set[int],
) -> list[Listing]:
    """The listings whose fingerprint is ``wanted`` of a scanned plan's chunks, each
    chunk holding one read again (its keys alone)."""
    lasts = [page.last_key for page in plan.pages]
    found: list[Listing] = []
    if not lasts:
        return found  # (rows read since a plan of none: listed once planned)
    for chunk, number in plan.chunks:
        hits = wanted.intersection(chunk.prints)
        if not hits:
            continue
        known = chunk.known
        if not hits <= known.get("prints", set()):
            _, _, read = await read_listings(
                config, section, base, key_range=(chunk.after, chunk.upto), wanted=hits
            )
            known["prints"], known["listings"] = hits, [(e[0], e[2], e[3], e[4]) for e in read]
        for loc, size, news, key in known["listings"]:
            if hash(loc) not in hits:
                continue
            page = number if number >= 0 else min(bisect_left(lasts, key), len(lasts) - 1)
            found.append((loc, len(found), size, news, key, page))
    return found


async def read_listings(
    config: SitemapConfig,
    section: _ResolvedSection,
    base: BaseURL,
    *,
    key_range: tuple[Any, Any] | None = None,
    limit: int | None = None,
    wanted: set[int] | None = None,
    starts: list[int] | None = None,
) -> tuple[list[Any], array[int], list[Listing]]:
    """One pass over the section's admitted listings (a key range of it, or its first
    ``limit`` items), as the planning pass admits them: each one's key and fingerprint
    or, given ``wanted``, the listings of those fingerprints alone, measured (``starts``:
    the plan's page starts; one larger than a page lists nothing)."""
    keyed = key_range is not None or isinstance(section.provider, SupportsKeyset)
    stream = EntryStream(
        section.name,
        section.provider,
        base,
        limit=limit,
        timeout=config.provider_timeout,
        strict=config.strict,
        quiet=True,
        news_cutoff=news_cutoff(config, section),
        keyed=keyed,
        key_range=key_range or (None, None),
        batch_size=PLAN_BATCH_SIZE,
        exclusion=section.exclusion,
    )
    measurer = UrlsetWriter(
        label=section.name,
        resolve=base.join_if_relative,
        max_urls=section.max_urls,
        max_bytes=config.max_bytes_per_page,
    )
    room = page_room(config, base)
    keys: list[Any] = []
    prints: array[int] = array("q")
    found: list[Listing] = []
    try:
        while raw := await stream.next_raw():
            start = stream.pulled - len(raw)
            plain = stream.plain(raw)
            if plain is not None:
                places = stream.plain_positions
                at = [start + (places[i] if places is not None else i) for i in range(len(plain))]
                locs = plain.locs
            else:
                items = stream.admit_one_by_one(raw)
                at = [start + i for i, item in enumerate(items) if item is not None]
                valid = [item for item in items if item is not None]
                locs = [item[0] for item in valid]
            hashes = list(map(hash, locs))
            batch_keys = [stream.key_at(p) for p in at] if keyed else [None] * len(at)
            if wanted is None:
                keys += batch_keys
                prints.extend(hashes)
                continue
            hits = [i for i, h in enumerate(hashes) if h in wanted]
            if not hits:
                continue
            if plain is not None:
                tails = plain.tail_sizes()
                sizes = measurer.plain_sizes([locs[i] for i in hits], [tails[i] for i in hits])
                news = [False] * len(hits)
            else:
                sizes = measurer.sizes([valid[i] for i in hits])
                extended = [valid[i][2] for i in hits]
                news = [entry is not None and entry.news is not None for entry in extended]
            for i, size, is_news in zip(hits, sizes, news, strict=True):
                if size <= room:
                    page = _page_of(starts, at[i]) if starts else 0
                    found.append((locs[i], at[i], size, is_news, batch_keys[i], page))
    finally:
        await stream.aclose()
    return keys, prints, found


def _page_of(starts: list[int], position: int) -> int:
    return max(bisect_right(starts, position) - 1, 0)
