"""Page lastmods a provider reports itself (``page_last_modified``), where a plan may
use them (see :func:`provider_lastmods`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import ProviderError
from .._providers.base import SupportsPageLastModified
from .._sansio.paging import PagePlan
from .._sansio.values import to_datetime
from .stream import call_provider

__all__ = ["provider_lastmods"]


async def provider_lastmods(
    config: SitemapConfig, section: _ResolvedSection, pages: tuple[PagePlan, ...]
) -> tuple[PagePlan, ...]:
    """Page lastmods a provider reports itself (``page_last_modified``), where they apply.

    They describe pages of ``max_urls`` items each: usable when the bytes did not move a
    boundary, and only where the entries carried no lastmod of their own, unless the
    provider's dates are the ones to list (``page_dates_override``: Django's index lists
    ``get_latest_lastmod()`` for every page, None and dates included).
    """
    provider = section.provider
    size = section.max_urls
    if not isinstance(provider, SupportsPageLastModified) or not pages:
        return pages
    if any(page.start != number * size for number, page in enumerate(pages)):
        return pages
    overrides = getattr(provider, "page_dates_override", False) is True
    if not overrides and all(page.lastmod is not None for page in pages):
        return pages
    answer = await call_provider(
        section.name, config.provider_timeout, lambda: provider.page_last_modified(size)
    )
    if isinstance(answer, str | bytes) or not isinstance(answer, Sequence):
        raise ProviderError(
            section.name,
            f"page_last_modified() gave {answer!r:.100}, not a sequence of datetimes "
            "(one per page, None where unknown)",
        )
    found = list(answer)
    dates = [_page_date(section.name, value) for value in found[: len(pages)]]
    return tuple(
        replace(page, lastmod=dates[number] if number < len(dates) else None)
        if overrides or (page.lastmod is None and number < len(dates))
        else page
        for number, page in enumerate(pages)
    )


def _page_date(section: str, value: object) -> date | None:
    """A page lastmod from ``page_last_modified()``: an aware datetime (naive means
    UTC), or a date, which the index writes as a date."""
    if value is None:
        return None
    if not isinstance(value, date):
        raise ProviderError(section, f"page_last_modified() gave {value!r}, not a datetime")
    return to_datetime(value) if isinstance(value, datetime) else value
