"""Renders, first-seen times and render locks in Redis, shared by a fleet (``redis`` extra).

Keys (``prefix`` + SHA-256 of the engine's document key, which holds the configuration
fingerprint, the providers' identities and the base URL: ``_engine/keys.py``):

- ``…:m`` the meta of the last good render (JSON: ETag, type, Last-Modified, when,
  length, SHA-256, whether its ETag came from its bytes), written after its body;
- ``…:b:<etag>`` the body, ``…:g:<etag>`` its gzip body; read back only if length and
  digest match the meta;
- ``…:s`` the document's stamp: its current content's identity and when it became
  current (checked and set by one script, so every instance reads the same time);
- ``…:l`` the render lock (``SET NX PX``, released by compare-and-delete).

Bodies an instance rendered or read whole are also kept in its own memory by their
SHA-256 (``local_bytes``): content-addressed, so a body is answered from there only
for a meta naming that very digest, and Redis is asked for the meta alone.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .redis_clients import LoopClients
from .store import RenderMeta, StoredBodyError, body_matches

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisRenderStore"]

#: Bodies larger than this are read in chunks of it as they are sent (a GET of 8 MiB in
#: redis-py costs twice as long as eight GETRANGEs of 1 MiB, and holds it all at once).
READ_BYTES = 1024 * 1024
#: Stamps outlive renders by far: they are what Last-Modified says for weeks.
STAMP_KEEP_MS = 90 * 86_400 * 1000
#: The store's stamp (see RenderStore.stamp), checked and set in one step: "<seconds> <id>".
_STAMP = """
local last = redis.call('get', KEYS[1])
local now = tonumber(ARGV[2])
if last then
  local seconds, id = string.match(last, '^(%d+) (.*)$')
  local at = tonumber(seconds)
  if at and id == ARGV[1] then
    redis.call('pexpire', KEYS[1], ARGV[3])
    return at
  end
  if at and now < at + 1 then now = at + 1 end
