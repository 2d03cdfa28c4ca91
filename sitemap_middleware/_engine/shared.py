"""Shared renders: one render per document version, served stale when allowed.

This module alone decides when a stored render answers instead of the providers
(:class:`~sitemap_middleware.Renders` configures it); the core asks, in this order:

- :meth:`SharedRenders.fresh`: a stored render younger than ``ttl`` (``content_ttl`` for
  one tagged by its bytes, when longer) answers without asking the providers at all;
- :meth:`SharedRenders.revalidatable`: until ``ttl + stale_while_revalidate`` it still
  answers while the core refreshes the document in the background (asyncio; on trio the
  request revalidates in line instead);
- :meth:`SharedRenders.share`: otherwise the core renders the document and hands it
  here: one without an ETag is tagged by its bytes first (``Renders(etag="content")``,
  :mod:`.content_tags`); a document whose ETag matches the stored render is answered
  from the stored bytes (no provider pass); any other is rendered once: concurrent
  requests share the render (:mod:`.coalesce`) and, with a shared store, instances take
  a short lock so one renders while the others wait for its bytes;
- :meth:`SharedRenders.if_error`: when the render fails before the first byte (503), a
  stored render younger than ``ttl + stale_if_error`` answers, with its own validators
  (RFC 5861).

``Last-Modified`` is the later of the provider's time and the time the document's ETag
was first seen (kept by the store, so a fleet agrees on it): it moves whenever content
does, deletions and renames included. Only complete renders of complete documents (no
section left out) are stored. The store is asked, never the core: nothing here calls back.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from .._caches.file_plans import FilePlanStore
from .._caches.store import MemoryRenderStore, PlanStore, RenderMeta, RenderStore
from .._config import SitemapConfig
from .._logs import logger
from .._sansio.compress import gzip_chunks
from .._sansio.routing import Target
from .._sansio.urls import BaseURL
from .answer import Document, HTTPError, unavailable
from .bodies import stored_body
from .content_tags import ContentTags
from .keys import DocumentKeys
from .render_once import Keep, RenderOnce
from .store_calls import LOG_PLANS_BACKING_OFF, LOG_PLANS_FAILED, LOG_STORE_FAILED, StoreCalls

__all__ = [
    "LOG_STALE",
    "Found",
    "SharedRenders",
    "StoredMissing",
    "cache_control",
    "wall_clock",
]

#: Seconds a stored render is kept at least (a document's ETag may match it for long).
MIN_KEEP = 3600.0
#: Every ETag the engine makes (``make_etag``); a stored meta with another is not ours.
_TAG = re.compile(r"[0-9a-f]{32}")

LOG_STALE = "sitemap %s: serving the stored render (%s; %.1f s old)"
LOG_BODY_MISSING = "sitemap render store: stored body missing or damaged, rendering again: %s"
LOG_NOT_OURS = "sitemap render store: a stored render we did not write, rendering again: %s"


def wall_clock() -> float:
    """Seconds since the epoch: what instances of a fleet compare render ages by."""
    return time.time()


class StoredMissing(HTTPError):
    """A stored body gone or damaged while its meta stayed (evicted, torn): a miss. The
    core renders the document again; where no render may replace it (the providers just
    failed: stale-if-error) it is the 503 it is built as."""


@dataclass(frozen=True, slots=True)
class Found:
    """What the store holds for one document as a request starts."""

    key: str
    #: The document's file name as requested (``sitemap-products-2.xml``): what log
    #: lines call it.
    name: str
    meta: RenderMeta | None
    age: float = 0.0
    #: When the request looked (wall clock): what it renders is read after this, so a
    #: render is dated by it (freshness counts from the providers' read, not from when
    #: the slowest reader finished).
    at: float = 0.0

    def without_render(self) -> Found:
        """The same document with no stored render to fall back on (its body is lost)."""
        return replace(self, meta=None)


class SharedRenders:
    """Answers documents from stored renders, coalesced renders, or stale renders."""

    def __init__(self, config: SitemapConfig, keys: DocumentKeys) -> None:
        self.config = config
        self.renders = config.renders
        self.keys = keys
        self.store: RenderStore = self.renders.store or MemoryRenderStore(self.renders.memory_bytes)
        folder = self.renders.plan_directory
        self._file_plans = FilePlanStore(folder) if folder is not None else None
        self._calls = StoreCalls()  # logging, and the back-off after a failure
        # Its own: a failing plan folder must not leave the render store unasked.
        self._file_calls = StoreCalls(LOG_PLANS_FAILED, LOG_PLANS_BACKING_OFF)
        max_bytes = self.renders.max_bytes or config.max_bytes_per_page
        tagging = self.renders.etag == "content"
        fresh = max(self.renders.ttl, self.renders.content_ttl if tagging else 0.0)
        stale = max(self.renders.stale_while_revalidate, self.renders.stale_if_error)
        #: Seconds a stored render is kept (a document's ETag may match it for long).
        self.keep_for = max(MIN_KEEP, fresh + stale)
        # The clock is looked up at each call: tests set this module's wall_clock.
        self.once = RenderOnce(
            config, self.store, self._calls, max_bytes, self.keep_for, lambda: wall_clock()
        )
        self._tags = ContentTags(config, self.once.flights, max_bytes) if tagging else None

    async def find(self, target: Target, base: BaseURL, name: str) -> Found:
        """What the store holds for ``target`` under ``base`` (``name``: its file name)."""
        key = self.keys.key(target, base)
        meta = await self._meta(key)
        now = wall_clock()
        age = 0.0 if meta is None else now - meta.rendered_at
        return Found(key, name, meta, age, now)

    def fresh(self, found: Found) -> Document | None:
        """The stored render, when it answers without asking the providers anything.

        Its body, found missing when opened, raises :class:`StoredMissing`."""
        meta = found.meta
        if meta is None or found.age >= self._fresh_for(meta):
            return None
        return self._stored(found.key, meta)

    def revalidatable(self, found: Found) -> bool:
        """Whether the stored render may answer while the document is refreshed in the
        background (stale-while-revalidate)."""
        meta = found.meta
        return (
            meta is not None
            and found.age < self._fresh_for(meta) + self.renders.stale_while_revalidate
        )

    def stale(self, found: Found, why: str) -> Document:
        """The stored render, answered stale (``why``: which RFC 5861 allowance)."""
        assert found.meta is not None
        log = logger.warning if why == "stale-if-error" else logger.info
        log(LOG_STALE, found.name, why, found.age)
        return replace(self._stored(found.key, found.meta), cache="stale")

    def if_error(self, found: Found, exc: HTTPError) -> Document | None:
        """The stored render to answer with when a render failed before its first byte."""
        meta = found.meta
        if exc.status != 503 or meta is None or not self.renders.stale_if_error:
            return None
        if found.age > self._fresh_for(meta) + self.renders.stale_if_error:
            return None
        return self.stale(found, "stale-if-error")

    async def share(self, found: Found, document: Document) -> Document:
        """``document``, as the providers have it now, answered through the store: tagged
        by its bytes when it has no ETag (``Renders(etag="content")``), stamped, and
        rendered once for every concurrent request (and stored), or answered from the
        stored render of the same ETag."""
        if document.etag is None and self._tags is not None and document.cacheable:
            document, read_at = await self._tags.tagged(found.key, found.name, document, found.at)
            if document.etag is None:
                return document  # too big to tag: it streams, reading its flight on
            return await self._share(found.key, document, found.meta, read_at, by_content=True)
        return await self._share(found.key, document, found.meta, found.at)

    def stored_now(
        self, target: Target, base: BaseURL, gzip: bool, level: int
    ) -> tuple[Document, bytes] | None:
        """The stored render :meth:`fresh` answers with, and its body (gzip: compressed
        at ``level``), when the in-process store holds it fresh: read without awaiting.
        ``None`` where the full path has more to do."""
        store = self.store
        if not isinstance(store, MemoryRenderStore) or not (self.renders.ttl or self._tags):
            return None
        if self._calls.backing_off():  # the full path renders without the store meanwhile
            return None
        key = self.keys.key(target, base)
        found = store.peek(key, gzip=gzip)
        if found is None:
            return None
        meta, body = found
        if not _ours(meta) or wall_clock() - meta.rendered_at >= self._fresh_for(meta):
            return None
        if len(body) != (meta.gzip_length if gzip else meta.length) or (
            gzip and meta.gzip_level != level
        ):
            return None
        return self._stored(key, meta), body

    @property
    def plan_store(self) -> PlanStore | None:
        """Where section plans outlive this process: the store, when it shares them across
        a fleet, else the files of ``Renders.plan_directory``."""
        store = self.store
        return store if store.shared and isinstance(store, PlanStore) else self._file_plans

    @property
    def plan_calls(self) -> StoreCalls:
        """How :attr:`plan_store`'s calls are made: the store's, or the files' own."""
        return self._file_calls if self.plan_store is self._file_plans else self._calls

    @property
    def calls(self) -> StoreCalls:
        """How store calls are made (logged, backed off): section plans' too."""
        return self._calls

    async def aclose(self) -> None:
        """Release the store's connections."""
        aclose = getattr(self.store, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception as exc:  # shutting down: report, but let the shutdown finish
                logger.warning(LOG_STORE_FAILED, "closing", type(exc).__name__, exc)

    # -- the document as answered ----------------------------------------------------------

    async def _share(
        self,
        key: str,
        document: Document,
        meta: RenderMeta | None,
        read_at: float,
        by_content: bool = False,
    ) -> Document:
        """``read_at``: when the providers were asked for ``document`` (what its stored
        render is dated by)."""
        if not document.cacheable:
            return document  # incomplete (a section failed): never stored, never shared
        etag = document.etag
        if etag is not None:
            # Stamped stored or not (an unlisted key-range page shares its section's
            # stamp), so a page that changes while unstored never keeps its old date.
            stamp_key, identity = document.stamped_as or (key, etag)
            modified = await self._last_modified(stamp_key, identity, document.last_modified)
            document = replace(document, last_modified=_sendable(modified))
        if etag is None or not document.storable:
            # No content identity, or one any client can make up: concurrent requests
            # still share one pass, and nothing of it is kept.
            return self.once.flown(f"{key}|{etag or ''}", key, document, None)
        if meta is not None and meta.etag == etag:
            # Found current again by this read (a later one may have stored it meanwhile).
            rendered_at = max(meta.rendered_at, read_at)
            current = replace(meta, last_modified=modified, rendered_at=rendered_at)
            if self._fresh_for(current) or self.renders.stale_while_revalidate:
                await self._calls.guard("touching", self.store.touch(key, current, self.keep_for))
            return self._stored(key, current, fallback=document)
        keep = Keep(etag, modified, by_content, read_at)
        return self.once.flown(key + "|" + etag, key, document, keep)

    def _stored(self, key: str, meta: RenderMeta, fallback: Document | None = None) -> Document:
        """The stored render of ``meta``. A body missing or damaged in the store (evicted,
        torn) is a miss: the document is rendered again (``fallback``, or by the core on
        :class:`StoredMissing`), never a 503. A newer version rendered so is newer than
        the validators sent, which can only earn a 200 later, never a stale 304."""

        async def open_stored() -> AsyncIterator[bytes]:
            found = await self._calls.guard("reading", self.store.body(key, meta))
            if (body := stored_body(found, meta.length)) is not None:
                return body
            logger.warning(LOG_BODY_MISSING, key)
            if fallback is not None and fallback.etag is not None:
                keep = Keep(fallback.etag, meta.last_modified, meta.by_content, meta.rendered_at)
                return await self.once.join(key + "|" + fallback.etag, key, fallback, keep)
            error = unavailable(self.config)
            raise StoredMissing(error.status, error.message, error.headers)

        async def open_stored_gzip(level: int) -> AsyncIterator[bytes]:
            if meta.gzip_level == level:  # compressed once, when it was stored
                found = await self._calls.guard("reading", self.store.body(key, meta, gzip=True))
                if (body := stored_body(found, meta.gzip_length)) is not None:
                    return body
            return gzip_chunks(await open_stored(), level)

        sent = _sendable(meta.last_modified)
        document = Document(meta.content_type, meta.etag, sent, open_stored, cache="hit")
        return replace(document, open_gzip=open_stored_gzip)

    # -- rendering once ----------------------------------------------------------------------

    # -- the store, which may fail ---------------------------------------------------------

    def _fresh_for(self, meta: RenderMeta) -> float:
        """Seconds ``meta``'s render answers without asking the providers: ``ttl``, or
        ``content_ttl`` when longer for a render tagged by its bytes (no provider
        version can say whether it still holds)."""
        renders = self.renders
        return max(renders.ttl, renders.content_ttl) if meta.by_content else renders.ttl

    async def _meta(self, key: str) -> RenderMeta | None:
        meta = await self._calls.guard("reading", self.store.meta(key))
        if meta is not None and not _ours(meta):
            logger.warning(LOG_NOT_OURS, key)  # never let it reach a header
            return None
        return meta

    async def _last_modified(
        self, stamp_key: str, identity: str, provided: datetime | None
    ) -> datetime | None:
        """The later of the provider's time and when this content (``identity``) became
        current, as the store stamps it (:meth:`RenderStore.stamp`).

        A provider's newest lastmod misses deletions and renames (it stays, or moves
        backwards), so If-Modified-Since would answer 304 for changed content; the stamp
        moves whenever the content does, content that returns (A -> B -> A) included,
        at least a second after the previous stamp (sent only once it is no longer in the
        future: :func:`_sendable`). The provider's time counts only once its second has
        passed, so every date sent stays before the next content's stamp. In Redis a
        fleet agrees on stamps; without one (the store failed) no date is sent.
        """
        now = datetime.fromtimestamp(int(wall_clock()), timezone.utc)
        seen = await self._calls.guard("reading", self.store.stamp(stamp_key, identity, now))
        if seen is None or provided is None:
            return seen
        provided = provided.replace(microsecond=0)
        if provided >= now:
            # Not yet past (RFC 9110 would send "now"): content replacing this within
            # the second is stamped "now" too, so the date could not tell them apart.
            # The stamp dates it: the next content's is later.
            return seen
        return max(provided, seen)


def _ours(meta: RenderMeta) -> bool:
    """Whether a stored meta can be one the engine wrote: a tag of our shape and a
    printable media type (any store's answer reaches the reply's headers)."""
    kind = meta.content_type
    return bool(_TAG.fullmatch(meta.etag)) and kind.isascii() and kind.isprintable()


def _sendable(stamp: datetime | None) -> datetime | None:
    """``stamp`` as a reply may send it: not while it is still in the future.

    A stamp ahead of the clock means the content changed again within the second of
    the previous one; sent as "now" (RFC 9110 caps future dates) it could equal a date a
    client holds for older content and earn a 304. Sending none makes If-Modified-Since
    answer 200 until the date can tell the versions apart.
    """
    if stamp is None or stamp.timestamp() <= wall_clock():
        return stamp
    return None


def cache_control(value: str | None, config: SitemapConfig) -> str | None:
    """``Cache-Control`` with the RFC 5861 directives the configuration allows."""
    renders = config.renders
    if value is None:
        return None
    if renders.stale_while_revalidate:
        value += f", stale-while-revalidate={math.ceil(renders.stale_while_revalidate)}"
    if renders.stale_if_error:
        value += f", stale-if-error={math.ceil(renders.stale_if_error)}"
    return value
