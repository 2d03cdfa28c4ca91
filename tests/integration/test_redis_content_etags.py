"""ETags from rendered bytes (``Renders(etag="content")``) in a RedisRenderStore shared by
a fleet, against a real Redis server (``.ci/run`` starts one)."""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from sitemap_middleware import ConfigurationError, Renders, SitemapConfig
from sitemap_middleware._caches.store import describe_render
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.stores import RedisRenderStore
from tests.harness.core import fetch, header
from tests.harness.documents import check_document, page_urls
from tests.harness.ports import free_port
from tests.harness.servers import serve

REDIS_ENV = "SITEMAP_TEST_REDIS_URL"
#: redis-py's asyncio client is bound to asyncio.
asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"])


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get(REDIS_ENV)
    if not url:
        pytest.skip(f"{REDIS_ENV} is not set: no Redis server (.ci/run starts one)")
    return url


def _store(url: str, prefix: str | None = None, **kwargs: Any) -> RedisRenderStore:
    """A store with a prefix of its own, so tests never see each other's keys."""
    return RedisRenderStore(url, prefix=prefix or f"test-{uuid.uuid4().hex}:", **kwargs)


class Unversioned:
    """A provider that can tell nothing about freshness; counts how often it is read."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.reads = 0

    async def entries(self) -> AsyncIterator[str]:
        self.reads += 1
        for url in self.urls:
            yield url


def _config(provider: Unversioned, store: RedisRenderStore, base: str) -> SitemapConfig:
    return SitemapConfig(
        base_url=base,
        sections={"p": provider},
        renders=Renders(etag="content", store=store),
    )


@asyncio_only
@pytest.mark.anyio
async def test_a_render_tagged_by_its_bytes_says_so_in_redis(redis_url: str) -> None:
    """A meta keeps whether its ETag came from the bytes; a foreign meta is a miss."""
    store = _store(redis_url, local_bytes=0)
    tag = "0123456789abcdef" * 2
    body = b"<urlset>\n\x00bytes</urlset>"
    meta, data, _ = describe_render(tag, "application/xml", None, 1.0, [body], 0, by_content=True)
    try:
        await store.save("k", meta, data, 60)
        assert await store.meta("k") == meta and meta.by_content
        assert await store.body("k", meta) == body
        await store._client().set(store._key("foreign", "m"), b"no json here")
        assert await store.meta("foreign") is None
    finally:
        await store.aclose()


@asyncio_only
@pytest.mark.anyio
async def test_instances_of_an_app_share_one_render(redis_url: str) -> None:
    """Two app instances (two cores) on one Redis: one render, one ETag, 304s on both."""
    prefix = f"test-{uuid.uuid4().hex}:"
    first_provider, second_provider = Unversioned(["/a", "/b"]), Unversioned(["/a", "/b"])
    first = SitemapCore(_config(first_provider, _store(redis_url, prefix), "https://example.com"))
    second = SitemapCore(_config(second_provider, _store(redis_url, prefix), "https://example.com"))
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
    shop = SitemapCore(_config(Unversioned(["/a"]), _store(redis_url, prefix), "https://a.example"))
    blog = SitemapCore(_config(Unversioned(["/a"]), _store(redis_url, prefix), "https://b.example"))
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
    store = RedisRenderStore(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)  # no one there
    core = SitemapCore(_config(Unversioned(["/a"]), store, "https://example.com"))
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        try:
            reply, body = await fetch(core, "/sitemap-p-1.xml")
        finally:
            await core.aclose()
    assert reply.status == 200 and header(reply, "ETag") is not None
    assert page_urls(check_document(body)) == ["https://example.com/a"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("render store failed reading" in m and "ConnectionError" in m for m in messages)


def test_renders_check_their_store(redis_url: str) -> None:
    """Renders(store=...) takes only a RenderStore: a Redis URL is no store."""
    Renders(etag="content", store=_store(redis_url))
    with pytest.raises(ConfigurationError, match="Renders.store must implement RenderStore"):
        Renders(etag="content", store="redis://localhost")  # type: ignore[arg-type]


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_two_servers_share_renders_through_redis(redis_url: str, server: str) -> None:
    """Two real servers (ASGI, or WSGI with its portal loop) on one Redis: one render."""
    prefix = f"test-{uuid.uuid4().hex}:"
    providers = [Unversioned([f"/p/{i}" for i in range(2000)]) for _ in range(2)]
    configs = [_config(p, _store(redis_url, prefix), "https://example.com") for p in providers]
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


def _keys(url: str, pattern: str) -> list[bytes]:
    import redis

    with redis.Redis.from_url(url) as client:
        return sorted(bytes(k) for k in client.keys(pattern))


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
def test_damaged_bodies_are_rendered_again(redis_url: str, server: str, damage: str) -> None:
    """A truncated or corrupt body in Redis is never served: the page is rendered again."""
    prefix = f"test-{uuid.uuid4().hex}:"
    provider = Unversioned([f"/p/{i}" for i in range(2000)])
    # Nothing kept in process: the body is read back from Redis.
    config = _config(provider, _store(redis_url, prefix, local_bytes=0), "https://example.com")
    with serve(server, config) as url:
        first = httpx.get(url + "/sitemap-p-1.xml")
        (body_key,) = _keys(redis_url, prefix + "*:b:*")
        raw = _raw(redis_url, body_key)
        for key in [body_key, *_keys(redis_url, prefix + "*:g:*")]:  # identity and gzip
            stored = _raw(redis_url, key)
            _raw(
                redis_url,
                key,
                {
                    "truncated": stored[: len(stored) - 100],
                    "flipped": stored[:-50] + bytes([stored[-50] ^ 1]) + stored[-49:],
                    "empty-body": b"",
                    "garbage": b"\xff\xfe not ours",
                }[damage],
            )
        second = httpx.get(url + "/sitemap-p-1.xml")
        repaired = _raw(redis_url, body_key)
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
def test_hostile_etags_from_the_store_never_reach_a_header(
    redis_url: str, server: str, etag: str
) -> None:
    """A stored meta whose tag holds a quote or CR/LF is a miss: no 500, no injected header."""
    prefix = f"test-{uuid.uuid4().hex}:"
    provider = Unversioned(["/a", "/b"])
    config = _config(provider, _store(redis_url, prefix), "https://example.com")
    with serve(server, config) as url:
        first = httpx.get(url + "/sitemap-p-1.xml", headers={"Accept-Encoding": "identity"})
        (key,) = _keys(redis_url, prefix + "*:m")
        # A well-formed meta (length and digest right) carrying a hostile tag, as a buggy
        # or hostile writer sharing the Redis could store it.
        meta = json.loads(_raw(redis_url, key))
        _raw(redis_url, key, json.dumps({**meta, "etag": etag}).encode())
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
            renders=Renders(etag="content", store=_store(redis_url, prefix)),
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