end
redis.call('set', KEYS[1], tostring(now) .. ' ' .. ARGV[1], 'PX', ARGV[3])
return now
"""
_UNLOCK = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)


class RedisRenderStore:
    """A :class:`RenderStore` in Redis: ``Renders(store=RedisRenderStore(url))``.

    :param url: a ``redis://`` or ``rediss://`` URL.
    :param prefix: prepended to every key: the namespace of one deployment. Keys also
        hold a fingerprint of the configuration and of each section's provider (see
        ``provider_identity``), so sites differing there never share renders; give sites
        whose providers cannot be told apart (one class, other data) their own prefix.
    :param timeout: seconds for connecting and for each command.
    :param local_bytes: bodies (identity and gzip) kept in this process as well, by
        their digest, least recently sent out first; 0 keeps none. A crawl of a section
        of 20 full pages needs about 190 MB.

    One client is kept per event loop (redis-py's asyncio connections belong to the loop
    that opened them). Needs asyncio. A failing Redis never fails a request: the engine
    logs a warning, renders as if the store were empty, and leaves the store alone for a
    back-off (5 s, doubling to 60 s while it keeps failing), so a Redis that accepts
    connections but never answers costs one timeout, not one per call and request.
    """

    shared = True

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "sitemap_middleware:r:",
        timeout: float = 1.0,
        local_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        try:
            import redis.asyncio  # noqa: F401  (fail here, at configuration, if missing)
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise ImportError(
                "RedisRenderStore needs the redis extra (from a clone: pip install '.[redis]')"
            ) from exc
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"url must be a redis://, rediss:// or unix:// URL, got {url!r}")
        if not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string, got {prefix!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        if isinstance(local_bytes, bool) or not isinstance(local_bytes, int) or local_bytes < 0:
            raise ValueError(f"local_bytes must be a number of bytes >= 0, got {local_bytes!r}")
        self._prefix = prefix
        self._clients = LoopClients(url, timeout)
        self._local = LocalBodies(local_bytes)

    def _client(self) -> Redis:
        return self._clients.get()

    def _key(self, key: str, kind: str) -> str:
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{self._prefix}{digest}:{kind}"

    async def meta(self, key: str) -> RenderMeta | None:
        raw = await self._client().get(self._key(key, "m"))
        return None if raw is None else _meta_from_json(raw)

    async def body(
        self, key: str, meta: RenderMeta, *, gzip: bool = False
    ) -> bytes | AsyncIterator[bytes] | None:
        name = self._key(key, _body_kind(meta, gzip))
        length, digest = meta.size_and_digest(gzip)
        if gzip and not meta.gzip_level:
            return None
        if (kept := self._local.get(digest, length)) is not None:
            return kept  # this very content, found whole when it was kept
        client = self._client()
        if length <= READ_BYTES:
            raw = await client.get(name)
            body = raw if isinstance(raw, bytes) else None
            if body is None or not body_matches(meta, body, gzip=gzip):
                return None
            self._local.put(digest, body)
            return body
        async with client.pipeline(transaction=False) as pipe:
            pipe.strlen(name)
            pipe.getrange(name, 0, READ_BYTES - 1)
            stored, first = await pipe.execute()
        if stored != length:
            return None  # gone or torn: a miss, before anything is sent
        return self._chunks(key, name, first, length, digest)

    async def _chunks(
        self, key: str, name: str, first: bytes, length: int, digest: str
    ) -> AsyncIterator[bytes]:
        """The body in chunks of ``READ_BYTES`` (no whole copy per request), hashed as it
        streams; each chunk is sent only once the next is read, so a mismatch is found
        before the last one goes out (its meta is then dropped: the next request renders)."""
        check = hashlib.sha256(first)
        chunk, offset = first, len(first)
        kept: list[bytes] | None = [first] if self._local.fits(length) else None
        while offset < length:
            following = await self._client().getrange(name, offset, offset + READ_BYTES - 1)
            if not isinstance(following, bytes) or not following:
                break
            check.update(following)
            offset += len(following)
            if kept is not None:
                kept.append(following)
            yield chunk
            chunk = following
        if offset != length or check.hexdigest() != digest:
            await self._client().delete(self._key(key, "m"))
            raise StoredBodyError(f"stored body {name} does not match its meta")
        if kept is not None:
            self._local.put(digest, b"".join(kept))
        yield chunk

    async def save(
        self, key: str, meta: RenderMeta, body: bytes, keep: float, gzip: bytes | None = None
    ) -> None:
        ms = max(1, round(keep * 1000))
        client = self._client()
        # Bodies first: a reader that finds the meta finds them (or a mismatch: a miss).
        await client.set(self._key(key, _body_kind(meta, False)), body, px=ms)
        if gzip is not None:
            await client.set(self._key(key, _body_kind(meta, True)), gzip, px=ms)
        await client.set(self._key(key, "m"), _meta_to_json(meta), px=ms)
        self._local.put(meta.digest, body)  # described from these very bytes
        if gzip is not None:
            self._local.put(meta.gzip_digest, gzip)

    async def touch(self, key: str, meta: RenderMeta, keep: float) -> None:
        ms = max(1, round(keep * 1000))
        client = self._client()
        await client.pexpire(self._key(key, _body_kind(meta, False)), ms)
        await client.pexpire(self._key(key, _body_kind(meta, True)), ms)
        await client.set(self._key(key, "m"), _meta_to_json(meta), px=ms)

    async def stamp(self, key: str, identity: str, now: datetime) -> datetime:
        seconds = await self._client().eval(
            _STAMP, 1, self._key(key, "s"), identity, int(now.timestamp()), STAMP_KEEP_MS
        )
        try:
            return datetime.fromtimestamp(int(seconds), timezone.utc)
        except (TypeError, ValueError, OverflowError, OSError):
            return now  # not ours: this instance's sight is all we know

    async def lock(self, key: str, ttl: float) -> str | None:
        token = secrets.token_hex(16)
        taken = await self._client().set(
            self._key(key, "l"), token, nx=True, px=max(1, round(ttl * 1000))
        )
        return token if taken else None

    async def unlock(self, key: str, token: str) -> None:
        await self._client().eval(_UNLOCK, 1, self._key(key, "l"), token)

    async def plan(self, key: str) -> bytes | None:
        data = await self._client().get(self._key(key, "p"))
        return data if isinstance(data, bytes) else None

    async def save_plan(self, key: str, data: bytes, keep: float) -> None:
        await self._client().set(self._key(key, "p"), data, px=max(1, round(keep * 1000)))

    async def values(self, keys: Sequence[str]) -> list[bytes | None]:
        if not keys:
            return []
        found = await self._client().mget([self._key(key, "v") for key in keys])
        return [value if isinstance(value, bytes) else None for value in found]

    async def save_values(self, items: Mapping[str, bytes], keep: float) -> None:
        ms = max(1, round(keep * 1000))
        async with self._client().pipeline(transaction=False) as pipe:
            for key, value in items.items():
                pipe.set(self._key(key, "v"), value, px=ms)
            await pipe.execute()

    async def hash_values(self, name: str) -> dict[bytes, bytes]:
        found = await self._client().hgetall(self._key(name, "h"))
        return {k: v for k, v in found.items() if isinstance(k, bytes) and isinstance(v, bytes)}

    async def save_hash(self, name: str, items: Mapping[bytes, bytes]) -> None:
        if items:
            mapping: dict[Any, Any] = dict(items)
            await self._client().hset(self._key(name, "h"), mapping=mapping)

    async def aclose(self) -> None:
        """Close this loop's connections (call from the loop that used the store)."""
        await self._clients.aclose()


