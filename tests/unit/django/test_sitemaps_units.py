"""Pagination mirrors Django's, the host model maps to ours, bad input fails clearly."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware import ConfigurationError

pytestmark = pytest.mark.usefixtures("django_project")

LANGUAGE_CODES = ["en", "de", "pt-br", "fr"]


def _sitemap(items: list[int], languages: list[str] | None, per_item: bool) -> Any:
    from django.contrib.sitemaps import Sitemap

    class Numbers(Sitemap):
        i18n = True

        def items(self) -> list[int]:
            return items

    Numbers.languages = languages
    if per_item:
        Numbers.get_languages_for_item = lambda self, item: LANGUAGE_CODES[: item % 4]
    return Numbers()


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(st.integers(0, 99), max_size=30),
    languages=st.none() | st.lists(st.sampled_from(LANGUAGE_CODES), unique=True, max_size=4),
    per_item=st.booleans(),
    i18n=st.booleans(),
    offset=st.integers(0, 130),
    limit=st.integers(1, 40),
)
def test_pages_are_slices_of_djangos_own_item_list(
    items: list[int],
    languages: list[str] | None,
    per_item: bool,
    i18n: bool,
    offset: int,
    limit: int,
) -> None:
    """For any items, languages (fixed or per item) and window, a page is exactly that
    slice of Django's paginated list (Sitemap._items()) and count() is its length."""
    from sitemap_middleware._django.sitemaps import _Listing

    sitemap = _sitemap(items, languages, per_item)
    sitemap.i18n = i18n
    listing = _Listing(sitemap, sitemap.items())
    expected = list(sitemap._items())
    if not i18n:
        expected = [(item, None) for item in expected]
    assert list(listing.pairs(offset, limit)) == expected[offset : offset + limit]
    assert list(listing.pairs(offset, None)) == expected[offset:]
    assert listing.count() == len(expected)


def test_trusted_hosts_from_the_sites_framework() -> None:
    """Every Site's domain, in id order."""
    from sitemap_middleware.django import django_trusted_hosts

    assert django_trusted_hosts() == ("example.com", "www.example.com")
    assert django_trusted_hosts("sites") == ("example.com", "www.example.com")


def test_trusted_hosts_from_allowed_hosts() -> None:
    """Exact ALLOWED_HOSTS names are kept (lower-cased, once); patterns are refused by name."""
    from django.test import override_settings

    from sitemap_middleware.django import django_trusted_hosts

    with override_settings(ALLOWED_HOSTS=["Example.com", "shop.example.com:8000", "example.com"]):
        assert django_trusted_hosts("allowed_hosts") == ("example.com", "shop.example.com:8000")
    for pattern in ("*", ".example.com"):
        with (
            override_settings(ALLOWED_HOSTS=["example.com", pattern]),
            pytest.raises(
                ConfigurationError, match=re.escape(f"ALLOWED_HOSTS entry '{pattern}' is a pattern")
            ),
        ):
            django_trusted_hosts("allowed_hosts")
    with (
        override_settings(ALLOWED_HOSTS=["[::g]"]),
        pytest.raises(ConfigurationError, match=r"host '\[::g\]' cannot be matched exactly"),
    ):
        django_trusted_hosts("allowed_hosts")
    with pytest.raises(
        ConfigurationError, match="source must be 'auto', 'sites' or 'allowed_hosts'"
    ):
        django_trusted_hosts("everything")  # type: ignore[arg-type]


def test_without_the_sites_framework() -> None:
    """auto falls back to ALLOWED_HOSTS; asking for Sites or a Site's URL says what is missing."""
    from django.test import override_settings

    from sitemap_middleware.django import django_trusted_hosts, site_base_url

    apps = ["django.contrib.sitemaps", "tests.djangoproject.shop"]
    with override_settings(INSTALLED_APPS=apps, ALLOWED_HOSTS=["example.com"]):
        assert django_trusted_hosts() == ("example.com",)
        with pytest.raises(ConfigurationError, match="needs 'django.contrib.sites'"):
            django_trusted_hosts("sites")
        with pytest.raises(ConfigurationError, match="pass base_url instead"):
            site_base_url()
    assert site_base_url() == "https://example.com"
    assert site_base_url("http", site_id=2) == "http://www.example.com"
    with pytest.raises(ConfigurationError, match="scheme must be 'http' or 'https', got 'ftp'"):
        site_base_url("ftp")


