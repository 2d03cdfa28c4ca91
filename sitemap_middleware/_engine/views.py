"""The HTML views as documents: planned like the XML index and pages, streamed the same way.

The index view reuses the index's page plan (so it lists exactly the pages the XML index
lists, with their lastmods) and the page view reuses the page's entry stream; only the
writer differs. ETags add the view's fingerprint, so they never equal an XML document's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from .._html_settings import HTMLView
from .._sansio.html_assets import HTML_TYPE
from .._sansio.html_writer import IndexView, UrlsetView
from .._sansio.routing import Kind, Target, page_name
from .._sansio.urls import BaseURL
from .answer import Document
from .bodies import opened, text_body
from .planning import allows_empty

if TYPE_CHECKING:
    from .documents import Documents

__all__ = ["HTMLDocuments"]


class HTMLDocuments:
    """Builds the :class:`Document` of the index view or of a page view."""

    def __init__(self, documents: Documents, view: HTMLView) -> None:
        self._documents = documents
        self._view = view
        self.config = documents.config

    async def get(self, target: Target, base: BaseURL) -> Document:
        if target.kind is Kind.INDEX:
            return await self._index(base)
        return await self._page(target, base)

    async def _index(self, base: BaseURL) -> Document:
        config = self.config
        documents = self._documents
        plans, failed = await documents.plan_all("index view", base)
        externals = documents.externals(base)
        documents.checked_plans(plans, failed, len(externals))
        children = documents.index_children(plans)
        book = config.guard_book  # its verdicts are part of what the view shows
        kind = f"{self._view.fingerprint}|index|{book.view_token() if book else ''}"
        etag, modified = (
            documents.index_validators(kind, base, plans, children) if not failed else (None, None)
        )
        writer = IndexView(
            view=self._view,
            site=_site_label(base),
            sitemap_name=config.sitemap_name,
            index_name=config.index_name,
            page_prefix=config.page_prefix,
        )
        urls = sum(plan.count for plan in plans)
        quarantine = [
            (plan.name, [(url, v.words()) for url, v in book.quarantined(plan.name)])
            for plan in plans
            if book is not None
        ]

        def pieces() -> Iterator[str]:
            files = len(children)
            yield writer.open(files=files, urls=urls, failed=failed, externals=len(externals))
            for child in children:
                yield writer.sitemap(
                    section=child.section or "",
                    page=child.number,
                    count=child.urls,
                    lastmod=child.lastmod,
                    xml_name=child.name,
                )
            for loc in externals:
                yield writer.external(loc)
            yield writer.close(quarantine)

        return Document(
            HTML_TYPE,
            etag,
            modified,
            lambda: opened(text_body(pieces())),
            cacheable=not failed,
            failed_sections=tuple(failed),
        )

    async def _page(self, target: Target, base: BaseURL) -> Document:
        config = self.config
        view = self._view
        documents = self._documents
        planned = await documents.planned_page(target, base)
        section, version = planned.section, planned.plan.version
        number = target.page
        name = view.page_name(config.page_prefix, section.name, number)
        etag = documents.page_etag(f"{view.fingerprint}|{name}", base, planned)
        children = documents.index_children([planned.plan])
        xml_name = (
            children[number - 1].name
            if children
            else page_name(config.page_prefix, section.name, number)
        )
        writer = UrlsetView(
            view=view,
            site=_site_label(base),
            resolve=base.join_if_relative,
            section=section.name,
            page=number,
            xml_name=xml_name,
            index_view=view.index_name,
            previous_view=view.page_name(config.page_prefix, section.name, number - 1)
            if number > 1
            else None,
            next_view=view.page_name(config.page_prefix, section.name, number + 1)
            if number < planned.pages
            else None,
        )

        async def open_page() -> AsyncIterator[bytes]:
            keyed = planned.plan.keyed
            stream = documents.urlsets.stream(
                section, base, planned.page, planned.previous, keyed, planned.plan, number
            )
            # An empty page the XML answers with 200 (Django's) is an empty view too.
            empty_ok = allows_empty(section)
            return await documents.urlsets.open(name, [stream], writer, empty_ok)

        return Document(HTML_TYPE, etag, version.last_modified if version else None, open_page)


def _site_label(base: BaseURL) -> str:
    """``example.com`` or ``example.com/shop``: the site, as headings name it."""
    return base.prefix.split("://", 1)[1].rstrip("/")
