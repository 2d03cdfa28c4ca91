"""RedisRenderCache against a real Redis server (``.ci/run`` starts one)."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from benchmarks.common import free_port
from sitemap_middleware import ConfigurationError, RenderFallback, SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.stores import RedisRenderCache
from tests.helpers import check_document, fetch, header, page_urls
from tests.integration.servers import serve

REDIS_ENV = "SITEMAP_TEST_REDIS_URL"
#: redis-py's asyncio client is bound to asyncio.
asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"])


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get(REDIS_ENV)
    if not url:
        pytest.skip(f"{REDIS_ENV} is not set: no Redis server (.ci/run starts one)")
    return url


def _cache(url: str, **kwargs: float) -> RedisRenderCache:
    """A cache with a prefix of its own, so tests never see each other's keys."""
    return RedisRenderCache(url, prefix=f"test-{uuid.uuid4().hex}:", **kwargs)


class Unversioned:
    """A provider that can tell nothing about freshness; counts how often it is read."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.reads = 0

    async def entries(self) -> AsyncIterator[str]:
        self.reads += 1
        for url in self.urls:
            yield url


def _config(provider: Unversioned, cache: RedisRenderCache, base: str) -> SitemapConfig:
    return SitemapConfig(
        base_url=base,
        sections={"p": provider},
        render_fallback=RenderFallback(cache=cache),
    )


@asyncio_only
@pytest.mark.anyio
async def test_round_trip_expiry_and_foreign_values(redis_url: str) -> None:
    """get returns what set stored, until the TTL passes; a value we did not write is a miss."""
    cache = _cache(redis_url, ttl=0.3)
    assert await cache.get("k") is None
    tag = "0123456789abcdef" * 2
    await cache.set("k", (tag, b"<urlset>\n\x00bytes</urlset>"))
    assert await cache.get("k") == (tag, b"<urlset>\n\x00bytes</urlset>")
    try:
        await anyio.sleep(0.5)
        assert await cache.get("k") is None
        await cache._client().set(cache._key("foreign"), b"no newline here")
        assert await cache.get("foreign") is None
    finally:
        await cache.aclose()


@asyncio_only
@pytest.mark.anyio
async def test_instances_of_an_app_share_one_render(redis_url: str) -> None:
    """Two app instances (two cores) on one Redis: one render, one ETag, 304s on both."""
    prefix = f"test-{uuid.uuid4().hex}:"
    first_provider, second_provider = Unversioned(["/a", "/b"]), Unversioned(["/a", "/b"])
    first = SitemapCore(
        _config(first_provider, RedisRenderCache(redis_url, prefix=prefix), "https://example.com")
    )
    second = SitemapCore(
        _config(second_provider, RedisRenderCache(redis_url, prefix=prefix), "https://example.com")
    )
    try:
        reply, body = await fetch(first, "/sitemap-p-1.xml")
        etag = header(reply, "ETag")
        assert etag is not None
        again, again_body = await fetch(second, "/sitemap-p-1.xml")
        assert header(again, "ETag") == etag and again_body == body
        # One read: the plan (its render replays what planning read); second: none.
        assert (first_provider.reads, second_provider.reads) == (1, 0)
        not_modified, _ = await fetch(second, "/sitemap-p-1.xml", if_none_match=etag)
        assert not_modified.status == 304
    finally:
        await first.aclose()
        await second.aclose()
    assert page_urls(check_document(body)) == ["https://example.com/a", "https://example.com/b"]


@asyncio_only
@pytest.mark.anyio
async def test_other_configurations_do_not_share_entries(redis_url: str) -> None:
    """Same Redis and prefix, another base URL: its own render, never the other's bytes."""
    prefix = f"test-{uuid.uuid4().hex}:"
    shop = SitemapCore(
        _config(
            Unversioned(["/a"]), RedisRenderCache(redis_url, prefix=prefix), "https://a.example"
        )
    )
    blog = SitemapCore(
        _config(
            Unversioned(["/a"]), RedisRenderCache(redis_url, prefix=prefix), "https://b.example"
        )
    )
    try:
        _, shop_body = await fetch(shop, "/sitemap-p-1.xml")
        _, blog_body = await fetch(blog, "/sitemap-p-1.xml")
    finally:
        await shop.aclose()
        await blog.aclose()
    assert b"https://a.example/a" in shop_body and b"https://b.example/a" in blog_body


