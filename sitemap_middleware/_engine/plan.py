"""Planning: what each section holds (pages, page lastmods, version) before rendering."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timezone

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._providers.base import (
    ProviderVersion,
    SupportsCount,
    SupportsPageLastModified,
    SupportsVersion,
)
from .._sansio.etag import version_parts
from .._sansio.models import coerce_entry
from .._sansio.urls import BaseURL
from .._sansio.values import to_datetime
from .stream import EntryStream, call_provider, logger

__all__ = [
    "SectionPlan",
    "plan_all",
    "plan_section",
    "section_count",
    "news_cutoff",
    "section_version",
]

LOG_SECTION_FAILED = "sitemap section %r left out of the index: %s"


@dataclass(frozen=True, slots=True)
class SectionPlan:
    """A section's size and freshness, from capabilities or from one pass over it."""

    name: str
    count: int
    page_size: int
    page_lastmods: tuple[datetime | None, ...]
    version: ProviderVersion | None

    @property
    def pages(self) -> int:
        return math.ceil(self.count / self.page_size)

    @property
    def validator_parts(self) -> tuple[str, ...] | None:
        """Strings for an ETag, or None if the provider cannot vouch for its freshness."""
        parts = version_parts(self.version)
        return (self.name, str(self.count), *parts) if parts else None


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
    version = await call_provider(section.name, config.provider_timeout, provider.version())
    if not isinstance(version, ProviderVersion):
        raise ProviderError(section.name, f"version() returned {version!r}, not ProviderVersion")
    cutoff = news_cutoff(config, section)
    if cutoff is not None and (version.token or version.last_modified):
        # The window changes what is served without the data changing: it is part of
        # the version.
        token = f"{version.token or ''}|news>{cutoff.isoformat()}"
        return ProviderVersion(token=token, last_modified=version.last_modified)
    return version


async def section_count(config: SitemapConfig, section: _ResolvedSection) -> int | None:
    provider = section.provider
    if not isinstance(provider, SupportsCount):
        return None
    count = await call_provider(section.name, config.provider_timeout, provider.count())
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ProviderError(section.name, f"count() returned {count!r}, not an int >= 0")
    return count


async def plan_section(
    config: SitemapConfig, section: _ResolvedSection, base: BaseURL
) -> SectionPlan:
    """Plan one section, iterating it only when it cannot count itself."""
    version = await section_version(config, section)
    # A news section is counted by the articles its window keeps: it cannot count itself.
    count = None if section.news else await section_count(config, section)
    size = section.max_urls
    if count is not None:
        pages = math.ceil(count / size)
        lastmods: tuple[datetime | None, ...] = (None,) * pages
        provider = section.provider
        if isinstance(provider, SupportsPageLastModified) and pages:
            found = await call_provider(
                section.name, config.provider_timeout, provider.page_last_modified(size)
            )
            dates = [_page_date(section.name, value) for value in list(found)[:pages]]
            lastmods = tuple(dates) + (None,) * (pages - len(dates))
        return SectionPlan(section.name, count, size, lastmods, version)
    return await _plan_by_iteration(config, section, base, version)


def _page_date(section: str, value: object) -> datetime | None:
    """A page lastmod from ``page_last_modified()``, aware (naive means UTC)."""
    if value is None:
        return None
    if not isinstance(value, date):
        raise ProviderError(section, f"page_last_modified() gave {value!r}, not a datetime")
    return to_datetime(value)


async def _plan_by_iteration(
    config: SitemapConfig, section: _ResolvedSection, base: BaseURL, version: ProviderVersion | None
) -> SectionPlan:
    """Count by reading every entry once; newest lastmod per page comes for free."""
    cutoff = news_cutoff(config, section)
    if cutoff is not None:
        return await _plan_news(config, section, base, version, cutoff)
    stream = EntryStream(
        section.name, section.provider, base, timeout=config.provider_timeout, strict=False
    )
    lastmods: list[datetime | None] = []
    size = section.max_urls
    try:
        while raw := await stream.next_raw():
            start = stream.pulled - len(raw)
            for offset, item in enumerate(raw):
                try:
                    entry = coerce_entry(item)
                except InvalidEntryError:
                    continue  # logged when its page is served, not here as well
                if entry.lastmod is None:
                    continue
                # Pages follow raw positions (what count() would say): an invalid entry
                # shifts nothing, it is only absent from its page.
                page = (start + offset) // size
                lastmods += [None] * (page + 1 - len(lastmods))
                value = to_datetime(entry.lastmod)
                current = lastmods[page]
                if current is None or value > current:
                    lastmods[page] = value
    finally:
        await stream.aclose()
    count = stream.pulled
    pages = math.ceil(count / size)
    lastmods += [None] * (pages - len(lastmods))
    return SectionPlan(section.name, count, size, tuple(lastmods[:pages]), version)


async def _plan_news(
    config: SitemapConfig,
    section: _ResolvedSection,
    base: BaseURL,
    version: ProviderVersion | None,
    cutoff: datetime,
) -> SectionPlan:
    """A news section's pages hold the articles inside the window, counted as kept."""
    stream = EntryStream(
        section.name,
        section.provider,
        base,
        timeout=config.provider_timeout,
        strict=False,
        news_cutoff=cutoff,
    )
    lastmods: list[datetime | None] = []
    kept = 0
    try:
        while batch := await stream.next_batch():
            for _, _, entry in batch:
                page = kept // section.max_urls
                kept += 1
                lastmods += [None] * (page + 1 - len(lastmods))
                if entry is not None and entry.lastmod is not None:
                    value = to_datetime(entry.lastmod)
                    current = lastmods[page]
                    lastmods[page] = value if current is None or value > current else current
    finally:
        await stream.aclose()
    return SectionPlan(section.name, kept, section.max_urls, tuple(lastmods), version)


async def plan_all(config: SitemapConfig, base: BaseURL) -> tuple[list[SectionPlan], list[str]]:
    """Plans of every section that answers; failing sections are logged and named."""
    plans: list[SectionPlan] = []
    failed: list[str] = []
    for section in config.resolved_sections:
        try:
            plans.append(await plan_section(config, section, base))
        except ProviderError as exc:
            logger.error(LOG_SECTION_FAILED, section.name, exc)
            failed.append(section.name)
    return plans, failed