def test_bad_sitemaps_and_querysets_are_refused_by_name() -> None:
    """Wrong types, limits, fields and protocols raise at setup with what is wrong."""
    from django.contrib.sitemaps import Sitemap

    from sitemap_middleware.django import (
        DjangoQuerySetProvider,
        DjangoSitemapProvider,
        sitemap_config,
    )
    from tests.djangoproject.shop.models import Product
    from tests.djangoproject.shop.sitemaps import PageSitemap, ProductSitemap

    with pytest.raises(
        TypeError,
        match=r"needs a django.contrib.sitemaps.Sitemap subclass or instance, got \[\] \(list\)",
    ):
        DjangoSitemapProvider([])
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1, got 0"):
        DjangoSitemapProvider(ProductSitemap, batch_size=0)
    zero = type("Zero", (Sitemap,), {"limit": 0})
    with pytest.raises(ValueError, match="Zero.limit must be an integer >= 1, got 0"):
        DjangoSitemapProvider(zero)
    huge = type("Huge", (Sitemap,), {"limit": 60_000})
    with pytest.raises(
        ConfigurationError,
        match="section 'huge': Huge.limit is 60000, but a sitemap page holds at most 50,000 URLs",
    ):
        sitemap_config({"huge": huge}, base_url="https://example.com")
    with pytest.raises(
        ConfigurationError,
        match="PageSitemap.protocol is 'https' but base_url 'http://example.com' is http",
    ):
        sitemap_config({"pages": PageSitemap}, base_url="http://example.com")
    with pytest.raises(
        ConfigurationError, match="section 'products' is both a Django sitemap and in sections"
    ):
        sitemap_config(
            {"products": ProductSitemap},
            base_url="https://example.com",
            sections={"products": ["/"]},
        )
    mixed = {
        "a": type("A", (Sitemap,), {"protocol": "http"}),
        "b": type("B", (Sitemap,), {"protocol": "https"}),
    }
    with pytest.raises(ConfigurationError, match=r"force different protocols \['http', 'https'\]"):
        sitemap_config(mixed)
    with pytest.raises(TypeError, match="queryset must be a Django QuerySet, got list"):
        DjangoQuerySetProvider([])
    with pytest.raises(ValueError, match="key field 'updated_at' of Product is not unique"):
        DjangoQuerySetProvider(Product.objects.all(), key="updated_at")
    with pytest.raises(ValueError, match="key field 'sku' is not a field of Product"):
        DjangoQuerySetProvider(Product.objects.all(), key="sku")
    with pytest.raises(ValueError, match="lastmod field 'slug' of Product must be a DateField"):
        DjangoQuerySetProvider(Product.objects.all(), lastmod="slug")
    with pytest.raises(ValueError, match="pass either to_entry or location/changefreq/priority"):
        DjangoQuerySetProvider(Product.objects.all(), to_entry=str, priority=0.5)
    assert (
        repr(DjangoQuerySetProvider(Product.objects.all(), key="slug"))
        == "DjangoQuerySetProvider(Product, key='slug')"
    )
    assert repr(DjangoSitemapProvider(ProductSitemap())) == "DjangoSitemapProvider(ProductSitemap)"


def test_the_django_providers_live_in_sitemap_middleware_django_alone() -> None:
    """One public home per name: the Django providers are not at the top level."""
    import sitemap_middleware
    from sitemap_middleware import django as public

    for name in ("DjangoQuerySetProvider", "DjangoRoutesProvider", "DjangoSitemapProvider"):
        assert getattr(public, name).__module__ == "sitemap_middleware.django"
        assert not hasattr(sitemap_middleware, name)
