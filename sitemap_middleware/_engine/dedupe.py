"""One URL, one listing, over a site's plans (the rule: ``_sansio/dedupe.py``).

Every section takes part, in one of two groups (``plan_memo.py`` calls this for each): the
news sections, and the others. Google reads news sitemaps apart from the others (an
article is also listed in a regular sitemap) and asks that no URL be in two of them.
A page lists a URL only where its group lists it first. The fingerprints are each
plan's ``prints`` and ``repeated``: from its planning pass, or for a plan from key
ranges from its chunks (``dedupe_scan.py``). Without a fingerprint seen twice this costs
one set per section; with some, the sections (the chunks) holding them are read again
for those URLs alone.

A page served by key range (``plan.keyed``) finds what it leaves out by key
(``keyed_duplicates``): it is served by its range, whatever any plan says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .._config import SitemapConfig, _ResolvedSection
from .._sansio.dedupe import Duplicates, adjust_pages, collisions, first_listings, range_firsts
from .._sansio.exclusion import Exclusion
from .._sansio.paging import encode_key_range
from .._sansio.urls import BaseURL
from .dedupe_scan import Listing, chunk_listings, read_listings
from .planning import SectionPlan, takes_part

__all__ = ["deduplicated", "page_exclusion", "range_exclusion", "takes_part"]


async def deduplicated(
    config: SitemapConfig,
    base: BaseURL,
    pairs: Sequence[tuple[_ResolvedSection, SectionPlan]],
    reread: set[str] | None = None,
) -> list[SectionPlan]:
    """The plans of ``pairs`` (sections in config order) without the listings of URLs
    listed before them; each plan names its duplicated locs' first listings.
    ``reread`` receives the names of the sections read again (their rows may have
    changed since their planning pass: that pass's rows are not to be served)."""
    plans = [plan for _, plan in pairs]
    prints = [plan.prints for plan in plans if plan.prints is not None]
    found = collisions([plan.repeated for plan in plans], prints)
    if not found:
        return plans
    read: list[tuple[str, list[Listing]]] = []
    for section, plan in pairs:
        hits = not found.isdisjoint(plan.repeated) or (
            plan.prints is not None and not found.isdisjoint(plan.prints)
        )
        listings = await _listings(config, section, base, plan, found) if hits else []
        if hits and reread is not None:
            reread.add(section.name)
        read.append((section.name, listings))
    firsts, dropped = first_listings(
        [(name, [(each[0], each[1]) for each in listings]) for name, listings in read]
    )
    if not firsts:
        return plans  # fingerprints alike, URLs not
    renumbered: dict[str, list[int]] = {}
    adjusted: list[SectionPlan] = []
    for plan, (name, listings), left in zip(plans, read, dropped, strict=True):
        gone = [(listings[i][5], listings[i][2], listings[i][3]) for i in left]
        pages, numbers = adjust_pages(plan.pages, gone) if gone else (plan.pages, [])
        renumbered[name] = numbers
        adjusted.append(replace(plan, pages=pages, dropped=len(left)))
    page_at = {
        (name, each[1]): _new_page(renumbered[name], each[5])
        for name, listings in read
        for each in listings
    }
    # Each plan names the first listing of the URLs it leaves out (so that it depends on
    # the sections up to its own alone: its page tags do not move with later ones).
    pages_of = {loc: (s, page_at[s, p]) for loc, (s, p) in firsts.items()}
    done: list[SectionPlan] = []
    for plan, (name, listings), left in zip(adjusted, read, dropped, strict=True):
        locs = {listings[i][0] for i in left}
        if not locs:
            done.append(plan)
            continue
        keyed: tuple[tuple[Any, str, bool, int], ...] = ()
        if plan.keyed:  # (in key order, as read)
            keyed = tuple(
                (each[4], each[0], firsts[each[0]] == (name, each[1]), page_at[name, each[1]])
                for each in listings
                if each[0] in locs
            )
        duplicates = tuple(sorted({(loc, *pages_of[loc]) for loc in locs}))
        done.append(replace(plan, duplicates=duplicates, keyed_duplicates=keyed))
    return done


def _new_page(numbers: list[int], old: int) -> int:
    """The 1-based number, after adjusting, of a listing's 0-based page."""
    return (numbers[old] if numbers else old) + 1


async def _listings(
    config: SitemapConfig,
    section: _ResolvedSection,
    base: BaseURL,
    plan: SectionPlan,
    wanted: set[int],
) -> list[Listing]:
    """The listings among the plan's items whose fingerprint is ``wanted``, admitted and
    measured as the planning pass did (one larger than a page lists none)."""
    if plan.chunks:
        return await chunk_listings(config, section, base, plan, wanted)
    starts = [page.start for page in plan.pages]
    _, _, found = await read_listings(
        config, section, base, limit=plan.total, wanted=wanted, starts=starts
    )
    return found


def page_exclusion(section: _ResolvedSection, plan: SectionPlan, number: int) -> Exclusion:
    """What page ``number`` (1-based) of the section leaves out: its exclusions, then the
    listings of URLs listed before (and any URL the page wrote already)."""
    name = section.name
    firsts = {loc: (s, n) == (name, number) for loc, s, n in plan.duplicates}
    return Duplicates(firsts, section.exclusion)


def range_exclusion(
    section: _ResolvedSection, plan: SectionPlan, after: Any, upto: Any, number: int | None = None
) -> tuple[Exclusion | None, str]:
    """What the key range ``(after, upto]`` of a keyed plan (its page ``number``, if
    known) leaves out, and a text of it for the page's tag (it moves exactly when what
    the page leaves out does)."""
    if not plan.keyed_duplicates:
        return Duplicates({}, section.exclusion), ""
    if number is None:
        token = encode_key_range(after, upto)
        named = enumerate(plan.key_ranges(), 1)
        number = next((n for n, each in named if token is not None and each == token), None)
    firsts = range_firsts(plan.keyed_duplicates, number, after, upto)
    if not firsts:
        return Duplicates({}, section.exclusion), ""
    return Duplicates(firsts, section.exclusion), repr(sorted(firsts.items()))
