"""Planning: what each section holds (its pages, their sizes and lastmods) before rendering.

A plan comes from one measuring pass over the section (see ``_sansio/paging.py`` for why
sizes are measured, not estimated). When a plan is reused is decided in ``plan_memo.py``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import ProviderError
from .._providers.base import (
    ProviderVersion,
    SupportsKeyset,
    SupportsRangeVersion,
    SupportsVersion,
)
from .._sansio.batches import PlainBatch
from .._sansio.dedupe import Fingerprints
from .._sansio.etag import version_parts
from .._sansio.paging import PageCutter, PagePlan, encode_key_range
from .._sansio.routing import STYLESHEET_NAME, page_name
from .._sansio.urls import BaseURL
from .._sansio.urlset_writer import UrlsetWriter, urlset_overhead
from .._sansio.values import to_datetime
from .measure import Measuring
from .page_dates import provider_lastmods
from .range_plan import plan_by_ranges
from .stream import EntryStream, call_provider

#: Why rows were left out of a plan made from key ranges (the database counted them).
LOG_NULL_LOCATION = "a row whose location reads a NULL column"

#: Items a planning batch may take of what the provider already handed over: per-batch
#: costs (a checkpoint, a timeout scope, a batch check) are paid half as often, while a
#: batch's rows still fit a CPU cache for its column passes (larger batches measured
#: slower, not faster).
PLAN_BATCH_SIZE = 1000

__all__ = [
    "PlannedPage",
    "SectionPlan",
    "allows_empty",
    "last_modified",
    "news_cutoff",
    "page_room",
]
__all__ += ["plan_section", "range_version", "section_version", "stylesheet_href", "takes_part"]
__all__ += ["ledger_rules", "restamped"]


@dataclass(frozen=True, slots=True)
class SectionPlan:
    """A section's pages (a plain value: offsets, counts, sizes, lastmods, key ranges)."""

    name: str
    pages: tuple[PagePlan, ...]
    total: int
    version: ProviderVersion | None
    keyed: bool = False
    #: Items the pass left out (invalid, or larger than a page), and why the first was:
    #: what it reports (see ``PlanMemo``), not part of the plan (equal plans list alike).
    left_out: int = field(default=0, compare=False)
    first_left_out: str = field(default="", compare=False)
    #: Items left out on purpose, by reason (``_sansio/exclusion.py``), as the pass
    #: counted them: reported once per content (``plan_memo.py``), not part of the plan.
    excluded: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    #: One URL, one listing (``dedupe.py``): the fingerprints of the URLs the pass read
    #: (this process only), each duplicated loc the section lists with its first
    #: ``(section, page)``, and the listings left out as duplicates.
    prints: Collection[int] | None = field(default=None, compare=False, repr=False)
    repeated: frozenset[int] = field(default=frozenset(), compare=False, repr=False)
    duplicates: tuple[tuple[str, str, int], ...] = ()
    dropped: int = field(default=0, compare=False)
    #: Pages served by key range: each listing of a duplicated loc, ``(key, loc, first,
    #: page)`` (``_sansio/dedupe.py``: ``range_firsts``), in key order.
    keyed_duplicates: tuple[tuple[Any, str, bool, int], ...] = ()
    #: Planned from the database's key ranges (no row read), and the chunks of keys
    #: read since for the fingerprints (``dedupe_scan.py``).
    ranged: bool = field(default=False, compare=False)
    #: Its pages' bytes estimated from row counts (``range_plan.py``): each is confirmed
    #: when rendered, and one that outgrows its budget ends such plans (``plan_memo.py``).
    estimated: bool = field(default=False, compare=False)
    chunks: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    #: The ledger's tokens before and after the pass, when no other stream moved them.
    span: tuple[str, str] | None = field(default=None, compare=False, repr=False)

    def key_ranges(self) -> list[str | None]:
        """The key range naming each page of a keyset plan (what the index links)."""
        ranges: list[str | None] = []
        after = None
        for page in self.pages:
            ranges.append(encode_key_range(after, page.last_key) if self.keyed else None)
            after = page.last_key
        return ranges

    @property
    def count(self) -> int:
        """URLs written over all pages (invalid entries are not counted)."""
        return sum(page.urls for page in self.pages)

    @property
    def size(self) -> int:
        """Bytes of all ``<url>`` elements (what one file of the whole section would hold)."""
        return sum(page.size for page in self.pages)

    @property
    def news(self) -> int:
        return sum(page.news for page in self.pages)

    @property
    def layout(self) -> str:
        """A digest of the page boundaries, so validators change when pages move."""
        text = repr(
            [(p.start, p.stop, p.urls, p.size, p.first_key, p.last_key) for p in self.pages]
        ) + repr((self.duplicates, self.keyed_duplicates))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    @property
    def validator_parts(self) -> tuple[str, ...] | None:
        """Strings for an ETag, or None if the provider cannot vouch for its freshness."""
        parts = version_parts(self.version)
        return (self.name, self.layout, *parts) if parts else None