class LocalBodies:
    """Bodies by their SHA-256, at most ``max_bytes`` of them (least recent out)."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._size = 0
        self._bodies: OrderedDict[str, bytes] = OrderedDict()

    def fits(self, length: int) -> bool:
        return 0 < length <= self._max_bytes

    def get(self, digest: str, length: int) -> bytes | None:
        body = self._bodies.get(digest)
        if body is None or len(body) != length:
            return None
        self._bodies.move_to_end(digest)
        return body

    def put(self, digest: str, body: bytes) -> None:
        """Keep ``body``, whose SHA-256 the caller has checked is ``digest``."""
        if not self.fits(len(body)) or digest in self._bodies:
            return
        self._bodies[digest] = body
        self._size += len(body)
        while self._size > self._max_bytes:
            self._size -= len(self._bodies.popitem(last=False)[1])


def _body_kind(meta: RenderMeta, gzip: bool) -> str:
    return ("g:" if gzip else "b:") + meta.etag


def _meta_to_json(meta: RenderMeta) -> bytes:
    return json.dumps(
        {
            "etag": meta.etag,
            "type": meta.content_type,
            "modified": meta.last_modified.isoformat() if meta.last_modified else None,
            "at": meta.rendered_at,
            "length": meta.length,
            "digest": meta.digest,
            "gzip": [meta.gzip_level, meta.gzip_length, meta.gzip_digest],
            "content": meta.by_content,
        }
    ).encode("ascii")


def _meta_from_json(raw: Any) -> RenderMeta | None:
    """The meta, or None for anything we did not write (a foreign or corrupt value)."""
    try:
        data = json.loads(raw)
        modified = data["modified"]
        gzip_level, gzip_length, gzip_digest = data.get("gzip", (0, 0, ""))
        meta = RenderMeta(
            etag=data["etag"],
            content_type=data["type"],
            last_modified=None if modified is None else datetime.fromisoformat(modified),
            rendered_at=float(data["at"]),
            length=int(data["length"]),
            digest=data["digest"],
            gzip_level=int(gzip_level),
            gzip_length=int(gzip_length),
            gzip_digest=str(gzip_digest),
            by_content=data.get("content") is True,
        )
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        return None
    if not (
        isinstance(meta.etag, str)
        and meta.etag.isascii()
        and meta.etag.replace("-", "").isalnum()
        and isinstance(meta.content_type, str)
        and meta.content_type.isascii()
        and meta.content_type.isprintable()
        and isinstance(meta.digest, str)
        and (meta.last_modified is None or meta.last_modified.tzinfo is not None)
    ):
        return None
    return meta
