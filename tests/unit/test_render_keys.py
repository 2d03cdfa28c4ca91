"""Render-cache keys and what a cache may hand back (issue 12, item 8)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from sitemap_middleware import RenderFallback, SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._providers.base import as_provider, provider_identity
from tests.helpers import RecordingCache, check_document, fetch, header, page_urls


class Rows:
    def __init__(self, urls: list[str], identity: str | None = None) -> None:
        self.urls = urls
        if identity is not None:
            self.cache_identity = identity

    async def entries(self) -> AsyncIterator[str]:
        for url in self.urls:
            yield url


def shop() -> Iterator[str]:
    yield "/shop"


def blog() -> Iterator[str]:
    yield "/blog"


def test_provider_identity_tells_providers_apart() -> None:
    """Functions, lists, classes and a declared cache_identity each give their own identity."""
    identities = [
        provider_identity(as_provider(shop)),
        provider_identity(as_provider(blog)),
        provider_identity(as_provider(["/a"])),
        provider_identity(as_provider(["/b"])),
        provider_identity(Rows(["/a"])),
        provider_identity(Rows(["/a"], identity="catalog-eu")),
        provider_identity(Rows(["/a"], identity="catalog-us")),
    ]
    assert len(set(identities)) == len(identities)
    assert provider_identity(as_provider(shop)) == identities[0]  # stable, not per instance
    assert identities[0] == "callable:tests.unit.test_render_keys.shop"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "stored",
    [
        ('"0123456789abcdef0123456789abcde', b"<urlset/>"),
        ("0123456789abcdef0123456789abcdef\r\nX-Evil: 1", b"<urlset/>"),
        ("0123456789ABCDEF0123456789ABCDEF", b"<urlset/>"),
        ("0123456789abcdef0123456789abcdef", "not bytes"),
        ("just one",),
        None.__class__,
    ],
    ids=["quote", "crlf", "upper", "str-body", "short-tuple", "not-a-tuple"],
)
async def test_a_cache_entry_we_did_not_write_is_rendered_again(stored: object) -> None:
    """Whatever a RenderCache returns, only a tag of our shape reaches a header."""
    cache = RecordingCache()
    core = SitemapCore(
        SitemapConfig(
            base_url="https://example.com",
            sections={"p": Rows(["/a", "/b"])},
            render_fallback=RenderFallback(cache=cache),
        )
    )
    first, body = await fetch(core, "/sitemap-p-1.xml", accept_encoding="identity")
    (key,) = cache.items
    cache.items[key] = stored  # type: ignore[assignment]
    again, again_body = await fetch(core, "/sitemap-p-1.xml", accept_encoding="identity")
    assert again.status == 200 and again_body == body
    assert header(again, "ETag") == header(first, "ETag")
    assert page_urls(check_document(again_body)) == [
        "https://example.com/a",
        "https://example.com/b",
    ]
