"""The index: the planned pages it lists, its validators, 404/500/503 before the body.

One document whatever its format (``formats.py``): the XML ``<sitemapindex>`` and the
HTML index view list the same children, from the same plans, with the same lastmods.
``sitemap.xml`` is the index unless the whole site fits one urlset (``fits_one_file``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from .._config import SitemapConfig
from .._exceptions import InvalidEntryError
from .._logs import logger
from .._sansio.batches import PlainBatch
from .._sansio.etag import document_etag
from .._sansio.limits import MAX_INDEX_ENTRIES, MAX_NEWS_PER_FILE
from .._sansio.routing import page_name
from .._sansio.urls import BaseURL
from .answer import Document, HTTPError, unavailable
from .bodies import opened, text_body
from .changes import changes_lastmod
from .formats import Writers
from .plan_memo import PlanMemo
from .planning import SectionPlan, last_modified, page_room
from .urlsets import LOG_FAILED, render_failed

__all__ = ["Index", "IndexChild"]


@dataclass(frozen=True, slots=True)
class IndexChild:
    """One sitemap the index lists: a planned page (or, without a section, the changes
    sitemap)."""

    section: str | None
    number: int
    name: str  # the XML file name (with its key range for keyset pages)
    urls: int
    lastmod: date | None  # a datetime, or a date a provider gives (written as a date)


class Index:
    """Builds the index's :class:`Document`, and plans every section for it."""

    def __init__(self, config: SitemapConfig, plans: PlanMemo) -> None:
        self.config = config
        self.plans = plans

    async def plan_all(
        self, label: str, base: BaseURL, keep: dict[str, list[PlainBatch]] | None = None
    ) -> tuple[list[SectionPlan], list[str]]:
        """Every section's plan (strict mode: an invalid entry answers 500)."""
        try:
            return await self.plans.plan_all(base, keep)
        except InvalidEntryError as exc:
            raise render_failed(self.config, label, exc) from None

    def fits_one_file(self, base: BaseURL, plans: Sequence[SectionPlan], failed: bool) -> bool:
        """Whether ``sitemap.xml`` is one urlset: every section fits one, by count, by
        bytes and by news URLs. Sitemaps served elsewhere (and the changes sitemap) are
        reached through an index; so is a site with a failed section."""
        config = self.config
        return (
            not failed
            and not config.external_sitemaps
            and not config.changes
            and all(len(plan.pages) <= 1 for plan in plans)
            and sum(plan.count for plan in plans) <= config.max_urls_per_page
            and sum(plan.size for plan in plans) <= page_room(config, base)
            and sum(plan.news for plan in plans) <= MAX_NEWS_PER_FILE
        )

    def children(self, plans: Sequence[SectionPlan]) -> list[IndexChild]:
        """The planned pages an index lists, keyset pages named with their key range."""
        prefix = self.config.page_prefix
        children: list[IndexChild] = []
        for plan in plans:
            named = zip(plan.pages, plan.key_ranges(), strict=True)
            for number, (page, token) in enumerate(named, 1):
                name = page_name(prefix, plan.name, number, key_range=token)
                children.append(IndexChild(plan.name, number, name, page.urls, page.lastmod))
        return children

    def checked(self, plans: Sequence[SectionPlan], failed: Sequence[str], externals: int) -> None:
        """Raise what an index of these plans (and external sitemaps) answers instead of 200."""
        pages = sum(len(plan.pages) for plan in plans) + externals
        if pages == 0:
            if failed:
                raise unavailable(self.config)
            raise HTTPError(404, "Not Found: the sitemap has no entries yet")
        if pages > MAX_INDEX_ENTRIES:
            logger.error(
                LOG_FAILED,
                "index",
                500,
                f"{pages} pages exceed the {MAX_INDEX_ENTRIES:,} an index may list",
            )
            raise HTTPError(500, "Internal Server Error: too many sitemap pages for one index")

    def validators(
        self, kind: str, base: BaseURL, plans: Sequence[SectionPlan], children: list[IndexChild]
    ) -> tuple[str, datetime | None]:
        """An index's validators: from the children it lists, not from every row.

        The index holds what the plans say, so its tag changes exactly when a child or a
        child's lastmod does.
        """
        listed = [
            f"{child.name} {child.urls} {child.lastmod.isoformat() if child.lastmod else ''}"
            for child in children
        ]
        etag = document_etag(self.config.fingerprint, base.prefix, kind, [listed])
        assert etag is not None  # every part is given
        return etag, last_modified(plans)

    def document(
        self, base: BaseURL, plans: Sequence[SectionPlan], failed: Sequence[str], writers: Writers
    ) -> Document:
        """The index of ``plans`` (``failed``: sections left out), as ``writers`` write it."""
        config = self.config
        writer = writers.index(base, plans)  # (text sitemaps have none: 404)
        externals = [base.origin_url(loc) for loc in config.external_sitemaps]
        self.checked(plans, failed, len(externals))
        children = self.children(plans)
        changes = config.changes if writers.lists_changes else None
        if changes is not None and (changed := changes_lastmod(config, plans)):
            children.insert(0, IndexChild(None, 0, changes.name, 0, changed))  # re-fetched first
        etag, modified = (
            self.validators(writers.index_kind(), base, plans, children)
            if not failed
            else (None, None)
        )
        urls = sum(plan.count for plan in plans)

        def pieces() -> Iterator[str]:
            yield writer.open(
                files=len(children), urls=urls, failed=failed, externals=len(externals)
            )
            for child in children:
                yield writer.sitemap(
                    section=child.section or "",
                    page=child.number,
                    count=child.urls,
                    lastmod=child.lastmod,
                    name=child.name,
                )
            for loc in externals:
                yield writer.external(loc)
            yield writer.close()

        return Document(
            writers.content_type,
            etag,
            modified,
            lambda: opened(text_body(pieces())),
            cacheable=not failed,
            failed_sections=tuple(failed),
        )
