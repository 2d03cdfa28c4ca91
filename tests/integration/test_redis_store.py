"""RedisRenderStore against a real Redis server (scripts/test starts one)."""

from __future__ import annotations

import gzip
import hashlib
import os
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from sitemap_middleware._caches import redis_store
from sitemap_middleware._caches.store import RenderMeta, StoredBodyError, describe_render
from sitemap_middleware.stores import RedisRenderStore

REDIS_ENV = "SITEMAP_TEST_REDIS_URL"
asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"])


@pytest.fixture
def store() -> RedisRenderStore:
    url = os.environ.get(REDIS_ENV)
    if not url:
        pytest.skip(f"{REDIS_ENV} is not set: no Redis server (scripts/test starts one)")
    # Nothing kept in process: what these tests read comes from Redis (the local copies
    # have a test of their own).
    return RedisRenderStore(url, prefix=f"test-{uuid.uuid4().hex}:", local_bytes=0)


def _meta(body: bytes, etag: str = "abc123") -> RenderMeta:
    return RenderMeta(
        etag=etag,
        content_type="application/xml; charset=utf-8",
        last_modified=datetime(2024, 5, 1, tzinfo=timezone.utc),
        rendered_at=1_700_000_000.5,
        length=len(body),
        digest=hashlib.sha256(body).hexdigest(),
    )


@asyncio_only
@pytest.mark.anyio
async def test_round_trip_and_integrity(store: RedisRenderStore) -> None:
    """What is saved comes back; a body that does not match its meta is a miss."""
    body = b"<urlset>\n\x00</urlset>\n"
    try:
        assert await store.meta("doc") is None
        await store.save("doc", _meta(body), body, 60)
        meta = await store.meta("doc")
        assert meta == _meta(body)
        assert await store.body("doc", meta) == body
        client = store._client()
        await client.set(store._key("doc", "b:abc123"), body[:-1])  # torn
        assert await store.body("doc", meta) is None
        await client.set(store._key("doc", "b:abc123"), body[:-1] + b"X")  # same length
        assert await store.body("doc", meta) is None
        await client.set(store._key("doc", "m"), b'{"etag": "x\\r\\nSet-Cookie: a"}')
        assert await store.meta("doc") is None  # foreign or hostile: a miss
        await client.set(store._key("doc", "m"), b"not json")
        assert await store.meta("doc") is None
    finally:
        await store.aclose()


@asyncio_only
@pytest.mark.anyio
async def test_the_gzip_body_is_kept_beside_the_body(store: RedisRenderStore) -> None:
    """A render's gzip body, compressed once, comes back checked like the body; a render
    stored without one (or with a damaged one) has none to send."""
    body = b"<urlset>" + b"<url><loc>https://example.com/a?b=1&amp;c=2</loc></url>" * 200
    meta, _, gz = describe_render("abc123", "application/xml", None, 1_700_000_000.0, [body], 1)
    assert gz is not None and gzip.decompress(gz) == body
    try:
        await store.save("doc", meta, body, 60, gz)
        stored = await store.meta("doc")
        assert stored == meta and stored.gzip_level == 1
        assert await store.body("doc", stored, gzip=True) == gz
        assert await store.body("doc", stored) == body
        await store._client().set(store._key("doc", "g:abc123"), gz[:-1] + b"X")
        assert await store.body("doc", stored, gzip=True) is None  # damaged: a miss
        assert await store.body("doc", stored) == body
        plain, _, _ = describe_render("def456", "application/xml", None, 1.0, [body], 0)
        await store.save("plain", plain, body, 60)
        stored = await store.meta("plain")
        assert stored is not None and stored.gzip_level == 0
        assert await store.body("plain", stored, gzip=True) is None
    finally:
        await store.aclose()


@asyncio_only
@pytest.mark.anyio
async def test_a_stamp_holds_while_its_content_does_and_moves_when_it_returns(
    store: RedisRenderStore,
) -> None:
    """The first instance to stamp a content fixes its time; later readers get it while
    it stays current; new content, or content that returns (A -> B -> A), is stamped
    anew, at least a second after the previous stamp."""
    now = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    try:
        assert await store.stamp("doc", "e1", now) == now
        assert await store.stamp("doc", "e1", now + timedelta(hours=1)) == now
        assert await store.stamp("doc", "e2", now) == now + timedelta(seconds=1)
        later = now + timedelta(days=1)
        assert await store.stamp("doc", "e1", later) == later  # back to e1: anew
        assert await store.stamp("other", "e1", now) == now  # per document
        await store._client().set(store._key("doc", "s"), b"not ours")
        assert await store.stamp("doc", "e1", later) == later
    finally:
        await store.aclose()


@asyncio_only
@pytest.mark.anyio
async def test_lock_is_exclusive_and_released_only_by_its_holder(store: RedisRenderStore) -> None:
    """SET NX PX: one holder at a time; a stale token cannot release someone else's lock."""
    try:
        token = await store.lock("doc", 5)
        assert token is not None
        assert await store.lock("doc", 5) is None
        await store.unlock("doc", "not-the-token")
        assert await store.lock("doc", 5) is None
        await store.unlock("doc", token)
        again = await store.lock("doc", 5)
        assert again is not None
        await store.unlock("doc", again)
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"url": "http://localhost"}, "url must be a redis://"),
        ({"url": "redis://x", "timeout": 0}, "timeout must be"),
        ({"url": "redis://x", "prefix": 3}, "prefix must be a string"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, object], message: str) -> None:
    """Bad arguments raise ValueError naming the argument and the value."""
    with pytest.raises(ValueError, match=message):
        RedisRenderStore(**kwargs)  # type: ignore[arg-type]


