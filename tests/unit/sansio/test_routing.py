"""Pure routing of request paths to our documents."""

from __future__ import annotations

import pytest

from sitemap_middleware import SitemapConfig
from sitemap_middleware._sansio.routing import Kind, Routes, Target, match


def _config(**kwargs: object) -> Routes:
    options: dict[str, object] = {
        "base_url": "https://example.com",
        "sections": {"blog": ["/a"], "news-de": ["/b"]},
    }
    options.update(kwargs)
    return SitemapConfig(**options).routes()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/robots.txt", Target(Kind.ROBOTS)),
        ("/sitemap.xml", Target(Kind.ROOT)),
        ("/sitemap.xml.gz", Target(Kind.ROOT, gzip_file=True)),
        ("/sitemap_index.xml", Target(Kind.INDEX)),
        ("/sitemap-blog-1.xml", Target(Kind.PAGE, section="blog", page=1)),
        (
            "/sitemap-news-de-12.xml.gz",
            Target(Kind.PAGE, gzip_file=True, section="news-de", page=12),
        ),
        ("/sitemap-blog-0.xml", Target(Kind.PAGE, section="blog", page=0)),
        ("/sitemap-blog-01.xml", Target(Kind.PAGE, section="blog", page=0)),
        ("/sitemap-blog-99999999999999999999.xml", Target(Kind.PAGE, section="blog", page=0)),
        ("/sitemap-other-1.xml", None),
        ("/sitemap-blog--1.xml", None),
        ("/sitemap-blog-1.txt", None),
        ("/sitemap.txt", None),
        ("/sitemap.xsl", None),
        ("/sub/sitemap.xml", None),
        ("/", None),
        ("/about", None),
        ("/sitemap.xml/", None),
    ],
    ids=repr,
)
def test_match_default_paths(path: str, expected: Target | None) -> None:
    """Our paths map to targets; everything else goes to the app."""
    assert match(path, _config()) == expected


def test_match_with_prefix_text_and_stylesheet() -> None:
    """A base URL with a path moves the sitemaps under it; text and XSL are opt-in."""
    config = _config(base_url="https://example.com/shop/", text_sitemaps=True, stylesheet=True)
    assert match("/shop/sitemap.xml", config) == Target(Kind.ROOT)
    assert match("/sitemap.xml", config) is None
    assert match("/shop/sitemap.txt", config) == Target(Kind.ROOT, format="txt")
    assert match("/shop/sitemap-blog-2.txt", config) == Target(
        Kind.PAGE, format="txt", section="blog", page=2
    )
    assert match("/shop/sitemap.xsl", config) == Target(Kind.STYLESHEET)
    assert match("/robots.txt", config) == Target(Kind.ROBOTS)


def test_match_without_robots_or_gzip_files() -> None:
    """robots=None and gzip_files=False hand those paths to the app."""
    config = _config(robots=None, gzip_files=False)
    assert match("/robots.txt", config) is None
    assert match("/sitemap.xml.gz", config) is None


@pytest.mark.parametrize("digits", ["\u0661", "\uff11", "1\u0662", "\u0967"], ids=repr)
def test_page_numbers_are_ascii_digits_only(digits: str) -> None:
    """Non-ASCII digits (Arabic-Indic, full-width, Devanagari) name no page: the app gets them."""
    assert match(f"/sitemap-blog-{digits}.xml", _config()) is None


def test_base_url_with_non_ascii_path_is_routed() -> None:
    """A base URL path with non-ASCII characters is advertised percent-encoded and routed
    from the decoded request path the servers hand over."""
    config = SitemapConfig(base_url="https://example.com/café/", sections={"p": ["/a"]})
    assert config.base.directory == "/caf%C3%A9/"
    routes = config.routes()
    assert match("/café/sitemap.xml", routes) == Target(Kind.ROOT)
    assert match("/café/sitemap-p-1.xml", routes) == Target(Kind.PAGE, section="p", page=1)
