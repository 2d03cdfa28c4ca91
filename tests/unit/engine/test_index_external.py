"""Sitemaps served elsewhere, listed in the index and robots.txt (issue #15, item 5)."""

from __future__ import annotations

import pytest

from sitemap_middleware import ConfigurationError, SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, child_urls

pytestmark = pytest.mark.anyio

EXTERNAL = ("https://cdn.example.com/sitemaps/images.xml", "/blog/sitemap.xml")


def _core(**kwargs: object) -> SitemapCore:
    return make_core(
        {"p": ["/a"]}, base_url="https://example.com/shop", external_sitemaps=EXTERNAL, **kwargs
    )


async def test_external_sitemaps_are_listed_in_the_index_and_robots() -> None:
    """sitemap.xml becomes the index, listing our pages then the external sitemaps; robots.txt
    names every entry point."""
    core = _core()
    for path in ("/shop/sitemap.xml", "/shop/sitemap_index.xml"):
        _, body = await fetch(core, path)
        assert child_urls(check_document(body)) == [
            "https://example.com/shop/sitemap-p-1.xml",
            "https://cdn.example.com/sitemaps/images.xml",
            "https://example.com/blog/sitemap.xml",
        ]
    _, robots = await fetch(core, "/robots.txt")
    assert robots.decode().splitlines()[-3:] == [
        "Sitemap: https://example.com/shop/sitemap.xml",
        "Sitemap: https://cdn.example.com/sitemaps/images.xml",
        "Sitemap: https://example.com/blog/sitemap.xml",
    ]


async def test_external_sitemaps_change_the_index_etag() -> None:
    """Adding an external sitemap changes the index's validators."""
    plain = make_core({"p": ["/a"]}, base_url="https://example.com/shop")
    a, _ = await fetch(_core(), "/shop/sitemap_index.xml")
    b, _ = await fetch(plain, "/shop/sitemap_index.xml")
    assert dict(a.headers)["ETag"] != dict(b.headers)["ETag"]


@pytest.mark.parametrize("bad", ["ftp://example.com/s.xml", "sitemap.xml", "https://exa mple.com/"])
def test_external_sitemaps_must_be_urls(bad: str) -> None:
    """A value that is not an http(s) URL or a path is refused at construction."""
    with pytest.raises(ConfigurationError, match="SitemapConfig.external_sitemaps"):
        SitemapConfig(
            base_url="https://example.com", sections={"p": ["/a"]}, external_sitemaps=[bad]
        )


# -- review-core: defects found by the hostile review ---------------------------------


@pytest.mark.parametrize(
    "externals",
    [
        ["/shop/sitemap.xml"],  # our own entry point: the index listed itself
        ["/shop/sitemap_index.xml"],  # an index inside an index (not allowed by the protocol)
        ["/blog/sitemap.xml", "/blog/sitemap.xml"],  # listed twice, two Sitemap: lines
    ],
)
def test_external_sitemaps_refuse_our_own_documents_and_repeats(externals: list[str]) -> None:
    with pytest.raises(ConfigurationError, match="external_sitemaps"):
        SitemapConfig(
            base_url="https://example.com/shop",
            sections={"p": ["/a"]},
            external_sitemaps=externals,
        )
