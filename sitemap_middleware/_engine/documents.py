"""Which document a target names: the router over the documents, by kind.

A :class:`Document` is decided before any byte is sent (validators from the plans and
provider metadata, 404/503 as :class:`HTTPError`); its body opens only after the 304 and
HEAD checks, and fetches its first batch of entries before the status line is committed.

By kind: pages and the single urlset (``pages.py``), the index (``index.py``), the small
documents (``small_documents.py``), feeds and llms.txt (``feeds.py``), the changes
sitemap (``changes.py``). A target's format picks the writers (``formats.py``): the HTML
views are those documents, written as HTML. robots.txt is answered by the core.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._caches.store import PlanStore
from .._config import SitemapConfig
from .._sansio.batches import PlainBatch
from .._sansio.routing import Kind, Target
from .._sansio.urls import BaseURL
from .answer import Document, HTTPError
from .changes import ChangesDocuments
from .feeds import FeedDocuments
from .formats import Formats
from .index import Index, IndexChild
from .keys import DocumentKeys
from .pages import Pages
from .plan_memo import PlanMemo
from .planning import SectionPlan
from .small_documents import SmallDocuments
from .store_calls import StoreCalls
from .urlsets import Urlsets

__all__ = ["Documents"]


class Documents:
    """Builds the :class:`Document` a target names, by its kind, in its format."""

    def __init__(
        self,
        config: SitemapConfig,
        keys: DocumentKeys,
        plan_store: PlanStore | None = None,
        calls: StoreCalls | None = None,
    ) -> None:
        self.config = config
        self.plans = PlanMemo(config, plan_store, calls)
        self.formats = Formats(config)
        self.pages = Pages(config, keys, self.plans, Urlsets(config))
        self.index = Index(config, self.plans)
        self.small = SmallDocuments(config)
        self.feeds = FeedDocuments(config)
        self.changes = ChangesDocuments(config, self.feeds) if config.changes else None

    async def get(self, target: Target, base: BaseURL) -> Document:
        """The document ``target`` names, served under ``base``; raises HTTPError."""
        kind = target.kind
        if kind in (Kind.FEED, Kind.LLMS_TXT):
            return await self.feeds.get(target, base)
        if kind is Kind.CHANGES and self.changes is not None:
            return await self.changes.get(target, base)
        if kind in (Kind.STYLESHEET, Kind.INDEXNOW_KEY):
            return self.small.get(target)
        if kind is Kind.ROBOTS:
            raise AssertionError("robots.txt is answered by the core")  # pragma: no cover
        writers = self.formats.of(target.format)
        if kind is Kind.PAGE:
            return await self.pages.page(target, base, writers)
        if kind not in (Kind.ROOT, Kind.INDEX):  # pragma: no cover - routing names no other
            raise HTTPError(404, "Not Found")
        # /sitemap.xml may be one urlset: planning keeps what it read for it, if small.
        keep: dict[str, list[PlainBatch]] | None = {} if kind is Kind.ROOT else None
        plans, failed = await self.index.plan_all(writers.index_label(kind.value), base, keep)
        if kind is Kind.ROOT and self.index.fits_one_file(base, plans, bool(failed)):
            urlset = self.formats.txt if target.format == "txt" else self.formats.xml
            return self.pages.single_urlset(base, plans, keep or {}, urlset)
        return self.index.document(base, plans, failed, writers)

    def index_children(self, plans: Sequence[SectionPlan]) -> list[IndexChild]:
        """The planned pages an index lists (what ``explain`` reads)."""
        return self.index.children(plans)
