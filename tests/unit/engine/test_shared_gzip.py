"""Compress once (issue 24, item 1): a stored render keeps its gzip body beside the
identity body, and a warm gzip request sends those stored bytes, with Content-Length."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator

import pytest

from sitemap_middleware import HTTPSettings, Renders
from sitemap_middleware._caches.store import MemoryRenderStore, RenderMeta
from sitemap_middleware._sansio import compress
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import SitemapCore, fetch, header, make_core

pytestmark = pytest.mark.anyio


class Versioned:
    def __init__(self) -> None:
        self.token = "v1"
        self.passes = 0

    async def entries(self) -> AsyncIterator[str]:
        self.passes += 1
        for i in range(2_000):
            yield f"/item/{i}?a=1&b={self.token}"

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=self.token)


class Counting:
    """Counts zlib compressors made per request (GzipStream and the one-shot kind)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.streams = 0
        real = compress.GzipStream
        counter = self

        class CountingStream(real):  # type: ignore[valid-type, misc]
            def __init__(self, level: int) -> None:
                counter.streams += 1
                super().__init__(level)

        monkeypatch.setattr(compress, "GzipStream", CountingStream)


def _core(store: MemoryRenderStore | None = None, **http: object) -> tuple[SitemapCore, Versioned]:
    provider = Versioned()
    core = make_core(
        {"p": provider},
        renders=Renders(store=store),
        http=HTTPSettings(**http),  # type: ignore[arg-type]
    )
    return core, provider


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-p-1.xml", "/sitemap_index.xml"])
async def test_a_warm_gzip_request_sends_the_stored_gzip_body(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    core, provider = _core()
    first, identity = await fetch(core, path)
    counting = Counting(monkeypatch)
    for _ in range(3):
        reply, body = await fetch(core, path, accept_encoding="gzip")
        assert reply.status == 200 and header(reply, "content-encoding") == "gzip"
        assert gzip.decompress(body) == identity
        assert header(reply, "content-length") == str(len(body))
    assert counting.streams == 0  # no compressor per request: the stored bytes
    again, body = await fetch(core, path)
    assert body == identity and header(again, "content-length") == str(len(identity))
    assert header(again, "etag") == header(first, "etag")
    await core.aclose()


async def test_a_stored_gzip_body_follows_its_render_when_content_changes() -> None:
    core, provider = _core()
    _, old = await fetch(core, "/sitemap.xml", accept_encoding="gzip")
    provider.token = "v2"
    reply, new = await fetch(core, "/sitemap.xml", accept_encoding="gzip")
    assert b"b=v2" in gzip.decompress(new) and b"b=v1" not in gzip.decompress(new)
    _, stored = await fetch(core, "/sitemap.xml", accept_encoding="gzip")
    assert stored == new or gzip.decompress(stored) == gzip.decompress(new)
    await core.aclose()


class LosingGzip(MemoryRenderStore):
    """A store that loses (or damages) gzip bodies while identity bodies stay."""

    async def body(self, key: str, meta: RenderMeta, *, gzip: bool = False) -> bytes | None:
        return None if gzip else await super().body(key, meta)


async def test_a_lost_stored_gzip_body_is_compressed_from_the_identity_body(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    core, provider = _core(LosingGzip())
    _, identity = await fetch(core, "/sitemap.xml")
    passes = provider.passes
    counting = Counting(monkeypatch)
    reply, body = await fetch(core, "/sitemap.xml", accept_encoding="gzip")
    assert reply.status == 200 and gzip.decompress(body) == identity
    assert counting.streams == 1 and provider.passes == passes  # no render, one compressor
    assert header(reply, "content-length") is None  # streamed as it is compressed
    await core.aclose()


async def test_without_gzip_no_gzip_body_is_stored() -> None:
    store = MemoryRenderStore()
    core, _ = _core(store, gzip=False)
    await fetch(core, "/sitemap.xml")
    reply, _ = await fetch(core, "/sitemap.xml", accept_encoding="gzip")
    assert header(reply, "content-encoding") is None
    (item,) = store._items.values()
    assert item[1].gzip_level == 0 and item[3] is None
    await core.aclose()


class Long:
    """A full page over the old 8 MiB store limit (50,000 URLs, about 9.5 MB)."""

    def __init__(self) -> None:
        self.passes = 0

    async def entries(self) -> AsyncIterator[str]:
        self.passes += 1
        for i in range(50_000):
            slug = "a-long-product-slug-for-a-full-page-of-urls-kept-whole-by-the-store"
            yield f"/catalogue/products/{i:08d}/{slug}?a=1&b={i}&c=2&d=3"

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


async def test_every_full_page_is_stored_by_default() -> None:
    """The largest stored document follows the page budget (issue 24, item 3): a full
    page between 8 MiB and max_bytes_per_page is stored, so a second crawl reads none."""
    provider = Long()
    core = make_core({"p": provider})
    assert core.config.renders.max_bytes is None
    first, body = await fetch(core, "/sitemap-p-1.xml")
    assert 8 * 1024 * 1024 < len(body) <= core.config.max_bytes_per_page
    again, same = await fetch(core, "/sitemap-p-1.xml", accept_encoding="gzip")
    assert again.cache == "hit" and gzip.decompress(same) == body and provider.passes == 1
    await core.aclose()


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-p-1.xml"])
async def test_one_gzip_etag_names_one_body_cold_or_stored(path: str) -> None:
    """A strong ETag vouches for the bytes: the stored gzip body is what the first gzip
    reader was sent (the render's chunks compressed as they streamed), not another
    compression of the same content."""
    core, provider = _core()
    cold, cold_body = await fetch(core, path, accept_encoding="gzip")
    warm, warm_body = await fetch(core, path, accept_encoding="gzip")
    assert warm.cache == "hit" and provider.passes == 1
    assert header(warm, "etag") == header(cold, "etag") and warm_body == cold_body
    await core.aclose()
