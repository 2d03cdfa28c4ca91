"""Languages on other hosts (issue 27, item 7): ``Languages(sites=...)`` under ``Tenants``.

Each host lists its own language's URLs; every URL carries the whole reciprocal set across
hosts. The location rule applies to ``<loc>`` only, so alternates on other hosts stay, and
the other hosts' URLs are never built as entries to be refused (no warning per URL).
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from sitemap_middleware import ConfigurationError, Languages, Section, SitemapConfig, Tenants
from sitemap_middleware._engine.core import RequestInfo
from sitemap_middleware._engine.tenants import TenantCores
from tests.harness.core import collect
from tests.harness.documents import check_document, child_urls
from tests.harness.providers import CountingProvider

pytestmark = pytest.mark.anyio

XHTML = "{http://www.w3.org/1999/xhtml}link"
SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
SITES = {"en": "https://example.com/", "de": "https://de.example.com/", "fr": "https://example.fr/"}
HOSTS = {"en": "example.com", "de": "de.example.com", "fr": "example.fr"}


def _tenants(items: Any, **config: Any) -> Tenants:
    languages = Languages(sites=SITES, x_default="en")
    return Tenants(
        sites={
            HOSTS[code]: SitemapConfig(
                base_url=url,
                sections={"products": Section(items, languages=languages)},
                **config,
            )
            for code, url in SITES.items()
        }
    )


async def _get(cores: TenantCores, host: str, path: str) -> tuple[int, bytes]:
    request = RequestInfo("GET", path, {"host": host})
    target = cores.route(request)
    assert target is not None
    reply = await cores.respond(target, request)
    return reply.status, await collect(reply)


def _urls(body: bytes) -> dict[str, list[tuple[str, str]]]:
    """loc -> [(hreflang, href)], the document XSD-checked and parsed as a crawler does."""
    check_document(body)
    return {
        url.findtext(f"{SM}loc") or "": [
            (link.get("hreflang") or "", link.get("href") or "") for link in url.iter(XHTML)
        ]
        for url in ET.fromstring(body).iter(f"{SM}url")
    }


async def _site(
    cores: TenantCores, host: str, prefix: str = ""
) -> tuple[dict[str, Any], list[int]]:
    """Every URL a host lists (through its index when it has one), and each page's size."""
    status, body = await _get(cores, host, f"{prefix}/sitemap.xml")
    assert status == 200, body
    if b"<sitemapindex" not in body:
        return _urls(body), [len(body)]
    found: dict[str, Any] = {}
    sizes = []
    for child in child_urls(check_document(body)):
        assert child.startswith(f"https://{host}/"), child
        status, page = await _get(cores, host, child.removeprefix(f"https://{host}"))
        assert status == 200, page
        sizes.append(len(page))
        for loc, links in _urls(page).items():
            assert loc not in found, f"{loc} listed twice"
            found[loc] = links
    return found, sizes


def _expected(path: str) -> list[tuple[str, str]]:
    links = [(code, f"{site}{path.lstrip('/')}") for code, site in SITES.items()]
    return [*links, ("x-default", f"https://example.com/{path.lstrip('/')}")]