@dataclass(frozen=True, slots=True)
class PlannedPage:
    """A page target resolved against its section's plan: page ``number`` of ``plan``."""

    section: _ResolvedSection
    plan: SectionPlan
    page: PagePlan
    previous: PagePlan | None
    number: int

    @property
    def pages(self) -> int:
        return len(self.plan.pages)

    def listed_name(self, prefix: str) -> str:
        """The XML file name the index lists this page under (with its key range)."""
        ranges = self.plan.key_ranges()
        token = ranges[self.number - 1] if self.number <= len(ranges) else None
        return page_name(prefix, self.plan.name, self.number, key_range=token)


def news_cutoff(config: SitemapConfig, section: _ResolvedSection) -> datetime | None:
    """Oldest publication time a news section keeps, moved once an hour (None: no window).

    Whole hours keep the window, and so the validators that include it, identical on
    every instance and for an hour at a time.
    """
    if not section.news or config.news_max_age is None:
        return None
    now = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
    return now - config.news_max_age


async def section_version(
    config: SitemapConfig, section: _ResolvedSection
) -> ProviderVersion | None:
    provider = section.provider
    if not isinstance(provider, SupportsVersion):
        return None
    version = await call_provider(section.name, config.provider_timeout, provider.version)
    if not isinstance(version, ProviderVersion):
        raise ProviderError(section.name, f"version() returned {version!r}, not ProviderVersion")
    return _in_news_window(config, section, version)


async def range_version(
    config: SitemapConfig, section: _ResolvedSection, after: Any, upto: Any
) -> tuple[int | None, ProviderVersion | None]:
    """Rows and version of one key range (see :class:`SupportsRangeVersion`), or of the
    whole section (rows unknown) for a provider that cannot tell a range's apart."""
    provider = section.provider
    if not isinstance(provider, SupportsRangeVersion):
        return None, await section_version(config, section)
    answer = await call_provider(
        section.name, config.provider_timeout, lambda: provider.range_version(after, upto)
    )
    match answer:
        case (int(rows), ProviderVersion() as version) if rows >= 0:
            return rows, _in_news_window(config, section, version)
    raise ProviderError(
        section.name, f"range_version() returned {answer!r:.100}, not (rows, ProviderVersion)"
    )


def _in_news_window(
    config: SitemapConfig, section: _ResolvedSection, version: ProviderVersion
) -> ProviderVersion:
    cutoff = news_cutoff(config, section)
    if cutoff is not None and (version.token or version.last_modified):
        # The window changes what is served without the data changing: it is part of
        # the version.
        token = f"{version.token or ''}|news>{cutoff.isoformat()}"
        version = ProviderVersion(token=token, last_modified=version.last_modified)
    rules = section.exclusion.token if section.exclusion is not None else ""
    if rules and version.token:  # so are the app's robots.txt rules, once read
        version = ProviderVersion(f"{version.token}|{rules}", version.last_modified)
    return version