@asyncio_only
@pytest.mark.anyio
@pytest.mark.parametrize("damage", ["evicted", "damaged"])
async def test_a_body_lost_from_redis_within_ttl_is_rendered_again(
    store: RedisRenderStore, damage: str
) -> None:
    """A body evicted (maxmemory LRU) or damaged while its meta stays is a miss: 200, not 503."""
    from sitemap_middleware import Renders, SitemapConfig
    from tests.harness.core import SitemapCore, fetch, header

    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": ["/a", "/b?x=1&y=2"]},
        renders=Renders(store=store, ttl=60),
    )
    core = SitemapCore(config)
    try:
        first, body = await fetch(core, "/sitemap.xml")
        assert first.status == 200
        client = store._client()
        keys = [key async for key in client.scan_iter(match=store._prefix + "*:b:*")]
        assert len(keys) == 1
        if damage == "evicted":
            await client.delete(*keys)
        else:
            await client.set(keys[0], body[:-3] + b"XYZ")
        again, same = await fetch(core, "/sitemap.xml")
        assert again.status == 200 and same == body
        assert header(again, "etag") == header(first, "etag")
    finally:
        await core.aclose()


@asyncio_only
@pytest.mark.anyio
async def test_a_large_body_streams_in_chunks_checked_as_they_go(
    store: RedisRenderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above READ_BYTES a body is read chunk by chunk as it is sent (no whole copy); a torn
    body is a miss before anything is sent, a damaged one raises StoredBodyError before
    its last chunk and drops the meta, so the next request renders again."""
    monkeypatch.setattr(redis_store, "READ_BYTES", 1000)
    body = b"".join(
        b"<url><loc>https://example.com/%d?a=1&amp;b=2</loc></url>" % i for i in range(300)
    )
    meta, _, gz = describe_render("abc123", "application/xml", None, 1_700_000_000.0, [body], 1)
    try:
        await store.save("doc", meta, body, 60, gz)
        found = await store.body("doc", meta)
        assert not isinstance(found, bytes | None)
        chunks = [chunk async for chunk in found]
        assert b"".join(chunks) == body and max(map(len, chunks)) == 1000
        client = store._client()
        damaged = body[:5000] + b"X" + body[5001:]
        await client.set(store._key("doc", "b:abc123"), damaged)
        found = await store.body("doc", meta)
        assert found is not None and not isinstance(found, bytes)
        sent = []
        with pytest.raises(StoredBodyError):
            async for chunk in found:
                sent.append(chunk)
        assert len(b"".join(sent)) < len(body)  # never the whole document
        assert await store.meta("doc") is None  # the next request renders again
        await store.save("doc", meta, body, 60, gz)
        await client.set(store._key("doc", "b:abc123"), body[:-1])  # torn
        assert await store.body("doc", meta) is None
    finally:
        await store.aclose()


@asyncio_only
@pytest.mark.anyio
async def test_a_body_read_once_is_sent_again_from_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A body streamed from Redis and found whole is kept in this process by its digest:
    the next request for that content reads no body from Redis (issue 24: Redis-backed
    pages at the speed of static files). Other content is never answered from it, and a
    damaged read is never kept."""
    url = os.environ.get(REDIS_ENV)
    if not url:
        pytest.skip(f"{REDIS_ENV} is not set: no Redis server (scripts/test starts one)")
    store = RedisRenderStore(url, prefix=f"test-{uuid.uuid4().hex}:")
    monkeypatch.setattr(redis_store, "READ_BYTES", 1000)
    body = b"".join(b"<url><loc>https://example.com/%d</loc></url>" % i for i in range(300))
    meta, _, gz = describe_render("abc123", "application/xml", None, 1_700_000_000.0, [body], 1)
    other = RedisRenderStore(os.environ[REDIS_ENV], prefix=store._prefix, local_bytes=0)
    client = store._client()
    try:
        await other.save("doc", meta, body, 60, gz)  # rendered by another instance
        damaged = body[:5000] + b"X" + body[5001:]
        await client.set(store._key("doc", "b:abc123"), damaged)
        found = await store.body("doc", meta)
        assert found is not None and not isinstance(found, bytes)
        with pytest.raises(StoredBodyError):
            async for _ in found:
                pass
        await other.save("doc", meta, body, 60, gz)
        found = await store.body("doc", meta)
        assert found is not None and not isinstance(found, bytes)  # not kept when damaged
        assert b"".join([chunk async for chunk in found]) == body
        await client.delete(store._key("doc", "b:abc123"), store._key("doc", "g:abc123"))
        assert await store.body("doc", meta) == body  # no body read from Redis
        assert await other.body("doc", meta) is None  # (which no longer holds it)
        changed = body.replace(b"/1<", b"/one<")
        meta2, _, gz2 = describe_render("def456", "application/xml", None, 1.0, [changed], 1)
        await other.save("doc", meta2, changed, 60, gz2)
        found = await store.body("doc", meta2)
        assert found is not None and not isinstance(found, bytes)
        assert b"".join([chunk async for chunk in found]) == changed
        assert await store.body("doc", meta) == body  # still the first content's own bytes
        none = RedisRenderStore(os.environ[REDIS_ENV], prefix=store._prefix, local_bytes=0)
        assert await none.body("doc", meta) is None  # local_bytes=0 keeps nothing
        await none.aclose()
    finally:
        await store.aclose()
        await other.aclose()
