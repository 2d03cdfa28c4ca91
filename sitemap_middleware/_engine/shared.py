"""Shared renders: one render per document version, served stale when allowed.

This module alone decides when a stored render answers instead of the provider
(:class:`~sitemap_middleware.Renders` configures it):

- a document whose ETag (from provider metadata, or from its bytes in render mode)
  matches the stored render is answered from the stored bytes: no provider pass;
- a stored render younger than ``ttl`` answers without asking the provider at all;
  until ``ttl + stale_while_revalidate`` it still answers while one refresh runs in the
  background (asyncio; on trio the request revalidates in line instead);
- when the provider fails before the first byte (503), a stored render younger than
  ``ttl + stale_if_error`` answers, with its own validators (RFC 5861);
- otherwise the document is rendered once: concurrent requests share the render
  (:mod:`.coalesce`) and, with a shared store, instances take a short lock so one
  renders while the others wait for its bytes;
- ``Last-Modified`` is the later of the provider's time and the time the document's ETag
  was first seen (kept by the store, so a fleet agrees on it): it moves whenever content
  does, deletions and renames included.

Only complete renders of complete documents (no section left out) are stored.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import anyio

from .._caches.store import MemoryRenderStore, PlanStore, RenderMeta, RenderStore, describe_render
from .._config import SitemapConfig
from .._sansio.compress import gzip_chunks
from .._sansio.routing import Target
from .._sansio.urls import BaseURL
from .bodies import stored_body
from .coalesce import Flights, Opener
from .documents import Document, HTTPError, unavailable
from .observe import CacheStatus
from .refresh import BackgroundRefreshes
from .store_calls import LOG_STORE_FAILED, StoreCalls
from .stream import logger
from .views import view_key

__all__ = ["LOG_STALE", "SharedRenders", "wall_clock"]

#: Seconds a stored render is kept at least (a document's ETag may match it for long).
MIN_KEEP = 3600.0
#: Seconds between looks at the store while another instance holds the render lock.
LOCK_POLL = 0.02

LOG_STALE = "sitemap %s: serving the stored render (%s; %.1f s old)"
LOG_BODY_MISSING = "sitemap render store: stored body missing or damaged, rendering again: %s"
LOG_REFRESH_FAILED = "sitemap %s: background refresh failed: %s: %s"


def wall_clock() -> float:
    """Seconds since the epoch: what instances of a fleet compare render ages by."""
    return time.time()


Fresh = Callable[[], Awaitable[Document]]


@dataclass(slots=True)
class _Lock:
    """The render lock a flight holds in a shared store, and where its bytes came from."""

    token: str | None = None
    from_store: bool = False


class SharedRenders:
    """Answers documents from stored renders, coalesced renders, or stale renders."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self.renders = config.renders
        self.store: RenderStore = self.renders.store or MemoryRenderStore(self.renders.memory_bytes)
        #: The largest render stored, and held for readers at different speeds.
        self.max_bytes = self.renders.max_bytes or config.max_bytes_per_page
        self.flights = Flights()
        self._refreshes = BackgroundRefreshes()
        self._calls = StoreCalls()  # logging, and the back-off after a failure
        #: Renders stored with their gzip flight's bytes when it ends: (level, save).
        self._gzipping: dict[str, tuple[int, Callable[[bytes | None], Awaitable[None]]]] = {}

    def key(self, target: Target, base: BaseURL) -> str:
        """The store key of ``target`` under the base URL ``base``."""
        return f"{self.config.fingerprint}|{base.prefix}|{target!r}{view_key(self.config, target)}"

    async def document(self, target: Target, base: BaseURL, name: str, fresh: Fresh) -> Document:
        """The document to answer ``target`` with; ``fresh()`` builds it from providers.

        ``name`` is the document's file name as requested (``sitemap-products-2.xml``):
        what log lines call it.
        """
        key = self.key(target, base)
        meta = await self._meta(key)
        renders = self.renders
        if meta is not None:
            age = wall_clock() - meta.rendered_at
            if age < renders.ttl:
                return self._stored(key, meta, fresh=fresh)
            if age < renders.ttl + renders.stale_while_revalidate and self._revalidate_later(
                key, name, meta, fresh
            ):
                logger.info(LOG_STALE, name, "stale-while-revalidate", age)
                return replace(self._stored(key, meta, fresh=fresh), cache="stale")
        try:
            document = await fresh()
        except HTTPError as exc:
            stale = self._if_error(key, name, meta, exc)
            if stale is None:
                raise
            return stale
        return await self._share(key, document, meta)

    def stored_now(
        self, target: Target, base: BaseURL, gzip: bool, level: int
    ) -> tuple[Document, bytes] | None:
        """The stored render :meth:`document` answers with, and its body (gzip: compressed
        at ``level``), when the in-process store holds it fresh (``Renders(ttl=...)``):
        read without awaiting. ``None`` where :meth:`document` has more to do."""
        store = self.store
        if not isinstance(store, MemoryRenderStore) or not self.renders.ttl:
            return None
        if self._calls.backing_off():  # document() renders without the store meanwhile
            return None
        key = self.key(target, base)
        found = store.peek(key, gzip=gzip)
        if found is None:
            return None
        meta, body = found
        if wall_clock() - meta.rendered_at >= self.renders.ttl:
            return None
        if len(body) != (meta.gzip_length if gzip else meta.length) or (
            gzip and meta.gzip_level != level
        ):
            return None
        return self._stored(key, meta), body

    async def stale(
        self, target: Target, base: BaseURL, name: str, exc: HTTPError
    ) -> Document | None:
        """The stored render to answer with when a render failed before its first byte."""
        key = self.key(target, base)
        return self._if_error(key, name, await self._meta(key), exc)

    @property
    def plan_store(self) -> PlanStore | None:
        """The store, when it shares section plans across a fleet."""
        store = self.store
        return store if store.shared and isinstance(store, PlanStore) else None

    @property
    def calls(self) -> StoreCalls:
        """How store calls are made (logged, backed off): section plans' too."""
        return self._calls

    async def aclose(self) -> None:
        """Stop background refreshes and release the store's connections."""
        await self._refreshes.aclose()
        aclose = getattr(self.store, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception as exc:  # shutting down: report, but let the shutdown finish
                logger.warning(LOG_STORE_FAILED, "closing", type(exc).__name__, exc)

    # -- the document as answered ----------------------------------------------------------

    async def _share(self, key: str, document: Document, meta: RenderMeta | None) -> Document:
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
            return self._flown(f"{key}|{etag or ''}", key, document, None, None)
        if meta is not None and meta.etag == etag:
            current = replace(meta, last_modified=modified, rendered_at=wall_clock())
            if self.renders.ttl or self.renders.stale_while_revalidate:
                await self._calls.guard("touching", self.store.touch(key, current, self._keep()))
            return self._stored(key, current, fallback=document)
        return self._flown(key + "|" + etag, key, document, etag, modified)

    def _flown(
        self,
        flight_key: str,
        key: str,
        document: Document,
        etag: str | None,
        modified: datetime | None,
    ) -> Document:
        """``document`` read through the flight ``flight_key`` (one render for every
        concurrent request), its gzip through one more (one compressor for all)."""

        def open_identity() -> Awaitable[AsyncIterator[bytes]]:
            return self._join(flight_key, key, document, etag, modified)

        async def open_gzip(level: int) -> AsyncIterator[bytes]:
            gzip_key = f"{flight_key}|gzip{level}"
            flight = self.flights.get(gzip_key)
            if flight is None:

                async def opener() -> AsyncIterator[bytes]:
                    return gzip_chunks(await open_identity(), level)

                async def compressed(chunks: list[bytes] | None) -> None:
                    waiting = self._gzipping.get(flight_key)  # None: cut short, compress there
                    if waiting is not None and (chunks is None or waiting[0] == level):
                        del self._gzipping[flight_key]
                        await waiting[1](None if chunks is None else b"".join(chunks))

                flight = self.flights.start(
                    gzip_key,
                    key,
                    opener,
                    max_bytes=self.max_bytes,
                    on_complete=compressed,
                    on_end=lambda: compressed(None),
                )
            return await flight.open()

        return replace(
            document,
            open=open_identity,
            open_gzip=open_gzip,
            cache=self._joining(flight_key, document),
        )

    def _joining(self, flight_key: str, document: Document) -> CacheStatus | None:
        """ "coalesced" when a render of this document is running (this reply joins it)."""
        return "coalesced" if self.flights.get(flight_key) is not None else document.cache

    def _stored(
        self,
        key: str,
        meta: RenderMeta,
        fallback: Document | None = None,
        fresh: Fresh | None = None,
    ) -> Document:
        """The stored render of ``meta``. A body missing or damaged in the store (evicted,
        torn) is a miss: the document is rendered again (``fallback``, or ``fresh()``),
        never a 503. A newer version rendered so is newer than the validators sent,
        which can only earn a 200 later, never a stale 304."""

        async def open_stored() -> AsyncIterator[bytes]:
            found = await self._calls.guard("reading", self.store.body(key, meta))
            if (body := stored_body(found, meta.length)) is not None:
                return body
            logger.warning(LOG_BODY_MISSING, key)
            if fallback is not None and fallback.etag is not None:
                return await self._join(
                    key + "|" + fallback.etag, key, fallback, fallback.etag, meta.last_modified
                )
            if fresh is not None:
                again = await self._share(key, await fresh(), None)
                if again.cache != "hit":  # never loop on a store that keeps failing
                    return await again.open()
            raise unavailable(self.config)

        async def open_stored_gzip(level: int) -> AsyncIterator[bytes]:
            if meta.gzip_level == level:  # compressed once, when it was stored
                found = await self._calls.guard("reading", self.store.body(key, meta, gzip=True))
                if (body := stored_body(found, meta.gzip_length)) is not None:
                    return body
            return gzip_chunks(await open_stored(), level)

        sent = _sendable(meta.last_modified)
        document = Document(meta.content_type, meta.etag, sent, open_stored, cache="hit")
        return replace(document, open_gzip=open_stored_gzip)

    def _if_error(
        self, key: str, name: str, meta: RenderMeta | None, exc: HTTPError
    ) -> Document | None:
        if exc.status != 503 or meta is None or not self.renders.stale_if_error:
            return None
        age = wall_clock() - meta.rendered_at
        if age > self.renders.ttl + self.renders.stale_if_error:
            return None
        logger.warning(LOG_STALE, name, "stale-if-error", age)
        return replace(self._stored(key, meta), cache="stale")

    # -- rendering once ----------------------------------------------------------------------

    async def _join(
        self,
        flight_key: str,
        key: str,
        document: Document,
        etag: str | None,
        modified: datetime | None,
    ) -> AsyncIterator[bytes]:
        flight = self.flights.get(flight_key)
        if flight is None:
            lock = _Lock()

            async def opener() -> AsyncIterator[bytes]:
                return await self._locked_open(key, etag, document.open, lock)

            async def complete(chunks: list[bytes]) -> None:
                if etag is None or lock.from_store:
                    return
                http = self.config.http
                level = http.gzip_level if http.gzip else 0
                described = functools.partial(
                    describe_render, etag, document.content_type, modified, wall_clock(), chunks
                )

                async def save(gzip: bytes | None, unlocking: bool = False) -> None:
                    try:  # hashing (and compressing) 8 MiB takes tens of ms: off the loop
                        meta, body, gzip = await anyio.to_thread.run_sync(described, level, gzip)
                        write = self.store.save(key, meta, body, self._keep(), gzip)
                        await self._calls.guard("writing", write)
                    finally:
                        if unlocking:
                            await unlock()

                if level and self.flights.get(f"{flight_key}|gzip{level}") is not None:
                    # Its gzip readers compress it: stored (and unlocked) when they are done.
                    self._gzipping[flight_key] = (level, functools.partial(save, unlocking=True))
                    return
                await save(None)

            async def unlock() -> None:
                token, lock.token = lock.token, None
                if token is not None:
                    await self._calls.guard("unlocking", self.store.unlock(key, token))

            async def end() -> None:
                if flight_key not in self._gzipping:  # else once its gzip body is stored
                    await unlock()

            flight = self.flights.start(
                flight_key,
                key,
                opener,
                max_bytes=self.max_bytes,
                on_complete=complete if etag is not None else None,
                on_end=end,
            )
        return await flight.open()

    async def _locked_open(
        self, key: str, etag: str | None, open_body: Opener, lock: _Lock
    ) -> AsyncIterator[bytes]:
        """Open the render, unless this version is stored already or another instance is
        rendering it (a shared store's lock): then the stored bytes."""
        if etag is None:
            return await open_body()
        deadline = time.monotonic() + self.renders.lock_ttl
        while True:
            # Stored meanwhile (by a flight that just ended, or by the lock holder)?
            if (body := await self._stored_body(key, etag)) is not None:
                lock.from_store = True
                return body
            if not self.store.shared:
                return await open_body()
            if lock.token is not None or self._calls.backing_off():
                return await open_body()  # locked (and checked the store), or store down
            try:
                lock.token = await self.store.lock(key, self.renders.lock_ttl)
            except Exception as exc:
                self._calls.failed("locking", exc)
                return await open_body()  # a failing store never fails a request
            if lock.token is None:
                if time.monotonic() > deadline:
                    return await open_body()  # the holder is slow or gone: render here too
                await anyio.sleep(LOCK_POLL)

    async def _stored_body(self, key: str, etag: str) -> AsyncIterator[bytes] | None:
        meta = await self._meta(key)
        if meta is None or meta.etag != etag:
            return None
        found = await self._calls.guard("reading", self.store.body(key, meta))
        return stored_body(found, meta.length)

    # -- stale-while-revalidate --------------------------------------------------------------

    def _revalidate_later(self, key: str, name: str, meta: RenderMeta, fresh: Fresh) -> bool:
        """Start one background refresh of ``key``; False where none can run (trio)."""
        return self._refreshes.start(key, lambda: self._refresh(name, key, meta, fresh))

    async def _refresh(self, name: str, key: str, meta: RenderMeta, fresh: Fresh) -> None:
        try:
            document = await self._share(key, await fresh(), meta)
            body = await document.open()
            try:
                async for _ in body:
                    pass  # the flight stores the render when it completes
            finally:
                await body.aclose()  # type: ignore[attr-defined]
        except Exception as exc:
            logger.warning(LOG_REFRESH_FAILED, name, type(exc).__name__, exc)

    # -- the store, which may fail ---------------------------------------------------------

    def _keep(self) -> float:
        renders = self.renders
        return max(
            MIN_KEEP, renders.ttl + max(renders.stale_while_revalidate, renders.stale_if_error)
        )

    async def _meta(self, key: str) -> RenderMeta | None:
        return await self._calls.guard("reading", self.store.meta(key))

    async def _last_modified(
        self, stamp_key: str, identity: str, provided: datetime | None
    ) -> datetime | None:
        """The later of the provider's time and when this content (``identity``) became
        current, as the store stamps it (:meth:`RenderStore.stamp`).

        A provider's newest lastmod misses deletions and renames (it stays, or moves
        backwards), so If-Modified-Since would answer 304 for changed content; the stamp
        moves whenever the content does, content that returns (A -> B -> A) included,
        at least a second after the previous stamp (sent only once it is no longer in the
        future: :func:`_sendable`). In Redis a fleet agrees on stamps; without one (the
        store failed) no date is sent.
        """
        now = datetime.fromtimestamp(int(wall_clock()), timezone.utc)
        seen = await self._calls.guard("reading", self.store.stamp(stamp_key, identity, now))
        if seen is None or provided is None:
            return seen
        # RFC 9110 §8.8.2.1: a time in the future is replaced by the time of the reply.
        provided = min(provided.replace(microsecond=0), now)
        return max(provided, seen)


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
