"""Where the last good render of each document lives: the protocol and the in-process store.

This module alone says what a stored render is. A :class:`RenderMeta` (validators, when
it was rendered, the body's length and SHA-256, and those of its gzip body) is kept per
document; the body, and its gzip encoding compressed once when it was stored, are kept
per (document, ETag) and checked against the meta's length and digest when read, so a
body that does not match (torn, corrupt, foreign) is a miss, never served. Only complete
renders are saved (the engine's rule: see ``_engine/shared.py``).

Two more things a fleet must agree on live here too: when each document's current
content became current (its honest ``Last-Modified``), and a short render lock per
document, so one instance renders while the others wait for its bytes.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from .._exceptions import SitemapError
from .._sansio.compress import gzip_bytes

__all__ = [
    "LedgerStore",
    "MemoryRenderStore",
    "PlanStore",
    "RenderMeta",
    "RenderStore",
    "StoredBodyError",
    "ValueStore",
    "body_matches",
    "describe_render",
]

#: Documents whose stamp the in-process store remembers (least recent out).
MAX_STAMPS = 100_000
#: Small values (guard verdicts, ledger lines) the in-process store keeps (least recent out).
MAX_VALUES = 1_000_000

#: A stored render in process: (expires at, meta, body, gzip body).
_Item = tuple[float, "RenderMeta", bytes, bytes | None]


class StoredBodyError(SitemapError):
    """A stored body streamed from a store did not match its meta (torn, expired or
    damaged while it was read): the reply is aborted and the render is stored anew."""


@dataclass(frozen=True, slots=True)
class RenderMeta:
    """What is known of a stored render without reading its body.

    ``rendered_at`` is wall-clock seconds (``time.time()``): instances of a fleet compare
    it, so it cannot be a monotonic clock. ``last_modified`` is what the reply said: the
    later of the provider's time and the document's stamp (:meth:`RenderStore.stamp`).
    ``gzip_level`` is the zlib level of the stored gzip body (0: none stored),
    ``gzip_length`` and ``gzip_digest`` describe it. ``by_content`` marks a render
    whose ETag was made from its bytes (``Renders(etag="content")``): no provider
    version vouches for it, so it is reused for ``Renders.content_ttl``.
    """

    etag: str
    content_type: str
    last_modified: datetime | None
    rendered_at: float
    length: int
    digest: str
    gzip_level: int = 0
    gzip_length: int = 0
    gzip_digest: str = ""
    by_content: bool = False

    def size_and_digest(self, gzip: bool = False) -> tuple[int, str]:
        """Length and SHA-256 of the body (or gzip body) this meta describes."""
        return (self.gzip_length, self.gzip_digest) if gzip else (self.length, self.digest)


def body_matches(meta: RenderMeta, body: bytes | None, *, gzip: bool = False) -> bool:
    """Whether ``body`` is exactly the body (or gzip body) ``meta`` describes (length,
    then SHA-256)."""
    length, digest = meta.size_and_digest(gzip)
    return (
        body is not None
        and (meta.gzip_level > 0 or not gzip)
        and len(body) == length
        and hashlib.sha256(body).hexdigest() == digest
    )


def describe_render(
    etag: str,
    content_type: str,
    last_modified: datetime | None,
    rendered_at: float,
    chunks: Sequence[bytes],
    gzip_level: int,
    gzip: bytes | None = None,
    by_content: bool = False,
) -> tuple[RenderMeta, bytes, bytes | None]:
    """What a store keeps of one complete render (its ``chunks`` as sent): its meta, its
    body, and its gzip body at ``gzip_level`` (0: none): ``gzip`` when readers already
    compressed it, else compressed here, the same bytes a reader compressing those chunks
    got. CPU-bound: callers run it in a worker thread."""
    body = b"".join(chunks)
    digest = hashlib.sha256(body).hexdigest()
    if not gzip_level:
        meta = RenderMeta(
            etag, content_type, last_modified, rendered_at, len(body), digest, by_content=by_content
        )
        return meta, body, None
    if gzip is None:
        gzip = gzip_bytes(chunks, gzip_level)
    gzip_digest = hashlib.sha256(gzip).hexdigest()
    meta = RenderMeta(
        etag,
        content_type,
        last_modified,
        rendered_at,
        len(body),
        digest,
        gzip_level=gzip_level,
        gzip_length=len(gzip),
        gzip_digest=gzip_digest,
        by_content=by_content,
    )
    return meta, body, gzip


@runtime_checkable
class PlanStore(Protocol):
    """Section plans a fleet shares (optional for a store): what one instance measured,
    the next one's first index reads instead of measuring again. Plans are opaque bytes
    here, each carrying the version it was made for."""

    async def plan(self, key: str) -> bytes | None: ...

    async def save_plan(self, key: str, data: bytes, keep: float) -> None: ...


@runtime_checkable
class ValueStore(Protocol):
    """Small values by key, each kept for a while (optional for a store): the guard's
    verdicts and the ledger's lines, read and written a batch at a time, so a fleet
    sharing the store probes and stamps each URL once."""

    async def values(self, keys: Sequence[str]) -> list[bytes | None]: ...

    async def save_values(self, items: Mapping[str, bytes], keep: float) -> None: ...


@runtime_checkable
class LedgerStore(Protocol):
    """The content ledger's records, one hash of small values per name (optional for a
    store; a section's hash is read whole once per plan, written a batch at a time)."""

    async def hash_values(self, name: str) -> dict[bytes, bytes]: ...

    async def save_hash(self, name: str, items: Mapping[bytes, bytes]) -> None: ...


