"""Documents of entries: a section's page, a key-range page and the single urlset.

Each is written by the writer its target's format chooses (``formats.py``): an XML page,
its text twin and its HTML view are one document here. Validators come from the plans
and provider versions, 404/500/503 before the first byte; the body opens on its first
batch (``urlsets.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from functools import partial

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._providers.base import SupportsKeyset
from .._sansio.batches import PlainBatch
from .._sansio.etag import document_etag, version_parts
from .._sansio.paging import PagePlan, decode_key_range
from .._sansio.routing import Target, page_name
from .._sansio.urls import BaseURL
from .answer import Document, HTTPError
from .dedupe import range_exclusion
from .formats import Writers, XMLWriters
from .keys import DocumentKeys
from .plan_memo import PlanMemo
from .planning import PlannedPage, SectionPlan, allows_empty, last_modified, range_version
from .stream import EntryStream
from .urlsets import Urlsets, render_failed

__all__ = ["EMPTY_PAGE", "Pages"]

#: Page 1 of an empty section whose provider answers it (see ``allows_empty``).
EMPTY_PAGE = PagePlan(start=0, stop=0, urls=0, size=0, news=0, lastmod=None)


class Pages:
    """Builds the :class:`Document` of a page, a key-range page or the single urlset."""

    def __init__(
        self, config: SitemapConfig, keys: DocumentKeys, plans: PlanMemo, urlsets: Urlsets
    ) -> None:
        self.config = config
        self.keys = keys  # the store key of the stamp key-range pages share
        self.plans = plans
        self.urlsets = urlsets

    async def planned(
        self, target: Target, base: BaseURL, keep: list[PlainBatch] | None = None
    ) -> PlannedPage:
        """The section, plan and page a page target names; 404/500/503 as HTTPError.

        ``keep`` receives a planning pass's batches of a one-page section (see
        :func:`plan_section`).
        """
        config = self.config
        section = config.section(target.section or "")
        if section is None or target.page < 1:
            raise HTTPError(404, "Not Found: no such sitemap page")
        number = target.page
        try:
            plan = await self.plans.page_plan(section, base, number, keep)
        except (ProviderError, InvalidEntryError) as exc:  # (strict mode)
            name = page_name(config.page_prefix, section.name, number)  # (its views' too)
            raise render_failed(config, name, exc) from None
        if number == 1 and not plan.pages and allows_empty(section):
            # An empty section's page 1 is an empty urlset where the provider says so
            # (Django's sitemaps: allow_empty_first_page); the index does not list it.
            return PlannedPage(section, plan, EMPTY_PAGE, None, number)
        if number > len(plan.pages):
            raise HTTPError(404, "Not Found: past the last page of this section")
        previous = plan.pages[number - 2] if number > 1 else None
        return PlannedPage(section, plan, plan.pages[number - 1], previous, number)

    def etag(self, kind: str, base: BaseURL, planned: PlannedPage) -> str | None:
        """A page's tag: its place in the plan (boundaries move when content does) and
        the section's version."""
        page = planned.page
        parts = version_parts(planned.plan.version)
        layout = repr((page.start, page.stop, page.urls, page.size, page.first_key, page.last_key))
        if planned.plan.duplicates:  # what it leaves out as listed before
            layout += planned.plan.layout
        return document_etag(
            self.config.fingerprint, base.prefix, kind, [(layout, *parts) if parts else None]
        )

    async def page(self, target: Target, base: BaseURL, writers: Writers) -> Document:
        """Page ``target.page`` of a section, as ``writers`` write it."""
        if target.key_range is not None:
            section = self.config.section(target.section or "")
            if section is None or target.page < 1:
                raise HTTPError(404, "Not Found: no such sitemap page")
            return await self._range_page(target, base, section, writers)
        kept: list[PlainBatch] = []  # what planning read, if it planned now and one page
        planned = await self.planned(target, base, kept)
        section, version = planned.section, planned.plan.version
        name = writers.page_name(section.name, planned.number)

        async def open_page() -> AsyncIterator[bytes]:
            keyed = planned.plan.keyed  # its key range as it is now: capped, as a ranged name
            stream = self.urlsets.stream(
                section, base, planned.page, planned.previous, keyed, planned.plan, planned.number
            )
            replay_once(stream, kept)
            writer = writers.page(name, base, planned, capped=keyed)
            # An empty page the XML answers with 200 (Django's) is an empty view too.
            outgrew = partial(self.plans.outgrew, base, section.name)
            return await self.urlsets.open(name, [stream], writer, allows_empty(section), outgrew)

        return Document(
            writers.content_type,
            self.etag(writers.tagged(name), base, planned),
            version.last_modified if version else None,
            open_page,  # planned pages hold at least one entry: it exists
        )

    async def _range_page(
        self, target: Target, base: BaseURL, section: _ResolvedSection, writers: Writers
    ) -> Document:
        """A keyset page named by its key range: the rows in ``(after, upto]`` now. The
        index wrote the range, so every row that exists throughout a crawl is on
        exactly one page whatever is inserted or deleted meanwhile. A range grown past
        the budget serves what fits (a complete document; the rest waits, logged)."""
        config = self.config
        token = target.key_range or ""
        keys = decode_key_range(token)
        if keys is None or not isinstance(section.provider, SupportsKeyset):
            raise HTTPError(404, "Not Found: no such sitemap page")
        name = writers.page_name(section.name, target.page, key_range=token)
        try:
            rows, version = await range_version(config, section, *keys)
            # One URL, one listing: what the sections before it (and its lower keys) list.
            plan = await self.plans.section_plan(section, base) if section.dedupe else None
        except (ProviderError, InvalidEntryError) as exc:
            raise render_failed(config, name, exc) from None
        if rows == 0:  # no row (or a range the key cannot hold): nothing to open
            raise HTTPError(404, "Not Found: no such sitemap page")
        left, tag = range_exclusion(section, plan, *keys) if plan else (section.exclusion, "")
        parts = version_parts(version)
        tagged = (*parts, tag) if parts and tag else parts
        etag = document_etag(config.fingerprint, base.prefix, writers.tagged(name), [tagged])
        # Clients can name any number of ranges: only those the index lists are stored,
        # and stamped on their own; the others share one stamp (see Document.stamped_as).
        listed = self.plans.lists_range(base, section.name, token)
        stamped_as = None
        if rows is None or not listed:
            version_tag = document_etag(config.fingerprint, base.prefix, section.name, [parts])
            if version_tag is not None:
                stamped_as = (self.keys.key(f"ranges:{section.name}", base), version_tag)

        wrong: list[bool] = []  # (its plan found wrong while rendering: not stored)

        def outgrew(missed: bool) -> None:
            wrong.append(True)
            if listed:  # (a range of a client's making says nothing of the plan)
                self.plans.outgrew(base, section.name, missed)

        async def open_page() -> AsyncIterator[bytes]:
            stream = self.urlsets.keyed_stream(section, base, key_range=keys)
            stream.exclusion = left
            writer = writers.urlset(name, base, section.max_urls, capped=True)
            # A lastmod column already moved as the page began is a write since the index.
            dated = self.plans.estimated_lastmod(base, section.name, token)
            began = version.last_modified if version is not None else None
            if dated is not None and began is not None:
                dated = max(dated, began)
            return await self.urlsets.open(name, [stream], writer, outgrew=outgrew, dated=dated)

        return Document(
            writers.content_type,
            etag,
            version.last_modified if version else None,
            open_page,
            exists=rows is not None,  # rows not known: only opening it tells
            storable=listed,
            stamped_as=stamped_as,
            keeps=lambda: not wrong,
        )

    def single_urlset(
        self,
        base: BaseURL,
        plans: Sequence[SectionPlan],
        kept: dict[str, list[PlainBatch]],
        writers: XMLWriters,
    ) -> Document:
        """Every section in one urlset (``sitemap.xml``, ``sitemap.txt``), when it fits."""
        # Empty is an answer only when every section says so (Django's sitemaps do).
        allow_empty = all(map(allows_empty, self.config.resolved_sections))
        if not any(plan.count for plan in plans) and not allow_empty:
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        etag, modified = self.validators(writers.urlset_kind, base, plans)
        by_name = {plan.name: plan for plan in plans}
        sections = [s for s in self.config.resolved_sections if by_name[s.name].count]
        max_urls = self.config.max_urls_per_page

        async def open_streams() -> AsyncIterator[bytes]:
            streams = [
                self.urlsets.stream(
                    section, base, by_name[section.name].pages[0], plan=by_name[section.name]
                )
                for section in sections
            ]
            for section, stream in zip(sections, streams, strict=True):
                replay_once(stream, kept.get(section.name))
            name = writers.urlset_name
            writer = writers.urlset(name, base, max_urls, capped=False)
            return await self.urlsets.open(name, streams, writer, allow_empty, outgrew)

        def outgrew(missed: bool) -> None:  # (estimated plans: row by row from then on)
            for section in sections:
                self.plans.outgrew(base, section.name, missed)

        return Document(writers.content_type, etag, modified, open_streams)

    def validators(
        self, kind: str, base: BaseURL, plans: Sequence[SectionPlan]
    ) -> tuple[str | None, datetime | None]:
        """ETag and Last-Modified of a document holding these sections' entries."""
        etag = document_etag(
            self.config.fingerprint, base.prefix, kind, [plan.validator_parts for plan in plans]
        )
        # Without an ETag, a time every section gives is still sent (as Django's view
        # sends it); alone it earns no 304 (see core.py).
        return etag, last_modified(plans)


def replay_once(stream: EntryStream, kept: list[PlainBatch] | None) -> None:
    """Let ``stream`` serve what planning read for this request, once (not on reopening)."""
    if kept:
        stream.replay(kept[:])
        kept.clear()