def ledger_rules(section: _ResolvedSection) -> tuple[str, str, str] | None:
    """The rules' token of a section whose in-process ledger a pass stamps, that token's
    other rules (robots.txt, the guard) and its ledger's: see :func:`restamped`."""
    exclusion = section.exclusion
    book = exclusion.ledger if exclusion is not None else None
    if exclusion is None or book is None or book.loader is not None:
        return None  # (a fleet's records arrive on their own)
    if book.ledger.source == "guard":
        return None  # (so do the guard's digests)
    robots = exclusion.robots.token if exclusion.robots is not None else ""
    guard = exclusion.guard.token(exclusion.section) if exclusion.guard is not None else ""
    return exclusion.token, f"{robots}|{guard}", book.token(exclusion.section)


def restamped(
    section: _ResolvedSection,
    version: ProviderVersion | None,
    before: tuple[str, str, str] | None,
    span: tuple[str, str] | None,
) -> ProviderVersion | None:
    """``version`` (named by the rules ``before``, from :func:`ledger_rules`) naming the
    ledger's records as a planning pass under it left them, or None when they did not
    move (or another rule did). The pass wrote what its records say: a pass under this
    version would write the same, so its plan holds for it, if the records moved by
    that pass alone (``span``: see ``Reading.span``; a render dating new content
    meanwhile left records the plan does not write)."""
    if before is None or version is None or not version.token:
        return None
    after = ledger_rules(section)
    if after is None or after[0] == before[0] or after[1] != before[1]:
        return None
    if span is None or span != (before[2], after[2]):
        return None
    token, rules = version.token, before[0]
    if rules:
        if not token.endswith("|" + rules):
            return None
        token = token[: -len(rules) - 1]
    return ProviderVersion(f"{token}|{after[0]}", version.last_modified)


def allows_empty(section: _ResolvedSection) -> bool:
    """Whether the provider answers an empty page 1 with an empty urlset (Django's do)."""
    return getattr(section.provider, "allow_empty_first_page", False) is True


def page_room(config: SitemapConfig, base: BaseURL) -> int:
    """Bytes a page's ``<url>`` elements may take: the budget minus the document around them."""
    return config.max_bytes_per_page - urlset_overhead(stylesheet_href(config, base))


def stylesheet_href(config: SitemapConfig, base: BaseURL) -> str | None:
    stylesheet = config.stylesheet
    if stylesheet is True:
        return base.directory + STYLESHEET_NAME
    return stylesheet or None


def takes_part(section: _ResolvedSection) -> bool:
    """Whether ``dedupe.py`` deduplicates the section (a news section with the other
    news sections alone: Google News reads them apart; their articles are listed
    elsewhere too)."""
    return section.dedupe


