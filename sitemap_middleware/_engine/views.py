"""The HTML views as documents: planned like the XML index and pages, streamed the same way.

The index view reuses the index's page plan (so it lists exactly the pages the XML index
lists, with their lastmods) and the page view reuses the page's entry stream; only the
writer differs. ETags add the view's fingerprint, so they never equal an XML document's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from .._config import SitemapConfig
from .._sansio.etag import document_etag, version_parts
from .._sansio.html import IndexView, UrlsetView
from .._sansio.htmlview import HTML_TYPE, HTMLView
from .._sansio.routing import Kind, Target, page_name
from .._sansio.urls import BaseURL
from .answer import Document
from .bodies import opened, text_body

if TYPE_CHECKING:
    from .documents import Documents

__all__ = ["HTMLDocuments", "view_key"]


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
        plans, failed = await documents.plans.plan_all(base)
        externals = documents.externals(base)
        documents.checked_plans(plans, failed, len(externals))
        etag, modified = (
            documents.validators(f"{self._view.fingerprint}|index", base, plans)
            if not failed
            else (None, None)
        )
        writer = IndexView(
            view=self._view,
            site=_site_label(base),
            sitemap_name=config.sitemap_name,
            index_name=config.index_name,
            page_prefix=config.page_prefix,
        )
        files = sum(plan.pages for plan in plans)
        urls = sum(plan.count for plan in plans)

        def pieces() -> Iterator[str]:
            yield writer.open(files=files, urls=urls, failed=failed, externals=len(externals))
            for plan in plans:
                for number in range(1, plan.pages + 1):
                    xml_name, count = documents.index_child(plan, number)
                    yield writer.sitemap(
                        section=plan.name,
                        page=number,
                        count=count,
                        lastmod=plan.page_lastmods[number - 1],
                        xml_name=xml_name,
                    )
            for loc in externals:
                yield writer.external(loc)
            yield writer.close()

        return Document(
            HTML_TYPE,
            etag,
            modified,
            lambda: opened(text_body(pieces())),
            cacheable=not failed,
        )

    async def _page(self, target: Target, base: BaseURL) -> Document:
        config = self.config
        view = self._view
        section, version, count = await self._documents.page_facts(target, base)
        number = target.page
        name = view.page_name(config.page_prefix, section.name, number)
        parts = version_parts(version)
        etag = document_etag(
            config.fingerprint,
            base.prefix,
            name,
            [(view.fingerprint, str(count), *parts) if parts else None],
        )
        pages = -(-count // section.max_urls) if count is not None else None
        writer = UrlsetView(
            view=view,
            site=_site_label(base),
            resolve=base.join_if_relative,
            section=section.name,
            page=number,
            xml_name=page_name(config.page_prefix, section.name, number),
            index_view=view.index_name,
            previous_view=view.page_name(config.page_prefix, section.name, number - 1)
            if number > 1
            else None,
            next_view=view.page_name(config.page_prefix, section.name, number + 1)
            if pages is not None and number < pages
            else None,
        )

        async def open_page() -> AsyncIterator[bytes]:
            stream = self._documents.stream(section, base, offset=(number - 1) * section.max_urls)
            from .documents import allows_empty  # (documents imports this module)

            # An empty page the XML answers with 200 (Django's) is an empty view too.
            allow_empty = count is not None and allows_empty(section)
            return await self._documents.open_urlset(name, [stream], writer, allow_empty)

        return Document(
            HTML_TYPE,
            etag,
            version.last_modified if version else None,
            open_page,
            exists=count is not None,
        )


def _site_label(base: BaseURL) -> str:
    """``example.com`` or ``example.com/shop``: the site, as headings name it."""
    return base.prefix.split("://", 1)[1].rstrip("/")


def view_key(config: SitemapConfig, target: Target) -> str:
    """What a render-cache or render-store key adds for a view: the view's own settings.

    They shape the view's bytes but are not in ``config.fingerprint`` (switching the views
    on changes no XML ETag), so deployments sharing a cache with other titles or file
    names never answer with each other's view.
    """
    view = config.html_view
    return f"|html={view.fingerprint}" if target.html and view is not None else ""
