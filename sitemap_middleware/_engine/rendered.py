"""Render-derived validators: an ETag from the rendered bytes, kept in a render cache.

This module alone owns what may enter the render cache and what may come out of it:

- only complete documents are stored (a document that left out a failing section, or
  whose render failed or was cut off, never is);
- what a cache returns is used only if its tag has the shape ``make_etag`` gives (a
  foreign, corrupt or hostile entry is a miss and is rendered again, so no ``"`` or CR
  from a cache ever reaches a header);
- a document found too big for the cache is remembered as such, so later requests
  stream at once instead of buffering up to the cap again;
- one render per key at a time (requests for the same document wait for it and share
  the result), and at most ``MAX_BUFFERING`` documents buffering at once, which bounds
  the memory render mode can take.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

import anyio

from .._caches.memory import RenderCache
from .._exceptions import ProviderError, SitemapError
from .._providers.base import UrlProvider, provider_identity
from .._sansio.etag import content_etag
from .bodies import bytes_body, chain, opened
from .documents import LOG_FAILED, Document, HTTPError, service_unavailable
from .stream import logger

__all__ = ["MAX_BUFFERING", "RenderLimits", "RenderValidation"]

#: Documents buffering into memory at once (each up to the cache's byte cap); more wait.
MAX_BUFFERING = 4
#: Keys remembered as too big for the cache (an LRU: the oldest is forgotten first).
MAX_TOO_BIG = 1024
#: What content_etag returns: a tag of any other shape did not come from us.
_TAG = re.compile(r"[0-9a-f]{32}")

LOG_CACHE_FAILED = "sitemap render cache failed %s: %s: %s"
LOG_CACHE_INVALID = "sitemap render cache returned an entry we did not write; rendering here"


@dataclass(frozen=True, slots=True)
class RenderLimits:
    """How much one render may buffer, and how long results are remembered."""

    max_bytes: int
    ttl: float
    retry_after: int


class RenderValidation:
    """Turns a document without validators into one with a render-derived ETag.

    Cache keys hold the configuration's fingerprint, every section's provider identity
    (:func:`provider_identity`) and the base URL, so two deployments sharing a Redis
    with the same base URL and section names but other providers never share pages.
    """

    def __init__(
        self,
        cache: RenderCache,
        fingerprint: str,
        sections: Sequence[tuple[str, UrlProvider]],
        limits: RenderLimits,
    ) -> None:
        self._cache = cache
        self._fingerprint = fingerprint
        identities = "\x1f".join(f"{name}={provider_identity(p)}" for name, p in sections)
        self._deployment = hashlib.sha256(identities.encode("utf-8", "surrogatepass")).hexdigest()
        self._limits = limits
        self._too_big: OrderedDict[str, float] = OrderedDict()
        self._locks: dict[str, tuple[anyio.Lock, int]] = {}
        self._buffering: anyio.Semaphore | None = None

    def key(self, prefix: str, target: object) -> str:
        """The cache key of ``target`` served under the base URL ``prefix``."""
        return f"{self._fingerprint}|{self._deployment}|{prefix}|{target}"

    async def aclose(self) -> None:
        """Release what the render cache holds open (a Redis cache's connections)."""
        aclose = getattr(self._cache, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception as exc:  # shutting down: report, but let the shutdown finish
                logger.warning(LOG_CACHE_FAILED, "closing", type(exc).__name__, exc)

    async def cached(self, key: str, content_type: str) -> Document | None:
        """The stored render of ``key``, before anything is planned or read; or None."""
        return await self._cached(key, Document(content_type, None, None, _nothing))

    async def validated(self, key: str, label: str, document: Document) -> Document:
        """``document`` with an ETag from its bytes, or as it is if it cannot have one.

        Raises :class:`HTTPError` (503 for a provider failure) when the render fails
        before the first byte; a failure after it aborts the stream as usual.
        """
        if not document.cacheable:
            return document  # incomplete (a section failed): never stored, never tagged
        if (found := await self._cached(key, document)) is not None:
            return found
        if self._is_too_big(key):
            return document
        async with self._key_lock(key):
            # Whoever held the lock may have stored the document, or found it too big.
            if (found := await self._cached(key, document)) is not None:
                return found
            if self._is_too_big(key):
                return document
            if self._buffering is None:
                self._buffering = anyio.Semaphore(MAX_BUFFERING)
            async with self._buffering:
                return await self._render(key, label, document)

    async def _render(self, key: str, label: str, document: Document) -> Document:
        body = await document.open()  # 404/503 before any byte, as without render mode
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in body:
                chunks.append(chunk)
                size += len(chunk)
                if size > self._limits.max_bytes:
                    self._remember_too_big(key)
                    return replace(_streaming(document, chunks, body), cache="miss")
        except (SitemapError, ValueError) as exc:
            # Nothing is sent yet: a clean 503 (or 500), never a stored partial page.
            await _aclose(body)
            status = 503 if isinstance(exc, ProviderError) else 500
            logger.error(LOG_FAILED, label, status, exc)
            if status == 503:
                raise service_unavailable(self._limits.retry_after) from None
            raise HTTPError(
                500, "Internal Server Error: the sitemap could not be rendered"
            ) from None
        except BaseException:
            await _aclose(body)
            raise
        data = b"".join(chunks)
        tag = content_etag("render", data, self._fingerprint)
        await self._store(key, (tag, data))
        return replace(_from_bytes(document, tag, data), cache="miss")

    # -- what the cache says ----------------------------------------------------------

    async def _cached(self, key: str, document: Document) -> Document | None:
        # A shared cache (Redis) can fail; the sitemap is then rendered here.
        try:
            value = await self._cache.get(key)
        except Exception as exc:
            logger.warning(LOG_CACHE_FAILED, "reading (rendering here)", type(exc).__name__, exc)
            return None
        if value is None:
            return None
        if not (
            isinstance(value, tuple)
            and len(value) == 2
            and isinstance(value[0], str)
            and _TAG.fullmatch(value[0])
            and isinstance(value[1], bytes)
        ):
            logger.warning(LOG_CACHE_INVALID)
            return None
        return _from_bytes(document, *value)

    async def _store(self, key: str, value: tuple[str, bytes]) -> None:
        try:
            await self._cache.set(key, value)
        except Exception as exc:
            logger.warning(LOG_CACHE_FAILED, "writing", type(exc).__name__, exc)

    # -- too big, and one render per key ----------------------------------------------

    def _is_too_big(self, key: str) -> bool:
        expires = self._too_big.get(key)
        if expires is None:
            return False
        if expires < time.monotonic():
            del self._too_big[key]
            return False
        return True

    def _remember_too_big(self, key: str) -> None:
        self._too_big[key] = time.monotonic() + self._limits.ttl
        self._too_big.move_to_end(key)
        while len(self._too_big) > MAX_TOO_BIG:
            self._too_big.popitem(last=False)

    def _key_lock(self, key: str) -> _KeyLock:
        return _KeyLock(self._locks, key)


class _KeyLock:
    """A lock per key, dropped from the table when its last user leaves."""

    def __init__(self, table: dict[str, tuple[anyio.Lock, int]], key: str) -> None:
        self._table = table
        self._key = key

    async def __aenter__(self) -> None:
        lock, users = self._table.get(self._key) or (anyio.Lock(), 0)
        self._table[self._key] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._leave()
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._table[self._key][0].release()
        self._leave()

    def _leave(self) -> None:
        lock, users = self._table[self._key]
        if users == 1:
            del self._table[self._key]
        else:
            self._table[self._key] = (lock, users - 1)


def _streaming(document: Document, head: list[bytes], rest: AsyncIterator[bytes]) -> Document:
    """The document without validators: what was buffered, then the rest of the stream."""
    return replace(document, open=lambda: opened(chain(head, rest)))


def _from_bytes(document: Document, tag: str, data: bytes) -> Document:
    """A document from a render in hand (the cache's, unless the caller says otherwise)."""
    return replace(
        document, etag=tag, last_modified=None, open=lambda: opened(bytes_body(data)), cache="hit"
    )


async def _nothing() -> AsyncIterator[bytes]:  # pragma: no cover - replaced by _from_bytes
    return bytes_body(b"")


async def _aclose(body: AsyncIterator[bytes]) -> None:
    aclose = getattr(body, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):
            await aclose()