@asyncio_only
@pytest.mark.anyio
async def test_unreachable_redis_still_serves_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Redis down: the page is rendered here, with its ETag, and a warning says why."""
    cache = RedisRenderCache(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)  # no one there
    core = SitemapCore(_config(Unversioned(["/a"]), cache, "https://example.com"))
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        try:
            reply, body = await fetch(core, "/sitemap-p-1.xml")
        finally:
            await core.aclose()
    assert reply.status == 200 and header(reply, "ETag") is not None
    assert page_urls(check_document(body)) == ["https://example.com/a"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("render cache failed reading" in m and "ConnectionError" in m for m in messages)
    assert any("render cache failed writing" in m for m in messages)


def test_render_fallback_checks_its_cache(redis_url: str) -> None:
    """RenderFallback(cache=...) takes only a RenderCache; a Redis cache with a TTL of 0 is refused."""
    RenderFallback(cache=_cache(redis_url))
    with pytest.raises(ConfigurationError, match="RenderFallback.cache must implement RenderCache"):
        RenderFallback(cache="redis://localhost")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ttl must be > 0"):
        RedisRenderCache(redis_url, ttl=0)


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_two_servers_share_renders_through_redis(redis_url: str, server: str) -> None:
    """Two real servers (ASGI, or WSGI with its portal loop) on one Redis: one render."""
    prefix = f"test-{uuid.uuid4().hex}:"
    providers = [Unversioned([f"/p/{i}" for i in range(2000)]) for _ in range(2)]
    configs = [
        _config(p, RedisRenderCache(redis_url, prefix=prefix), "https://example.com")
        for p in providers
    ]
    with serve(server, configs[0]) as one, serve(server, configs[1]) as two:
        first = httpx.get(one + "/sitemap-p-1.xml")
        second = httpx.get(two + "/sitemap-p-1.xml", headers={"Accept-Encoding": "identity"})
        third = httpx.get(
            two + "/sitemap-p-1.xml", headers={"If-None-Match": first.headers["etag"]}
        )
    assert first.status_code == second.status_code == 200
    assert first.content == second.content  # httpx decoded the gzip one
    assert third.status_code == 304
    # One server reads once (the plan; its render replays what planning read), the other never.
    assert [p.reads for p in providers] == [1, 0]
    assert len(page_urls(check_document(second.content))) == 2000


def _only_key(url: str, prefix: str) -> bytes:
    """The one Redis key written under ``prefix``."""
    import redis

    with redis.Redis.from_url(url) as client:
        keys = client.keys(prefix + "*")
    assert len(keys) == 1, keys
    return bytes(keys[0])


def _raw(url: str, key: bytes, value: bytes | None = None) -> bytes:
    """Read a Redis value, or overwrite it (keeping its expiry) when ``value`` is given."""
    import redis

    with redis.Redis.from_url(url) as client:
        if value is not None:
            client.set(key, value, keepttl=True)
        found = client.get(key)
    assert isinstance(found, bytes)
    return found


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty-body", "garbage"])
def test_damaged_entries_are_rendered_again(redis_url: str, server: str, damage: str) -> None:
    """A truncated or corrupt Redis entry is never served: the page is rendered again."""
    prefix = f"test-{uuid.uuid4().hex}:"
    provider = Unversioned([f"/p/{i}" for i in range(2000)])
    config = _config(provider, RedisRenderCache(redis_url, prefix=prefix), "https://example.com")
    with serve(server, config) as url:
        first = httpx.get(url + "/sitemap-p-1.xml")
        key = _only_key(redis_url, prefix)
        raw = _raw(redis_url, key)
        damaged = {
            "truncated": raw[: len(raw) - 100],
            "flipped": raw[:-50] + bytes([raw[-50] ^ 1]) + raw[-49:],
            "empty-body": raw[: raw.index(b"\n") + 1],
            "garbage": b"\xff\xfe not ours",
        }[damage]
        _raw(redis_url, key, damaged)
        second = httpx.get(url + "/sitemap-p-1.xml")
        repaired = _raw(redis_url, key)
    assert first.status_code == second.status_code == 200
    assert second.content == first.content and second.headers["etag"] == first.headers["etag"]
    assert len(page_urls(check_document(second.content))) == 2000
    # The plan (its render replays it), then rendered again (plan kept), stored again.
    assert provider.reads == 2
    assert repaired == raw


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
@pytest.mark.parametrize(
    "etag", ['abc"def', "0123456789abcdef0123456789abcdef\r\nX-Evil: 1", "é", ""]
)
def test_hostile_etags_from_the_cache_never_reach_a_header(
    redis_url: str, server: str, etag: str
) -> None:
    """A cache entry whose tag holds a quote or CR/LF is a miss: no 500, no injected header."""
    prefix = f"test-{uuid.uuid4().hex}:"
    provider = Unversioned(["/a", "/b"])
    cache = RedisRenderCache(redis_url, prefix=prefix)
    config = _config(provider, cache, "https://example.com")
    with serve(server, config) as url:
        first = httpx.get(url + "/sitemap-p-1.xml", headers={"Accept-Encoding": "identity"})
        key = _only_key(redis_url, prefix)
        # A well-formed entry (length and digest right) carrying a hostile tag, as a
        # buggy or hostile writer sharing the Redis could store it.
        hostile = RedisRenderCache._encode(etag.encode("utf-8"), first.content)
        _raw(redis_url, key, hostile)
        second = httpx.get(url + "/sitemap-p-1.xml", headers={"Accept-Encoding": "identity"})
    assert second.status_code == 200
    assert second.headers["etag"] == first.headers["etag"]
    assert "x-evil" not in second.headers
    assert provider.reads == 2  # the plan (its render replays it), then rendered again


class ShopProducts(Unversioned):
    """One deployment's products."""


