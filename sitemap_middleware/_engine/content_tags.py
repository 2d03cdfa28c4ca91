"""ETags from rendered bytes (``Renders(etag="content")``), for documents no provider
version vouches for.

This module alone owns tagging a document by its bytes:

- the document is rendered once through a flight (:mod:`.coalesce`: concurrent requests
  for it read the same render) and hashed as its chunks pass, so its tag is known the
  moment its last chunk is; each request holds the chunks, not a copy of them;
- only a document that ends whole within ``max_bytes`` gets a tag; a larger one is
  remembered as such (for ``content_ttl``), so later requests stream it at once, without
  validators, instead of buffering up to the cap again;
- a render that fails before its end answers 503 (or 500): nothing was sent yet, and
  nothing incomplete is ever tagged.

What happens to a tagged document next (stamped, stored, reused) is the stored renders'
business (:mod:`.shared`), the same as for a document tagged by its providers' versions.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import replace

import anyio

from .._config import SitemapConfig
from .._exceptions import SitemapError
from .._sansio.etag import digest_etag
from .answer import Document
from .bodies import chain, opened
from .coalesce import Flight, Flights
from .urlsets import render_failed

__all__ = ["MAX_TOO_BIG", "ContentTags"]

#: Documents remembered as too big to tag (an LRU: the oldest is forgotten first).
MAX_TOO_BIG = 1024


class _Digest:
    """The running SHA-256 of one render, its tag once the render ended whole, and when
    the request that started it asked the providers (every reader's bytes are from then)."""

    __slots__ = ("asked", "size", "tag")

    def __init__(self, asked: float) -> None:
        self.asked = asked
        self.size = 0
        self.tag: str | None = None


class ContentTags:
    """Turns a document without an ETag into one tagged by its bytes, when it fits."""

    def __init__(self, config: SitemapConfig, flights: Flights, max_bytes: int) -> None:
        self.config = config
        self._flights = flights
        self._max_bytes = max_bytes
        self._digests: dict[Flight, _Digest] = {}
        self._too_big: OrderedDict[str, float] = OrderedDict()

    async def tagged(
        self, key: str, name: str, document: Document, asked: float
    ) -> tuple[Document, float]:
        """``document`` (no ETag, complete) with an ETag from its bytes, or as it is when
        it is too big to hold; and when the providers were asked for those bytes (``asked``
        when this request renders them, earlier when it joins another's render). ``name``
        is what log lines call it.

        Raises :class:`HTTPError` when the render fails before its end (404 and 503
        before the first byte included); nothing has been sent then.
        """
        if self._is_too_big(key):
            return document, asked
        flight = self._flights.get(key + "|bytes") or self._start(key, name, document, asked)
        digest = self._digests[flight]
        body = await flight.open()
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in body:
                chunks.append(chunk)
                size += len(chunk)
                if size > self._max_bytes:
                    self._remember_too_big(key)
                    return _continued(document, chunks, body), digest.asked
        except (SitemapError, ValueError) as exc:
            await _aclose(body)
            raise render_failed(self.config, name, exc) from None
        except BaseException:
            await _aclose(body)
            raise
        tag = digest.tag
        assert tag is not None  # the flight ended whole: its source set the tag
        tagged = replace(
            document,
            etag=tag,
            last_modified=None,
            open=lambda: opened(_replay(chunks)),
            cache="miss",
        )
        return tagged, digest.asked

    def _start(self, key: str, name: str, document: Document, asked: float) -> Flight:
        digest = _Digest(asked)
        fingerprint = self.config.fingerprint
        max_bytes = self._max_bytes

        async def opener() -> AsyncIterator[bytes]:
            return _hashed(await document.open(), digest, fingerprint, max_bytes)

        async def ended() -> None:
            self._digests.pop(flight, None)

        flight = self._flights.start(
            key + "|bytes", name, opener, max_bytes=max_bytes, on_end=ended
        )
        self._digests[flight] = digest
        return flight

    def _is_too_big(self, key: str) -> bool:
        expires = self._too_big.get(key)
        if expires is None:
            return False
        if expires < time.monotonic():
            del self._too_big[key]
            return False
        return True

    def _remember_too_big(self, key: str) -> None:
        self._too_big[key] = time.monotonic() + self.config.renders.content_ttl
        self._too_big.move_to_end(key)
        while len(self._too_big) > MAX_TOO_BIG:
            self._too_big.popitem(last=False)


async def _hashed(
    body: AsyncIterator[bytes], digest: _Digest, fingerprint: str, max_bytes: int
) -> AsyncIterator[bytes]:
    """``body``, hashed as it passes; ``digest.tag`` is set before its end is seen (so
    every reader that sees the end finds the tag), only when it ended within
    ``max_bytes``."""
    sha = hashlib.sha256()
    try:
        async for chunk in body:
            digest.size += len(chunk)
            if digest.size <= max_bytes:
                sha.update(chunk)
            yield chunk
    finally:
        await _aclose(body)
    if digest.size <= max_bytes:
        digest.tag = digest_etag("render", sha.hexdigest(), fingerprint)


def _continued(document: Document, head: list[bytes], rest: AsyncIterator[bytes]) -> Document:
    """The document without validators: what was read, then the rest of its flight.

    Every reply opens it, 304s too (``exists=False`` asks for that): the flight's reader
    it holds is left only when the body is closed.
    """
    return replace(document, open=lambda: opened(chain(head, rest)), exists=False, cache="miss")


async def _replay(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def _aclose(body: AsyncIterator[bytes]) -> None:
    aclose = getattr(body, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):
            await aclose()