@runtime_checkable
class RenderStore(Protocol):
    """Stored renders, first-seen times and render locks, in process or shared (Redis)."""

    #: True when other processes see what this store holds (locks are then worth taking).
    shared: bool

    async def meta(self, key: str) -> RenderMeta | None:
        """The stored render's meta for document ``key``, or None."""
        ...

    async def body(
        self, key: str, meta: RenderMeta, *, gzip: bool = False
    ) -> bytes | AsyncIterator[bytes] | None:
        """The body ``meta`` describes (its gzip body with ``gzip``), or None when missing
        or not matching it. A large body may come as an async iterator of chunks, checked
        as they stream: one that turns out not to match raises
        :class:`StoredBodyError` before its last chunk."""
        ...

    async def save(
        self, key: str, meta: RenderMeta, body: bytes, keep: float, gzip: bytes | None = None
    ) -> None:
        """Store a complete render for ``keep`` seconds (bodies first, then the meta);
        ``gzip`` is its gzip body when ``meta.gzip_level`` is set."""
        ...

    async def touch(self, key: str, meta: RenderMeta, keep: float) -> None:
        """Replace the meta only (the same body was found current again)."""
        ...

    async def stamp(self, key: str, identity: str, now: datetime) -> datetime:
        """When ``identity`` (a content's ETag or version) became what ``key`` is.

        While ``identity`` is the last one stamped for ``key``, the stamp it got then; any
        other identity (new content, or content that returns: A -> B -> A) is stamped
        ``now``, and at least a second after the previous stamp, so a date sent for older
        content never vouches for it. Kept far longer than renders (a crawler's date may
        be weeks old); one check-and-set, so a fleet agrees."""
        ...

    async def lock(self, key: str, ttl: float) -> str | None:
        """Take the render lock of ``key`` for ``ttl`` seconds; a token, or None if held."""
        ...

    async def unlock(self, key: str, token: str) -> None:
        """Release the lock if ``token`` still holds it."""
        ...


class MemoryRenderStore:
    """Renders kept in this process, at most ``max_bytes`` of bodies (least recent out).

    Locks always succeed: within a process, requests for one document already share one
    render (the engine coalesces them).
    """

    shared = False

    def __init__(self, max_bytes: int = 32 * 1024 * 1024) -> None:
        self._max_bytes = max_bytes
        self._size = 0
        self._items: OrderedDict[str, _Item] = OrderedDict()
        self._stamps: OrderedDict[str, tuple[str, datetime]] = OrderedDict()
        self._values: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        #: Request threads peek (WSGI) while the loop saves and evicts: each look or
        #: change of the items is one step under this lock.
        self._lock = threading.Lock()

    async def meta(self, key: str) -> RenderMeta | None:
        item = self._live(key)
        return None if item is None else item[1]

    async def body(self, key: str, meta: RenderMeta, *, gzip: bool = False) -> bytes | None:
        item = self._live(key)
        if item is None or item[1].etag != meta.etag:
            return None
        return item[3] if gzip else item[2]

    async def save(
        self, key: str, meta: RenderMeta, body: bytes, keep: float, gzip: bytes | None = None
    ) -> None:
        size = len(body) + len(gzip or b"")
        if size > self._max_bytes:
            return
        with self._lock:
            self._drop(key)
            self._items[key] = (time.monotonic() + keep, meta, body, gzip)
            self._size += size
            while self._size > self._max_bytes:
                self._drop(next(iter(self._items)))

    async def touch(self, key: str, meta: RenderMeta, keep: float) -> None:
        with self._lock:
            item = self._items.get(key)
            if item is not None and item[1].etag == meta.etag:
                self._items[key] = (time.monotonic() + keep, meta, item[2], item[3])
                self._items.move_to_end(key)

    async def stamp(self, key: str, identity: str, now: datetime) -> datetime:
        last = self._stamps.get(key)
        if last is not None and last[0] == identity:
            self._stamps.move_to_end(key)
            return last[1]
        stamped = now if last is None else max(now, last[1] + timedelta(seconds=1))
        self._stamps[key] = (identity, stamped)
        self._stamps.move_to_end(key)
        while len(self._stamps) > MAX_STAMPS:
            self._stamps.popitem(last=False)
        return stamped

    async def lock(self, key: str, ttl: float) -> str | None:
        return secrets.token_hex(8)

    async def unlock(self, key: str, token: str) -> None:
        return None

    async def values(self, keys: Sequence[str]) -> list[bytes | None]:
        now = time.monotonic()
        found = [self._values.get(key) for key in keys]
        return [None if v is None or v[0] < now else v[1] for v in found]

    async def save_values(self, items: Mapping[str, bytes], keep: float) -> None:
        until = time.monotonic() + keep
        for key, value in items.items():
            self._values[key] = (until, value)
            self._values.move_to_end(key)
        while len(self._values) > MAX_VALUES:
            self._values.popitem(last=False)

    def peek(self, key: str, *, gzip: bool = False) -> tuple[RenderMeta, bytes] | None:
        """A live render and its body, read without awaiting: safe from any thread."""
        item = self._live(key)
        if item is None:
            return None
        body = item[3] if gzip else item[2]
        return None if body is None else (item[1], body)

    def _live(self, key: str) -> _Item | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            if item[0] < time.monotonic():
                self._drop(key)
                return None
            self._items.move_to_end(key)
            return item

    def _drop(self, key: str) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self._size -= len(item[2]) + len(item[3] or b"")
