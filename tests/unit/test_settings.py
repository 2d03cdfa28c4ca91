"""Configuration values: each refuses what cannot work, naming the field and the value."""

from __future__ import annotations

from typing import Any

import pytest

from sitemap_middleware import (
    ConfigurationError,
    HTTPSettings,
    Renders,
    Robots,
    RobotsGroup,
    Section,
    SitemapConfig,
    TrustedHosts,
)


def _config(**kwargs: Any) -> SitemapConfig:
    return SitemapConfig(base_url="https://example.com", sections={"p": ["/a"]}, **kwargs)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Section(["/a"], max_urls=0),
            "Section.max_urls must be an integer from 1 to 50000, got 0",
        ),
        (lambda: Section(["/a"], max_urls=1.5), "Section.max_urls must be an integer"),  # type: ignore[arg-type]
        (lambda: Section(["/a"], max_urls=True), "Section.max_urls must be an integer"),
        (lambda: Renders(etag="bytes"), "Renders.etag must be 'version' or 'content'"),  # type: ignore[arg-type]
        (lambda: Renders(content_ttl=-1), "Renders.content_ttl must be a number of seconds"),
        (lambda: Renders(content_ttl=float("nan")), "Renders.content_ttl must be a number"),
        (lambda: Renders(max_bytes=10**9), "Renders.max_bytes must be an integer"),
        (
            lambda: HTTPSettings(cache_control="public\r\nSet-Cookie: a=b"),
            "HTTPSettings.cache_control must be a header value",
        ),
        (
            lambda: HTTPSettings(x_robots_tag="noindex\n"),
            "HTTPSettings.x_robots_tag must be a header value",
        ),
        (
            lambda: HTTPSettings(gzip_level=12),
            "HTTPSettings.gzip_level must be an integer from 1 to 9, got 12",
        ),
        (lambda: HTTPSettings(gzip="yes"), "HTTPSettings.gzip must be True or False"),  # type: ignore[arg-type]
        (
            lambda: HTTPSettings(trust_provider_times=1),  # type: ignore[arg-type]
            "HTTPSettings.trust_provider_times must be True or False, got 1",
        ),
        (
            lambda: RobotsGroup(disallow=["/a\x0b/b"]),
            "RobotsGroup.disallow entries must be one-line",
        ),
        (lambda: RobotsGroup(disallow=["/a\x0c"]), "RobotsGroup.disallow entries must be one-line"),
        (lambda: RobotsGroup(allow=["/a\x85"]), "RobotsGroup.allow entries must be one-line"),
        (
            lambda: RobotsGroup(user_agents=["bot\u2028x"]),
            "RobotsGroup.user_agents entries must be one-line",
        ),
        (lambda: RobotsGroup(disallow=["/a#b"]), "RobotsGroup.disallow entries must be one-line"),
        (lambda: Robots(path="robots.txt"), "Robots.path must be an absolute ASCII path"),
        (lambda: Robots(mode="merge"), "Robots.mode must be 'generate' or 'append'"),  # type: ignore[arg-type]
        (lambda: Robots(app_timeout=0), "Robots.app_timeout must be a number > 0"),
        (lambda: TrustedHosts(hosts="example.com"), "not a string"),
        (
            lambda: TrustedHosts(hosts=["Example.com"]),
            "TrustedHosts.hosts entries must be lower-case",
        ),
        (
            lambda: TrustedHosts(hosts=["faß.de"]),
            "TrustedHosts.hosts entries must be lower-case ASCII",
        ),
        (
            lambda: TrustedHosts(hosts=["example.com"], proxies=0),
            "TrustedHosts.proxies must be an integer from 1",
        ),
        (
            lambda: TrustedHosts(hosts=["example.com"], forwarded="x-real-ip"),  # type: ignore[arg-type]
            "TrustedHosts.forwarded must be None",
        ),
        (lambda: _config(sitemap_name="sitemap-p-1.xml"), "has the form of a page name"),
        (lambda: _config(index_name="sitemap-p-2.xml"), "has the form of a page name"),
        (lambda: _config(index_name="sitemap.xml"), "sitemap_name and index_name must differ"),
        (
            lambda: _config(provider_timeout=0),
            "SitemapConfig.provider_timeout must be a number > 0",
        ),
        (
            lambda: _config(max_urls_per_page=0),
            "SitemapConfig.max_urls_per_page must be an integer",
        ),
        (lambda: _config(http=None), "SitemapConfig.http must be a HTTPSettings"),
        (lambda: _config(robots="append"), "SitemapConfig.robots must be a Robots"),
        (lambda: _config(strict="yes"), "SitemapConfig.strict must be True or False"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_configuration_refuses_what_cannot_work(make: Any, message: str) -> None:
    """Each bad value fails at construction with a ConfigurationError naming field and value."""
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace("?", r"\?")):
        make()


def test_section_max_urls_above_the_page_limit_is_refused() -> None:
    """A section may cap its pages below max_urls_per_page, never above."""
    with pytest.raises(ConfigurationError, match="section 'p': max_urls must be from 1 to 100"):
        SitemapConfig(
            base_url="https://example.com",
            sections={"p": Section(["/a"], max_urls=200)},
            max_urls_per_page=100,
        )


def test_grouped_defaults_keep_the_small_api_small() -> None:
    """Two sections from a list and a generator need nothing but base_url and sections."""

    def products() -> list[str]:
        return ["/p/1"]

    config = SitemapConfig(
        base_url="https://example.com", sections={"pages": ["/"], "products": products}
    )
    assert config.robots == Robots() and config.http == HTTPSettings()
    assert config.hosts is None and config.renders == Renders()


# -- review-core: defects found by the hostile review ---------------------------------


@pytest.mark.parametrize("stylesheet", [1, "/a\x00b.xsl", "/a\nb.xsl"])
def test_stylesheet_must_be_a_bool_or_a_url(stylesheet: Any) -> None:
    """stylesheet=1 crashed every request with a TypeError; a NUL made every XML document
    ill-formed. Either is refused at setup, like the other settings."""
    with pytest.raises(ConfigurationError, match="stylesheet"):
        _config(stylesheet=stylesheet)


@pytest.mark.parametrize("base_url", ["https://example.com/a/../b", "https://example.com/a/./b"])
def test_base_url_with_dot_segments_is_resolved_or_refused(base_url: str) -> None:
    """The location rule resolves dot segments in every loc but not in base_url, so
    https://example.com/a/../b was accepted and then refused every URL it lists (and its
    routes only matched un-normalised request paths)."""
    try:
        config = SitemapConfig(base_url=base_url, sections={"p": ["/x"]})
    except ConfigurationError:
        return
    assert "/." not in config.base.prefix
