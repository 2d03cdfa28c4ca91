"""Rendered documents in Redis, shared by every instance of an app (the ``redis`` extra).

With ``render_fallback=RenderFallback(...)`` each process otherwise renders a page once
per ``RenderFallback.ttl`` to learn its ETag; a fleet behind a load balancer would render it
once per instance, and each instance could answer with a different ETag while their
renders disagree. Sharing the cache makes one render serve them all.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from .redis_clients import LoopClients

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisRenderCache"]

#: First field of every value we write; a value without it is not ours (or older).
_FORMAT = b"sm1"
#: ETags as the core makes them (make_etag: 32 hex digits). Nothing else is trusted.
_TAG = re.compile(rb"[0-9a-f]{32}")


class RedisRenderCache:
    """A :class:`RenderCache` in Redis: ``RenderFallback(cache=RedisRenderCache(url))``.

    :param url: a ``redis://`` or ``rediss://`` URL.
    :param ttl: seconds a rendered document stays valid (Redis expires it).
    :param prefix: prepended to every key: the namespace of one deployment. Keys also
        hold a fingerprint of the configuration and of each section's provider (see
        ``provider_identity``), so sites differing there never share pages; give sites
        whose providers cannot be told apart (one class, other data) their own prefix.
    :param timeout: seconds for connecting and for each command.

    redis-py's asyncio connections belong to the event loop that opened them, so one
    client is kept per loop (the ASGI server's, or the WSGI middleware's portal loop).
    Needs asyncio (not trio). A failing Redis never fails a request: the core logs a
    warning and renders as if the cache were empty. Every value carries its length and
    SHA-256; an entry that does not match them is rendered again, never served.
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float = 60.0,
        prefix: str = "sitemap_middleware:",
        timeout: float = 1.0,
    ) -> None:
        try:
            import redis.asyncio  # noqa: F401  (fail here, at configuration, if missing)
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise ImportError(
                "RedisRenderCache needs the redis extra (from a clone: pip install '.[redis]')"
            ) from exc
        if not ttl > 0:
            raise ValueError(f"ttl must be > 0 seconds, got {ttl!r}")
        self._ttl_ms = max(1, round(ttl * 1000))
        self._prefix = prefix
        self._clients = LoopClients(url, timeout)

    def _client(self) -> Redis:
        return self._clients.get()

    def _key(self, key: str) -> str:
        # The core's keys hold URLs; hashing keeps Redis keys short and printable.
        return self._prefix + hashlib.sha256(key.encode()).hexdigest()

    async def get(self, key: str) -> tuple[str, bytes] | None:
        """The stored ``(etag, bytes)``, or None if absent, expired, or not intact."""
        raw = await self._client().get(self._key(key))
        if not isinstance(raw, bytes):  # None: a miss (or expired)
            return None
        return self._decode(raw)

    async def set(self, key: str, value: tuple[str, bytes]) -> None:
        etag, data = value
        # One value (header line, body) so a reader never sees one without the other.
        await self._client().set(
            self._key(key), self._encode(etag.encode("ascii"), data), px=self._ttl_ms
        )

    @staticmethod
    def _encode(etag: bytes, data: bytes) -> bytes:
        """``sm1 <etag> <length> <sha256>\\n<body>``: what :meth:`_decode` verifies.

        The digest covers the tag and the body, so neither can change alone.
        """
        digest = _digest(etag, data)
        return b"%s %s %d %s\n%s" % (_FORMAT, etag, len(data), digest, data)

    @staticmethod
    def _decode(raw: bytes) -> tuple[str, bytes] | None:
        """The entry if it is intact: our format, a printable tag, right length and digest.

        Anything else (a truncated write, a value another program put there, a flipped
        bit) is a miss: the page is rendered again and the entry overwritten.
        """
        header, newline, data = raw.partition(b"\n")
        fields = header.split(b" ")
        if not newline or len(fields) != 4 or fields[0] != _FORMAT:
            return None
        _, etag, length, digest = fields
        if not (_TAG.fullmatch(etag) and length.isdigit() and int(length) == len(data)):
            return None
        if _digest(etag, data) != digest:
            return None
        return etag.decode("ascii"), data

    async def aclose(self) -> None:
        """Close this loop's connections (call from the loop that used the cache)."""
        await self._clients.aclose()


def _digest(etag: bytes, data: bytes) -> bytes:
    return hashlib.sha256(etag + b"\n" + data).hexdigest().encode("ascii")