async def test_each_host_lists_its_own_language_with_alternates_across_hosts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One shared provider, three hosts: each lists only its language's <loc>s, each with
    en, de, fr and x-default on their own hosts; nothing is logged as a warning."""
    cores = TenantCores(_tenants(["/products/1", "/products/2"]))
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        for code, host in HOSTS.items():
            urls, _ = await _site(cores, host)
            assert list(urls) == [f"{SITES[code]}products/1", f"{SITES[code]}products/2"]
            for loc, links in urls.items():
                assert links == _expected(loc.split("/", 3)[3])
    assert caplog.records == []
    await cores.aclose()


async def test_cross_host_pages_are_planned_by_count_of_own_urls() -> None:
    """A counted, paged provider: the count is the items times this host's languages (one),
    so no page is planned for URLs another host lists."""
    provider = CountingProvider(10, host="")
    cores = TenantCores(_tenants(provider, max_urls_per_page=4))
    for code, host in HOSTS.items():
        urls, sizes = await _site(cores, host)
        assert len(sizes) == 3  # 10 URLs of 4 a page, not 30
        assert sorted(urls) == sorted(f"{SITES[code]}products/{i}?ref=a&b={i}" for i in range(10))
    await cores.aclose()


async def test_cross_host_alternates_count_in_the_byte_budget() -> None:
    """Pages cut by bytes hold whole <url> elements with their alternate sets, each page
    within the budget and every URL once."""
    items = [f"/products/{i:04d}" for i in range(60)]
    budget = 8_000
    cores = TenantCores(_tenants(items, max_bytes_per_page=budget))
    for code, host in HOSTS.items():
        urls, sizes = await _site(cores, host)
        assert len(sizes) > 1 and max(sizes) <= budget
        assert list(urls) == [f"{SITES[code]}{item[1:]}" for item in items]
        assert all(len(links) == 4 for links in urls.values())
    await cores.aclose()


async def test_languages_on_a_path_of_the_same_host_are_listed_by_that_host() -> None:
    """example.com/de/ is under example.com's directory: that host lists en and de (the
    location rule decides), example.fr lists fr; all three in every alternate set."""
    sites = {
        "en": "https://example.com/",
        "de": "https://example.com/de/",
        "fr": "https://example.fr/",
    }
    languages = Languages(sites=sites)
    tenants = Tenants(
        sites={
            host: SitemapConfig(
                base_url=f"https://{host}/",
                sections={"p": Section(["/a"], languages=languages)},
            )
            for host in ("example.com", "example.fr")
        }
    )
    cores = TenantCores(tenants)
    com, _ = await _site(cores, "example.com")
    fr, _ = await _site(cores, "example.fr")
    links = [("en", "https://example.com/a"), ("de", "https://example.com/de/a")]
    links.append(("fr", "https://example.fr/a"))
    assert com == {"https://example.com/a": links, "https://example.com/de/a": links}
    assert fr == {"https://example.fr/a": links}
    await cores.aclose()


async def test_sites_with_a_url_pattern_and_absolute_items() -> None:
    """``url`` still maps the path (relative to each language's site); an absolute item
    under one of the sites is read as its path there."""
    languages = Languages(
        sites={"en": "https://example.com/", "de": "https://example.de/shop/"},
        url="/{lang}{path}",
    )
    config = SitemapConfig(
        base_url="https://example.de/shop",
        sections={"p": Section(["https://example.com/a", "/b"], languages=languages)},
    )
    cores = TenantCores(Tenants(sites={"example.de": config}))
    urls, _ = await _site(cores, "example.de", "/shop")
    assert list(urls) == ["https://example.de/shop/de/a", "https://example.de/shop/de/b"]
    assert urls["https://example.de/shop/de/b"] == [
        ("en", "https://example.com/en/b"),
        ("de", "https://example.de/shop/de/b"),
    ]
    await cores.aclose()


async def test_an_absolute_item_on_no_site_is_left_out_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = SitemapConfig(
        base_url="https://example.com",
        sections={
            "p": Section(["https://elsewhere.example/a", "/b"], languages=Languages(sites=SITES))
        },
    )
    cores = TenantCores(Tenants(sites={"example.com": config}))
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        urls, _ = await _site(cores, "example.com")
    assert list(urls) == ["https://example.com/b"]
    assert len(caplog.records) == 1
    assert "elsewhere.example" in caplog.records[0].getMessage()
    await cores.aclose()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sites": {"en": "https://example.com/", "de": "ftp://de.example.com/"}}, "sites"),
        ({"sites": {"en": "https://example.com/", "d e": "https://de.example.com/"}}, "BCP 47"),
        ({"sites": {}}, "distinct codes"),
        ({"sites": "https://example.com/"}, "mapping"),
        ({"codes": ("en", "fr"), "sites": {"en": "https://a.example/"}}, "sites"),
        (
            {"sites": {"en": "https://a.example/", "de": "https://b.example/"}, "x_default": "fr"},
            "x_default",
        ),
        ({"sites": {"en": "https://a.example/"}, "url": "/{path}/x"}, None),
        ({"url": "{path}", "codes": ("en",)}, "{lang}"),
    ],
)
def test_languages_sites_refuse_bad_settings(kwargs: dict[str, Any], message: str | None) -> None:
    if message is None:  # with sites, {lang} is optional: the host names the language
        Languages(**kwargs)
        return
    with pytest.raises(ConfigurationError, match=message):
        Languages(**kwargs)


def test_a_site_that_lists_no_language_of_the_section_is_refused() -> None:
    """A typo in base_url or sites would list nothing: refused when the config is built."""
    with pytest.raises(ConfigurationError, match="no language"):
        SitemapConfig(
            base_url="https://example.org",
            sections={"p": Section(["/a"], languages=Languages(sites=SITES))},
        )


def test_the_sites_shape_the_fingerprint() -> None:
    """Moving a language to another host changes every ETag of the site."""

    def config(de: str) -> SitemapConfig:
        languages = Languages(sites={"en": "https://example.com/", "de": de})
        return SitemapConfig(
            base_url="https://example.com",
            sections={"p": Section(["/a"], languages=languages)},
        )

    assert (
        config("https://de.example.com/").fingerprint != config("https://example.de/").fingerprint
    )
