"""One URL, one listing, over a site's plans (the rule: ``_sansio/dedupe.py``).

Sections whose plans read their entries (every section but those paged by key ranges:
``plan.prints`` and ``plan.repeated`` are their fingerprints) take part: a page of one
of them lists a URL only where the site lists it first. Without a fingerprint seen twice
this costs one set per section; with some, the sections holding them are read again for
those URLs alone.

Sections paged by key ranges (SQL, Django querysets: :class:`SupportsKeyset`) take no
part: their pages are served by key range, whatever any plan says, and a plan from the
database reads no entry. Their URLs are neither left out nor leave any out; nor are a
news section's (``Section(news=True)``): Google News reads it apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .._config import SitemapConfig, _ResolvedSection
from .._sansio.dedupe import Duplicates, adjust_pages, collisions, first_listings, page_of
from .._sansio.exclusion import Exclusion
from .._sansio.render import UrlsetWriter
from .._sansio.urls import BaseURL
from .plan import PLAN_BATCH_SIZE, SectionPlan, news_cutoff, page_room, takes_part
from .stream import EntryStream

__all__ = ["deduplicated", "page_exclusion", "takes_part"]

#: A listing read again: its loc, raw position, size and whether it is news.
_Found = tuple[str, int, int, bool]


async def deduplicated(
    config: SitemapConfig, base: BaseURL, pairs: Sequence[tuple[_ResolvedSection, SectionPlan]]
) -> list[SectionPlan]:
    """The plans of ``pairs`` (sections in config order) without the listings of URLs
    listed before them; each plan names its duplicated locs' first listings."""
    plans = [plan for _, plan in pairs]
    prints = [plan.prints for plan in plans if plan.prints is not None]
    found = collisions([plan.repeated for plan in plans], prints)
    if not found:
        return plans
    read: list[tuple[str, list[_Found]]] = []
    for section, plan in pairs:
        hits = not found.isdisjoint(plan.repeated) or (
            plan.prints is not None and not found.isdisjoint(plan.prints)
        )
        listings = await _listings(config, section, base, plan.total, found) if hits else []
        read.append((section.name, listings))
    firsts, dropped = first_listings(
        [(name, [(loc, position) for loc, position, _, _ in listings]) for name, listings in read]
    )
    if not firsts:
        return plans  # fingerprints alike, URLs not
    numbers: dict[str, tuple[list[int], list[int]]] = {}
    adjusted: list[SectionPlan] = []
    for plan, (name, listings), left in zip(plans, read, dropped, strict=True):
        gone = [listings[i][1:] for i in left]
        pages, renumbered = adjust_pages(plan.pages, gone) if gone else (plan.pages, [])
        numbers[name] = ([page.start for page in plan.pages], renumbered)
        adjusted.append(replace(plan, pages=pages, dropped=len(left)))

    def first_page(section: str, position: int) -> int:
        starts, renumbered = numbers[section]
        number = page_of(starts, position)
        return (renumbered[number] if renumbered else number) + 1

    # Each plan names the first listing of the URLs it leaves out (so that it depends on
    # the sections up to its own alone: its page tags do not move with later ones).
    pages_of = {loc: (s, first_page(s, p)) for loc, (s, p) in firsts.items()}
    return [
        replace(plan, duplicates=tuple(sorted({(loc, *pages_of[loc]) for loc in locs})))
        if (locs := {listings[i][0] for i in left})
        else plan
        for plan, (_, listings), left in zip(adjusted, read, dropped, strict=True)
    ]


async def _listings(
    config: SitemapConfig, section: _ResolvedSection, base: BaseURL, total: int, wanted: set[int]
) -> list[_Found]:
    """The listings among the first ``total`` items whose fingerprint is ``wanted``,
    admitted and measured as the planning pass did (one larger than a page lists none)."""
    stream = EntryStream(
        section.name,
        section.provider,
        base,
        limit=total,
        timeout=config.provider_timeout,
        strict=config.strict,
        quiet=True,
        news_cutoff=news_cutoff(config, section),
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
    found: list[_Found] = []
    try:
        while raw := await stream.next_raw():
            start = stream.pulled - len(raw)
            plain = stream.plain(raw)
            if plain is not None:
                locs = plain.locs
                hits = [i for i, print_ in enumerate(map(hash, locs)) if print_ in wanted]
                if not hits:
                    continue
                tails = plain.tail_sizes()
                sizes = measurer.plain_sizes([locs[i] for i in hits], [tails[i] for i in hits])
                places = stream.plain_positions
                for i, size in zip(hits, sizes, strict=True):
                    position = start + (places[i] if places is not None else i)
                    found.append((locs[i], position, size, False))
                continue
            for offset, item in enumerate(stream.admit_one_by_one(raw)):
                if item is not None and hash(item[0]) in wanted:
                    (size,) = measurer.sizes([item])
                    news = item[2] is not None and item[2].news is not None
                    found.append((item[0], start + offset, size, news))
    finally:
        await stream.aclose()
    return [listing for listing in found if listing[2] <= room]


def page_exclusion(section: _ResolvedSection, plan: SectionPlan, number: int) -> Exclusion | None:
    """What page ``number`` (1-based) of the section leaves out: its exclusions, then the
    listings of URLs listed before (None: nothing to leave out)."""
    if not plan.duplicates:
        return section.exclusion
    name = section.name
    firsts = {loc: (s, n) == (name, number) for loc, s, n in plan.duplicates}
    return Duplicates(firsts, section.exclusion)
