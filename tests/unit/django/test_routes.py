"""DjangoRoutesProvider: the URLconf's parameterless patterns, as the routes providers do."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from sitemap_middleware import ConfigurationError, SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from tests.harness.core import fetch
from tests.harness.documents import check_document, page_urls

pytestmark = pytest.mark.usefixtures("django_project")
URLS = "tests.djangoproject.routes_urls"
LOCALIZED = ["/de/about/", "/de/shop/", "/en/about/", "/en/shop/", "/pt-br/about/", "/pt-br/shop/"]


def _provider(**kwargs: Any) -> Any:
    from sitemap_middleware.django import DjangoRoutesProvider

    return DjangoRoutesProvider(URLS, **kwargs)


def test_plain_patterns_are_listed_and_parameterised_ones_skipped() -> None:
    """path() and re_path() without arguments, sorted; converters and groups left out, and
    so are the admin, redirects, views without get() and Django's sitemap view."""
    assert _provider().paths() == sorted(
        [
            "/",
            "/pricing/",
            "/faq/",
            "/legal.html",
            "/help",
            "/blog/",
            "/blog/archive/",
            "/blog/tags/",
            "/caf%C3%A9%20menu/",
            *LOCALIZED,
        ]
    )


def test_paths_are_what_reverse_gives() -> None:
    """Every named pattern's path is reverse(name) in each language (namespaces included)."""
    from django.urls import reverse
    from django.utils import translation

    provider = _provider()
    listed = set(provider.paths())
    for name in ["home", "pricing", "faq", "help", "blog:index", "blog:archive", "menu"]:
        assert reverse(name, urlconf=URLS) in listed, name
    for name in ["blog:tags:tags", "about", "shop:front"]:
        for code in ("en", "de", "pt-br"):
            with translation.override(code):
                assert reverse(name, urlconf=URLS) in listed, (name, code)


def test_default_urlconf_is_root_urlconf() -> None:
    """Without urlconf the project's ROOT_URLCONF is read; Django's sitemap views stay out."""
    from sitemap_middleware.django import DjangoRoutesProvider

    assert DjangoRoutesProvider().paths() == [
        "/",
        "/de/about/",
        "/de/contact/",
        "/en/about/",
        "/en/contact/",
        "/pt-br/about/",
        "/pt-br/contact/",
    ]


def test_include_and_namespaces_are_walked() -> None:
    """Nested include()s, namespaced or not; an include under a parameter is skipped whole."""
    paths = _provider(include=("/blog/*", "/team/*")).paths()
    assert paths == ["/blog/", "/blog/archive/", "/blog/tags/"]


def test_i18n_patterns_one_url_per_language_with_alternates() -> None:
    """Each i18n pattern is listed in every language of LANGUAGES, each with the whole set."""
    entries = {e["loc"]: e for e in _provider(include=("/*/about/",)).listing()}
    assert sorted(entries) == ["/de/about/", "/en/about/", "/pt-br/about/"]
    expected = [
        {"hreflang": "en", "href": "/en/about/"},
        {"hreflang": "de", "href": "/de/about/"},
        {"hreflang": "pt-br", "href": "/pt-br/about/"},
    ]
    assert all(entry["alternates"] == expected for entry in entries.values())
    with_default = _provider(include=("/en/about/",), x_default=True).listing()
    assert with_default[0]["alternates"] == [
        {"hreflang": "en", "href": "/en/about/"},
        {"hreflang": "x-default", "href": "/about/"},
    ]
    assert _provider(include=("/*/about/",), alternates=False).paths() == sorted(entries)
    assert _provider(include=("/*/about/",), alternates=False).listing() == sorted(entries)


def test_languages_setting_and_argument() -> None:
    """LANGUAGES is read per listing; languages= narrows it."""
    from django.test import override_settings

    assert _provider(include=("/*/about/",), languages=["de"]).paths() == ["/de/about/"]
    provider = _provider(include=("/*/about/",))
    with override_settings(LANGUAGES=[("en", "English"), ("fr", "French")]):
        assert provider.paths() == ["/en/about/", "/fr/about/"]
    assert provider.paths() == ["/de/about/", "/en/about/", "/pt-br/about/"]
    with pytest.raises(ConfigurationError, match="hreflang"):
        _provider(languages=["not a code"])


def test_prefix_default_language_false() -> None:
    """The default language's version has no prefix, the others keep theirs."""
    from sitemap_middleware.django import DjangoRoutesProvider

    provider = DjangoRoutesProvider("tests.djangoproject.routes_urls_unprefixed", x_default=True)
    entries = provider.listing()
    assert [e if isinstance(e, str) else e["loc"] for e in entries] == [
        "/",
        "/about/",
        "/de/about/",
        "/pt-br/about/",
    ]
    assert entries[1]["alternates"][0] == {"hreflang": "en", "href": "/about/"}
    assert entries[1]["alternates"][-1] == {"hreflang": "x-default", "href": "/about/"}