class BlogPosts(Unversioned):
    """Another deployment's posts, under the same section name."""


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_deployments_with_other_providers_never_share_pages(redis_url: str, server: str) -> None:
    """Same Redis, prefix, base URL and section names, other providers: separate pages."""
    prefix = f"test-{uuid.uuid4().hex}:"

    def shop_urls() -> list[str]:
        return ["/shop/1", "/shop/2"]

    def blog_urls() -> list[str]:
        return ["/blog/1"]

    deployments: list[dict[str, Any]] = [
        {"p": ShopProducts(["/shop/1"]), "q": shop_urls},
        {"p": BlogPosts(["/blog/1"]), "q": blog_urls},
    ]
    bodies = []
    for sections in deployments:
        config = SitemapConfig(
            base_url="https://example.com",
            sections=sections,
            render_fallback=RenderFallback(cache=RedisRenderCache(redis_url, prefix=prefix)),
        )
        with serve(server, config) as url:
            bodies.append([httpx.get(url + f"/sitemap-{s}-1.xml").content for s in ("p", "q")])
    assert page_urls(check_document(bodies[0][0])) == ["https://example.com/shop/1"]
    assert page_urls(check_document(bodies[1][0])) == ["https://example.com/blog/1"]
    assert page_urls(check_document(bodies[0][1])) == [
        "https://example.com/shop/1",
        "https://example.com/shop/2",
    ]
    assert page_urls(check_document(bodies[1][1])) == ["https://example.com/blog/1"]
