"""Urlset bodies: the entry streams of a page and the opening (its writer: ``formats.py``).

A body opens by fetching its first batch, so a failing provider answers 503 (an invalid
entry in strict mode 500, no entry at all 404) before the status line is committed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import datetime

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._logs import logger
from .._sansio.batches import Batch
from .._sansio.paging import PagePlan
from .._sansio.urls import BaseURL
from .answer import HTTPError, unavailable
from .bodies import ClosingBody, URLWriter, urlset_body
from .dedupe import page_exclusion, range_exclusion
from .planning import SectionPlan, news_cutoff
from .stream import EntryStream

__all__ = ["LOG_FAILED", "Urlsets", "render_failed", "strict_error"]

#: Logged where a render fails before its first byte; the status is what the request gets
#: unless a stored render answers instead (stale-if-error: logged on its own line).
LOG_FAILED = "sitemap %s: cannot be rendered (%d): %s"


def strict_error() -> HTTPError:
    return HTTPError(500, "Internal Server Error: invalid entry in strict mode")


def render_failed(config: SitemapConfig, name: str, exc: Exception) -> HTTPError:
    """The answer to a render that failed before its first byte, logged: 503 for a
    failing provider, 500 for an invalid entry in strict mode."""
    status = 503 if isinstance(exc, ProviderError) else 500
    logger.error(LOG_FAILED, name, status, exc)
    return unavailable(config) if status == 503 else strict_error()


class Urlsets:
    """Streams and opened bodies of urlsets (pages, views, one-file sitemaps)."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config

    def stream(
        self,
        section: _ResolvedSection,
        base: BaseURL,
        page: PagePlan,
        previous: PagePlan | None = None,
        keyed: bool = False,
        plan: SectionPlan | None = None,
        number: int = 1,
    ) -> EntryStream:
        """The entries of one planned page (page ``number`` of ``plan``): its raw
        positions, or its key range."""
        if keyed and page.urls:
            after = previous.last_key if previous is not None else None
            stream = self.keyed_stream(section, base, key_range=(after, page.last_key))
            if plan is not None and section.dedupe:  # (as its key-range name does)
                stream.exclusion = range_exclusion(section, plan, after, page.last_key, number)[0]
            return stream
        stream = self.keyed_stream(section, base, offset=page.start, limit=page.stop - page.start)
        if plan is not None and section.dedupe:  # URLs listed before are left out too
            stream.exclusion = page_exclusion(section, plan, number)
        return stream

    def keyed_stream(
        self,
        section: _ResolvedSection,
        base: BaseURL,
        *,
        offset: int = 0,
        limit: int | None = None,
        key_range: tuple[object, object] | None = None,
    ) -> EntryStream:
        config = self.config
        return EntryStream(
            section.name,
            section.provider,
            base,
            offset=offset,
            limit=limit,
            timeout=config.provider_timeout,
            strict=config.strict,
            news_cutoff=news_cutoff(config, section),
            keyed=key_range is not None,
            key_range=key_range or (None, None),
            exclusion=section.exclusion,
        )

    async def open(
        self,
        name: str,
        streams: list[EntryStream],
        writer: URLWriter,
        allow_empty: bool = False,
        outgrew: Callable[[bool], None] | None = None,
        dated: datetime | None = None,
    ) -> AsyncIterator[bytes]:
        """Fetch the first batch (errors become 503/404 here), then stream the rest.

        ``allow_empty``: a listed page of a provider with ``allow_empty_first_page``
        (Django's) is answered even with no entry left, as Django answers it.
        ``outgrew``: called when a capped page outgrows its budget or lists nothing;
        ``dated``: see :func:`urlset_body`.
        """
        first: Batch = []
        try:
            for stream in streams:
                first = await stream.next_batch()
                if first:
                    break
        except (ProviderError, InvalidEntryError) as exc:
            for stream in streams:
                await stream.aclose()
            raise render_failed(self.config, name, exc) from None
        if not first and not allow_empty:
            for stream in streams:
                await stream.aclose()
            if outgrew is not None:  # (a plan that listed it was wrong: see PlanMemo)
                outgrew(True)
            raise HTTPError(404, "Not Found: this sitemap page has no entries")
        body = urlset_body(writer, streams, first, outgrew, allow_empty, dated)
        return ClosingBody(body, streams)
