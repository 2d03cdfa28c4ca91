"""Render-store keys (one recipe) and what a store may hand back (issue 12, item 8)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import pytest

from sitemap_middleware import HTMLView, Renders, SitemapConfig
from sitemap_middleware._caches.store import RenderMeta
from sitemap_middleware._engine.keys import DocumentKeys
from sitemap_middleware._providers.base import as_provider, provider_identity
from sitemap_middleware._sansio.routing import Kind, Target
from sitemap_middleware.providers import ProviderVersion
from sitemap_middleware.stores import MemoryRenderStore
from tests.harness.core import fetch, header, make_core
from tests.harness.documents import check_document, page_urls


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
    assert identities[0] == "callable:tests.unit.engine.test_keys.shop"


def _key(sections: dict[str, Any], target: Target, **kwargs: Any) -> str:
    config = SitemapConfig(base_url="https://example.com", sections=sections, **kwargs)
    return DocumentKeys(config).key(target, config.base)


def test_one_key_recipe_holds_provider_identity_and_view_settings() -> None:
    """Keys differ by provider (same section names and base URL), and by an HTML view's own
    settings for views only; the same configuration always makes the same key."""
    page = Target(Kind.PAGE, section="p", page=1)
    view = Target(Kind.PAGE, format="html", section="p", page=1)
    shop = {"p": Rows(["/a"], identity="catalog-eu")}
    blog = {"p": Rows(["/a"], identity="catalog-us")}
    assert _key(shop, page) == _key(shop, page)
    assert _key(shop, page) != _key(blog, page)
    first = _key(shop, view, html=HTMLView(title="Sitemaps"))
    second = _key(shop, view, html=HTMLView(title="Our URLs"))
    assert first != second
    assert _key(shop, page, html=HTMLView(title="Sitemaps")) == _key(
        shop, page, html=HTMLView(title="Our URLs")
    )


class Tampering(MemoryRenderStore):
    """A store whose metas come back changed: what a buggy or hostile store might hand."""

    def __init__(self) -> None:
        super().__init__()
        self.change: dict[str, str] = {}

    async def meta(self, key: str) -> RenderMeta | None:
        meta = await super().meta(key)
        return None if meta is None else replace(meta, **self.change)  # type: ignore[arg-type]


class Products:
    """A versioned provider: one deployment's data."""

    cache_identity = "products"

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")

    async def entries(self) -> AsyncIterator[str]:
        for url in self.urls:
            yield url


class Posts(Products):
    """Another deployment's data, with the same version token."""

    cache_identity = "posts"


@pytest.mark.anyio
async def test_deployments_sharing_a_store_never_answer_with_each_others_render() -> None:
    """Same store, base URL, section names and version token, other providers: a stored
    render answering within ttl is never the other deployment's (its key holds the
    providers' identities)."""
    store = MemoryRenderStore()
    bodies = []
    for provider in (Products(["/shop/1"]), Posts(["/blog/1"])):
        core = make_core({"p": provider}, renders=Renders(store=store, ttl=60))
        _, body = await fetch(core, "/sitemap-p-1.xml")
        bodies.append(page_urls(check_document(body)))
    assert bodies == [["https://example.com/shop/1"], ["https://example.com/blog/1"]]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "change",
    [
        {"etag": '"0123456789abcdef0123456789abcde'},
        {"etag": "0123456789abcdef0123456789abcdef\r\nX-Evil: 1"},
        {"etag": "0123456789ABCDEF0123456789ABCDEF"},
        {"content_type": "application/xml\r\nX-Evil: 1"},
    ],
    ids=["quote", "crlf", "upper", "crlf-type"],
)
@pytest.mark.parametrize("mode", ["content", "version"])
async def test_a_stored_render_we_did_not_write_is_rendered_again(
    change: dict[str, str], mode: str
) -> None:
    """Whatever a RenderStore hands back, only a tag of our shape (and a printable media
    type) reaches a header: anything else is a miss, rendered again."""
    store = Tampering()
    core = make_core(
        {"p": Rows(["/a", "/b"]) if mode == "content" else Products(["/a", "/b"])},
        # Tagged by its bytes, or by its version and answered within ttl unasked.
        renders=Renders(etag="content", store=store)
        if mode == "content"
        else Renders(store=store, ttl=60),
    )
    first, body = await fetch(core, "/sitemap-p-1.xml", accept_encoding="identity")
    store.change = change
    again, again_body = await fetch(core, "/sitemap-p-1.xml", accept_encoding="identity")
    assert again.status == 200 and again_body == body
    assert header(again, "ETag") == header(first, "ETag")
    assert header(again, "Content-Type") == "application/xml; charset=utf-8"
    assert "x-evil" not in {name.lower() for name, _ in again.headers}
    assert page_urls(check_document(again_body)) == [
        "https://example.com/a",
        "https://example.com/b",
    ]
