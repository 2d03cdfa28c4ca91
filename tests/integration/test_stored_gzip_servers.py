"""Compress once, through real servers (issue 24, item 1): a warm gzip GET is the stored
gzip body, sent whole with its Content-Length, the same bytes every time, and the
identity body and 304s stay what they were."""

from __future__ import annotations

import gzip
import os
import uuid
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from redis.asyncio import Redis

from sitemap_middleware import Renders, SitemapConfig
from sitemap_middleware._caches import redis_store
from sitemap_middleware.providers import ProviderVersion
from sitemap_middleware.stores import RedisRenderStore
from tests.harness.servers import serve


class Counted:
    def __init__(self) -> None:
        self.passes = 0

    async def entries(self) -> AsyncIterator[str]:
        self.passes += 1
        for i in range(20_000):
            yield f"/products/{i}?ref=a&b={i}"

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


def _raw(client: httpx.Client, url: str, **headers: str) -> httpx.Response:
    with client.stream("GET", url, headers=headers) as reply:
        reply._content = b"".join(reply.iter_raw())  # as sent: no decoding
    return reply


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_a_warm_gzip_get_sends_the_stored_gzip_body(server: str) -> None:
    provider = Counted()
    config = SitemapConfig(
        base_url="https://example.com", sections={"p": provider}, renders=Renders(ttl=60)
    )
    with serve(server, config) as url, httpx.Client(timeout=30) as client:
        page = url + "/sitemap-p-1.xml"
        identity = _raw(client, page, **{"Accept-Encoding": "identity"})
        assert identity.status_code == 200 and provider.passes == 1
        sent = [_raw(client, page, **{"Accept-Encoding": "gzip"}) for _ in range(3)]
        for reply in sent:
            assert reply.headers["content-encoding"] == "gzip"
            assert reply.headers["content-length"] == str(len(reply.content))
            assert "transfer-encoding" not in reply.headers
            assert gzip.decompress(reply.content) == identity.content
        assert sent[0].content == sent[1].content == sent[2].content  # stored bytes
        assert provider.passes == 1
        again = _raw(client, page, **{"Accept-Encoding": "identity"})
        assert again.content == identity.content
        assert again.headers["content-length"] == str(len(identity.content))
        etag = sent[0].headers["etag"]
        assert etag != identity.headers["etag"]
        not_modified = client.get(page, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
        assert not_modified.status_code == 304 and not_modified.content == b""


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_a_body_streamed_from_redis_is_checked_and_a_damaged_one_never_passes(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From Redis a large body streams in chunks with its Content-Length; one damaged in
    the store is cut short (the client sees a broken response, never a whole wrong
    document), and the next request renders it again."""
    url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if not url:
        pytest.skip("SITEMAP_TEST_REDIS_URL is not set: no Redis server")
    monkeypatch.setattr(redis_store, "READ_BYTES", 64 * 1024)
    # Nothing kept in process: every body is read from Redis (as by the fleet's others).
    store = RedisRenderStore(url, prefix=f"test-{uuid.uuid4().hex}:", local_bytes=0)
    provider = Counted()
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": provider},
        renders=Renders(store=store, ttl=60),
    )
    with serve(server, config) as base, httpx.Client(timeout=30) as client:
        page = base + "/sitemap-p-1.xml"
        first = _raw(client, page, **{"Accept-Encoding": "identity"})
        assert first.status_code == 200 and len(first.content) > 10 * 64 * 1024
        warm = _raw(client, page, **{"Accept-Encoding": "identity"})
        assert warm.content == first.content and provider.passes == 1
        assert warm.headers["content-length"] == str(len(first.content))
        zipped = _raw(client, page, **{"Accept-Encoding": "gzip"})
        assert gzip.decompress(zipped.content) == first.content and provider.passes == 1

        async def damage() -> None:
            redis = Redis.from_url(url)
            try:
                keys = [k async for k in redis.scan_iter(store._prefix + "*:b:*")]
                (key,) = keys
                data = await redis.get(key)
                assert isinstance(data, bytes)
                await redis.set(key, data[:300_000] + b"X" + data[300_001:], keepttl=True)
            finally:
                await redis.aclose()

        anyio.run(damage)
        with pytest.raises(httpx.HTTPError):
            _raw(client, page, **{"Accept-Encoding": "identity"})
        again = _raw(client, page, **{"Accept-Encoding": "identity"})
        assert again.status_code == 200 and again.content == first.content
        assert provider.passes == 2  # rendered again
