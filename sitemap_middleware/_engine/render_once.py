"""One render per document version: which flight a document is read through, and what
is kept when it lands.

This module alone owns how a document the store answers for is rendered:

- every concurrent request for one document (one ETag) reads one flight
  (:mod:`.coalesce`), and every gzip reader of it one more flight over that one (one
  compressor for all);
- a flight whose version is stored meanwhile (by a flight that just ended, or by
  another instance) sends the stored bytes instead of rendering;
- with a shared store, instances take a short render lock (``Renders.lock_ttl``) so one
  renders while the others wait for its bytes; a lock not granted in time, or a store
  that fails, never fails a request: the document is rendered here too;
- a flight that completes whole is stored with its gzip body (compressed once, by its
  gzip readers when there are some) and its meta, off the event loop.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime

import anyio

from .._caches.store import RenderStore, describe_render
from .._config import SitemapConfig
from .._sansio.compress import gzip_chunks
from .answer import Document
from .bodies import stored_body
from .coalesce import Flights, Opener
from .observe import CacheStatus
from .store_calls import StoreCalls

__all__ = ["LOCK_POLL", "Keep", "RenderOnce"]

#: Seconds between looks at the store while another instance holds the render lock.
LOCK_POLL = 0.02


@dataclass(frozen=True, slots=True)
class Keep:
    """What a flight's complete render is stored with."""

    etag: str
    modified: datetime | None
    by_content: bool = False
    #: When its providers were read (wall clock): its age counts from then, not from
    #: when its last reader finished. None: when it completes.
    read_at: float | None = None


@dataclass(slots=True)
class _Lock:
    """The render lock a flight holds in a shared store, and where its bytes came from."""

    token: str | None = None
    from_store: bool = False


class RenderOnce:
    """Reads documents through flights and stores each complete render of a version."""

    def __init__(
        self,
        config: SitemapConfig,
        store: RenderStore,
        calls: StoreCalls,
        max_bytes: int,
        keep_for: float,
        clock: Callable[[], float],
    ) -> None:
        self.config = config
        self.store = store
        self._calls = calls
        #: The largest render stored, and held for readers at different speeds.
        self.max_bytes = max_bytes
        self._keep_for = keep_for  # seconds a stored render is kept
        self._clock = clock  # when a render landed (wall clock: a fleet compares it)
        self.flights = Flights()
        #: Renders stored with their gzip flight's bytes when it ends: (level, save).
        self._gzipping: dict[str, tuple[int, Callable[[bytes | None], Awaitable[None]]]] = {}

    def flown(
        self,
        flight_key: str,
        key: str,
        document: Document,
        keep: Keep | None,
    ) -> Document:
        """``document`` read through the flight ``flight_key`` (one render for every
        concurrent request; stored with ``keep`` when it completes), its gzip through
        one more (one compressor for all)."""

        def open_identity() -> Awaitable[AsyncIterator[bytes]]:
            return self.join(flight_key, key, document, keep)

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

    async def join(
        self,
        flight_key: str,
        key: str,
        document: Document,
        keep: Keep | None,
    ) -> AsyncIterator[bytes]:
        flight = self.flights.get(flight_key)
        if flight is None:
            lock = _Lock()
            etag = keep.etag if keep is not None else None

            async def opener() -> AsyncIterator[bytes]:
                return await self._locked_open(key, etag, document.open, lock)

            async def complete(chunks: list[bytes]) -> None:
                if keep is None or lock.from_store:
                    return
                if document.keeps is not None and not document.keeps():
                    return  # (served, never stored: see Document.keeps)
                http = self.config.http
                level = http.gzip_level if http.gzip else 0
                described = functools.partial(
                    describe_render,
                    keep.etag,
                    document.content_type,
                    keep.modified,
                    self._clock() if keep.read_at is None else keep.read_at,
                    chunks,
                    by_content=keep.by_content,
                )

                async def save(gzip: bytes | None, unlocking: bool = False) -> None:
                    try:  # hashing (and compressing) 8 MiB takes tens of ms: off the loop
                        meta, body, gzip = await anyio.to_thread.run_sync(described, level, gzip)
                        write = self.store.save(key, meta, body, self._keep_for, gzip)
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
                on_complete=complete if keep is not None else None,
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
        deadline = time.monotonic() + self.config.renders.lock_ttl
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
                lock.token = await self.store.lock(key, self.config.renders.lock_ttl)
            except Exception as exc:
                self._calls.failed("locking", exc)
                return await open_body()  # a failing store never fails a request
            if lock.token is None:
                if time.monotonic() > deadline:
                    return await open_body()  # the holder is slow or gone: render here too
                await anyio.sleep(LOCK_POLL)

    async def _stored_body(self, key: str, etag: str) -> AsyncIterator[bytes] | None:
        meta = await self._calls.guard("reading", self.store.meta(key))
        if meta is None or meta.etag != etag:  # only our own tag can match
            return None
        found = await self._calls.guard("reading", self.store.body(key, meta))
        return stored_body(found, meta.length)