def test_exclude_and_include() -> None:
    """Glob patterns on paths, as the Starlette/Flask providers take them; an excluded
    language version leaves the alternates of the others too."""
    paths = _provider(exclude=("/blog/*", "/de/*", "/pt-br/*")).paths()
    assert "/blog/" not in paths and "/de/about/" not in paths
    assert "/en/about/" in paths and "/faq/" in paths
    entries = {e["loc"]: e for e in _provider(exclude=("/de/*",)).listing() if isinstance(e, dict)}
    entry = entries["/en/about/"]
    assert [link["hreflang"] for link in entry["alternates"]] == ["en", "pt-br"]


def test_metadata_by_url_name() -> None:
    """Named patterns get lastmod/changefreq/priority, every language of them; bad values
    and unknown fields fail at construction; unknown names are logged."""
    provider = _provider(
        metadata={
            "faq": {"changefreq": "monthly", "priority": 0.4},
            "blog:archive": {"lastmod": "2024-05-01"},
            "about": {"priority": 0.9},
        }
    )
    by_loc = {e["loc"]: e for e in provider.listing() if isinstance(e, dict)}
    assert by_loc["/faq/"] == {"loc": "/faq/", "changefreq": "monthly", "priority": 0.4}
    assert by_loc["/blog/archive/"] == {"loc": "/blog/archive/", "lastmod": "2024-05-01"}
    assert all(by_loc[f"/{code}/about/"]["priority"] == 0.9 for code in ("en", "de", "pt-br"))
    with pytest.raises(ConfigurationError, match="priority"):
        _provider(metadata={"faq": {"priority": 7}})
    with pytest.raises(ConfigurationError, match="metadata"):
        _provider(metadata={"faq": {"title": "FAQ"}})


def test_unknown_metadata_names_are_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    provider = _provider(metadata={"item": {"priority": 0.1}, "nope": {"priority": 0.1}})
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        provider.listing()
        provider.listing()
    warnings = [r.getMessage() for r in caplog.records if "DjangoRoutesProvider" in r.getMessage()]
    assert warnings == [
        "DjangoRoutesProvider: metadata names no parameterless URL pattern: item, nope"
    ]


def test_version_follows_the_urlconf() -> None:
    """The version token changes with what is listed, and is stable otherwise."""
    from django.test import override_settings

    provider = _provider()

    async def versions() -> tuple[str | None, str | None, str | None, int]:
        first = (await provider.version()).token
        again = (await provider.version()).token
        with override_settings(LANGUAGES=[("en", "English")]):
            other = (await provider.version()).token
        return first, again, other, await provider.count()

    first, again, other, count = anyio.run(versions)
    assert first == again and first != other
    assert count == len(provider.paths())


def test_the_middleware_serves_them() -> None:
    """A section of routes renders a valid sitemap with hreflang alternates."""
    config = SitemapConfig(
        base_url="https://example.com",
        sections={
            "pages": _provider(metadata={"faq": {"priority": 0.4}}, x_default=True),
        },
    )

    async def get() -> bytes:
        reply, body = await fetch(SitemapCore(config), "/sitemap.xml")
        assert reply.status == 200, body
        return body

    body = anyio.run(get)
    parsed = check_document(body)
    assert page_urls(parsed) == [f"https://example.com{p}" for p in _provider().paths()]
    text = body.decode()
    assert (
        '<xhtml:link rel="alternate" hreflang="x-default" href="https://example.com/about/"/>'
        in text
    )
    assert "<priority>0.4</priority>" in text


def test_a_literal_percent_in_a_route_is_listed_not_fatal() -> None:
    """Hostile review: ``path("100%/")`` raised ValueError from ``candidate % {}`` and
    the whole section failed; it is served at /100%25/ and listed there."""
    from types import ModuleType

    from django.urls import path, re_path

    from sitemap_middleware.django import DjangoRoutesProvider
    from tests.djangoproject.routes_urls import page

    urls = ModuleType("hostile_percent_urls")
    urls.urlpatterns = [  # type: ignore[attr-defined]
        path("", page),
        path("100%/", page),
        re_path(r"^a%%b/$", page),  # two literal percent signs
    ]
    assert DjangoRoutesProvider(urls).paths() == ["/", "/100%25/", "/a%25%25b/"]


def test_metadata_keyed_by_something_other_than_a_name_is_refused_at_construction() -> None:
    """Hostile review: an int key passed construction, then every listing raised TypeError."""
    with pytest.raises(ConfigurationError, match="metadata keys must be URL names"):
        _provider(metadata={1: {"priority": 0.5}})