async def plan_section(
    config: SitemapConfig,
    section: _ResolvedSection,
    base: BaseURL,
    version: ProviderVersion | None,
    *,
    until_page: int | None = None,
    keep: list[PlainBatch] | None = None,
    key_range: tuple[Any, Any] | None = None,
    retain: bool = True,
    counted: bool = True,
) -> SectionPlan:
    """Measure a section in one pass and cut it into pages.

    ``until_page`` (1-based) stops the pass once that page is complete: enough to serve
    it, for providers whose plan is not kept. ``keep`` receives the pass's admitted
    batches when the section is one page of plain batches (else it is left empty), so
    that the render that follows need not read and admit them again: at most one page's
    entries are ever held. ``key_range`` measures the rows of that key range only.
    ``retain``: keep the URLs' fingerprints (``dedupe.py``), for other sections' to meet.
    ``counted``: whether pages may be planned from row counts (see ``range_plan.py``).

    A keyset section whose provider can size its key ranges in the database is planned
    from them (``range_plan.py``): no row is read here unless it has to be measured.
    """
    provider = section.provider
    keyed = isinstance(provider, SupportsKeyset)
    measurer = UrlsetWriter(
        label=section.name,
        resolve=base.join_if_relative,
        max_urls=section.max_urls,
        max_bytes=config.max_bytes_per_page,
    )
    max_urls, room = section.max_urls, page_room(config, base)
    if keyed:
        # Headroom: rows inserted into a key range between the index and its page (up to
        # 1 % of it) still fit, so no row that existed throughout a crawl is pushed off
        # its page. Beyond that the page is cut at the budget (logged).
        max_urls, room = max_urls - max_urls // 100, room - room // 100
    if keyed and key_range is None and not config.strict and not section.news:
        ranged = await _plan_by_ranges(
            config, section, base, version, measurer, (max_urls, room), counted
        )
        if ranged is not None:
            return ranged  # (``keep`` stays empty: no row was read)
    stream = EntryStream(
        section.name,
        provider,
        base,
        timeout=config.provider_timeout,
        strict=config.strict,  # strict: an invalid entry fails the plan, before any byte
        quiet=True,
        news_cutoff=news_cutoff(config, section),
        keyed=keyed,
        key_range=key_range or (None, None),
        batch_size=PLAN_BATCH_SIZE,
        exclusion=section.exclusion,
    )
    measuring = Measuring(
        stream, measurer, PageCutter(max_urls=max_urls, room=room), config, keyed, keep
    )
    measuring.hashes = (  # (see dedupe.py)
        Fingerprints(retain) if takes_part(section) and key_range is None else None
    )
    try:
        stop = await measuring.read(until_page)
    finally:
        await stream.aclose()
    cutter, hashes, keep = measuring.cutter, measuring.hashes, measuring.keep
    prints, repeated = hashes.result(retain) if hashes is not None else (None, frozenset())
    if stop is not None:  # (``until_page`` complete; ``stop``: the next page's first entry)
        if keep is not None:
            keep.clear()  # (it holds the next page's first entries)
        by_key = keyed and not cutter.split_keys
        done = tuple(cutter.pages[:until_page])
        return SectionPlan(
            section.name, done, stop, version, by_key, prints=prints, repeated=repeated
        )
    pages = await provider_lastmods(config, section, cutter.finish(stream.pulled))
    if keep is not None and len(pages) > 1:
        keep.clear()
    first = stream.first_left_out
    return SectionPlan(
        section.name,
        pages,
        stream.pulled,
        version,
        keyed and not cutter.split_keys,  # one key's items over two pages: by number
        left_out=stream.left_out + measuring.oversize,
        first_left_out=str(first) if first is not None else measuring.first_oversize,
        excluded=tuple(sorted(stream.excluded.items())),
        prints=prints,
        repeated=repeated,
        span=stream.ledger_span,
    )


async def _plan_by_ranges(
    config: SitemapConfig,
    section: _ResolvedSection,
    base: BaseURL,
    version: ProviderVersion | None,
    measurer: UrlsetWriter,
    budget: tuple[int, int],
    counted: bool,
) -> SectionPlan | None:
    async def measure(after: Any, upto: Any) -> tuple[int, int, datetime | None]:
        plan = await plan_section(config, section, base, version, key_range=(after, upto))
        newest = max((to_datetime(p.lastmod) for p in plan.pages if p.lastmod), default=None)
        return plan.count, plan.size, newest

    ranged = await plan_by_ranges(config, section, base, measurer, *budget, measure, counted)
    if ranged is None:
        return None
    pages, total, left_out, estimated = ranged
    return SectionPlan(
        section.name,
        pages,
        total,
        version,
        keyed=True,
        left_out=left_out,
        first_left_out=LOG_NULL_LOCATION if left_out and not estimated else "",
        ranged=True,
        estimated=estimated,
    )


def last_modified(plans: Sequence[SectionPlan]) -> datetime | None:
    """The newest provider time, if every section gives one."""
    modified = [
        plan.version.last_modified
        for plan in plans
        if plan.version is not None and plan.version.last_modified is not None
    ]
    return max(modified) if len(modified) == len(plans) and modified else None
