"""A ``Sitemap`` declaring ``location_template`` (issue 23, item 6): served as a QuerySet
planned in the database, no model instance for its index, the URLs Django's view lists."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness.django import alias_or_skip, core_for, get, locs, locs_of_index

pytestmark = pytest.mark.usefixtures("django_project")
ALIASES = ["default", pytest.param("pg", marks=pytest.mark.postgres)]


def _templated_sitemap(alias: str, **attributes: Any) -> Any:
    from django.contrib.sitemaps import Sitemap

    from tests.djangoproject.shop.models import Product

    class ProductSitemap(Sitemap):
        limit = 7
        changefreq = "daily"
        location_template = "/products/{slug}/"
        lastmod_field = "updated_at"

        def items(self) -> Any:
            return Product.objects.using(alias).order_by("pk")

        def lastmod(self, obj: Any) -> Any:
            return obj.updated_at

    for name, value in attributes.items():
        setattr(ProductSitemap, name, value)
    return ProductSitemap


def _django_locs(sitemap: Any) -> list[str]:
    """Every URL Django's own sitemap view lists for ``sitemap``, page after page."""
    from django.contrib.sitemaps import views
    from django.http import Http404
    from django.test import RequestFactory

    out: list[str] = []
    for number in range(1, 100):
        request = RequestFactory(HTTP_HOST="example.com").get(
            "/sitemap.xml", {"p": str(number)}, secure=True
        )
        try:
            response = views.sitemap(request, sitemaps={"products": sitemap}, section="products")
        except Http404:
            return out
        response.render()
        out.extend(locs(response.content))
    raise AssertionError("more pages than expected")


@pytest.mark.parametrize("alias", ALIASES)
def test_a_sitemap_declaring_a_location_template_is_indexed_without_model_instances(
    alias: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Sitemap with ``location_template`` (and ``lastmod_field``) is served as a
    QuerySet planned in the database: its index builds no model instance (the same
    Sitemap without the template builds one per item), and its pages list the URLs
    Django's own view lists for the same Sitemap, each once."""
    from tests.djangoproject.shop.models import Product

    alias = alias_or_skip(alias)
    built = 0
    from_db = Product.from_db.__func__

    def counting(cls: Any, *args: Any) -> Any:
        nonlocal built
        built += 1
        return from_db(cls, *args)

    monkeypatch.setattr(Product, "from_db", classmethod(counting))
    templated = _templated_sitemap(alias)
    core = core_for({"products": templated})
    status, _, index = get(core, "/sitemap_index.xml")
    assert status == 200 and built == 0
    ours: list[str] = []
    for child in locs_of_index(index):
        status, _, body = get(core, child.removeprefix("https://example.com"))
        ours.extend(locs(body))
    assert built == 0
    plain = _templated_sitemap(alias, location_template=None)
    assert get(core_for({"products": plain}), "/sitemap_index.xml")[0] == 200 and built >= 17
    theirs = _django_locs(templated)
    assert len(ours) == len(set(ours)) == 17 and sorted(ours) == sorted(theirs)


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"i18n": True}, "i18n"),
        ({"priority": lambda self, obj: 0.5}, "priority must be one value"),
        ({"lastmod_field": None}, "lastmod_field"),
        ({"items": lambda self: ["a"]}, "QuerySet"),
        ({"location_template": 3}, "must be a str"),
    ],
)
def test_what_a_location_template_cannot_serve_is_refused(
    attributes: dict[str, Any], message: str
) -> None:
    from sitemap_middleware import ConfigurationError

    with pytest.raises(ConfigurationError, match=message):
        core_for({"products": _templated_sitemap("default", **attributes)})


def _keyed_sitemap(alias: str, calls: list[object], **attributes: Any) -> Any:
    """A Sitemap keeping its location() (counted in ``calls``), with ``key_ranges``."""
    from django.contrib.sitemaps import Sitemap

    from tests.djangoproject.shop.models import Product

    class KeyedSitemap(Sitemap):
        limit = 7
        key_ranges = True
        lastmod_field = "updated_at"

        def items(self) -> Any:
            return Product.objects.using(alias).order_by("pk")

        def location(self, obj: Any) -> str:
            calls.append(obj)
            return f"/products/{obj.slug}/"

        def lastmod(self, obj: Any) -> Any:
            return obj.updated_at

        def changefreq(self, obj: Any) -> str:
            return "daily" if obj.pk % 2 else "weekly"

    for name, value in attributes.items():
        setattr(KeyedSitemap, name, value)
    return KeyedSitemap


@pytest.mark.parametrize("alias", ALIASES)
def test_a_sitemap_declaring_key_ranges_builds_a_few_items_for_its_index(alias: str) -> None:
    """``key_ranges = True``: the index is planned from row counts per key range, eight
    sampled ranges built (the same Sitemap without it calls location() for every item);
    its pages list what Django's own view lists, each URL once, with the Sitemap's
    per-item changefreq and lastmod."""
    alias = alias_or_skip(alias)
    calls: list[object] = []
    keyed = _keyed_sitemap(alias, calls)
    core = core_for({"products": keyed})
    status, _, index = get(core, "/sitemap_index.xml")
    assert status == 200 and 0 < len(calls) <= 8, len(calls)
    ours: list[str] = []
    pages: list[bytes] = []
    for child in locs_of_index(index):
        status, _, body = get(core, child.removeprefix("https://example.com"))
        assert status == 200
        ours.extend(locs(body))
        pages.append(body)
    assert len(ours) == len(set(ours)) == 17 and sorted(ours) == sorted(_django_locs(keyed))
    assert any(b"<changefreq>weekly</changefreq>" in body for body in pages)
    assert all(b"<lastmod>" in body for body in pages)
    calls.clear()
    plain = _keyed_sitemap(alias, calls, key_ranges=False)
    assert get(core_for({"products": plain}), "/sitemap_index.xml")[0] == 200
    assert len(calls) >= 17


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"i18n": True}, "i18n"),
        ({"lastmod_field": None}, "lastmod_field"),
        ({"items": lambda self: ["a"]}, "QuerySet"),
        ({"get_urls": lambda self, *args, **kwargs: []}, "get_urls"),
        ({"items": lambda self: _products()[:5]}, "not sliced"),
        ({"key_ranges": 1}, "must be True or False"),
        ({"key_ranges": "yes"}, "must be True or False"),
        ({"items": lambda self: _products().values("pk", "slug")}, "not values"),
    ],
)
def test_what_key_ranges_cannot_serve_is_refused(attributes: dict[str, Any], message: str) -> None:
    from sitemap_middleware import ConfigurationError

    with pytest.raises(ConfigurationError, match=message):
        core_for({"products": _keyed_sitemap("default", [], **attributes)})


def _products() -> Any:
    from tests.djangoproject.shop.models import Product

    return Product.objects.order_by("pk")


def _first_page_etag(sitemap: Any) -> str:
    core = core_for({"products": sitemap})
    child = locs_of_index(get(core, "/sitemap_index.xml")[2])[0]
    status, headers, _ = get(core, child.removeprefix("https://example.com"))
    assert status == 200 and headers["etag"]
    return headers["etag"]


@pytest.mark.parametrize(
    ("field", "before", "after"),
    [("changefreq", "daily", "weekly"), ("priority", 0.5, 0.8), ("lastmod", None, "2024")],
)
def test_a_deploy_changing_a_key_ranges_sitemaps_values_changes_its_etags(
    field: str, before: Any, after: Any
) -> None:
    """Not only its methods: a ``changefreq``/``priority``/``lastmod`` that is one value
    (a class attribute, or GenericSitemap's, set on the instance) is part of the version,
    so a deploy changing it never answers 304 to a client holding the old page."""
    from datetime import datetime, timezone

    from django.contrib.sitemaps import GenericSitemap

    if field == "lastmod":
        before, after = (
            datetime(int(y or 2023), 5, 1, tzinfo=timezone.utc) for y in (before, after)
        )
    tags = []
    for value in (before, after):
        tags.append(_first_page_etag(_keyed_sitemap("default", [], **{field: value})))
        generic = GenericSitemap({"queryset": _products(), "date_field": "updated_at"})
        generic.key_ranges, generic.limit = True, 7
        setattr(generic, field, value)
        tags.append(_first_page_etag(generic))
    assert tags[0] != tags[2] and tags[1] != tags[3], tags


def test_a_deploy_changing_get_absolute_url_changes_a_key_ranges_sitemaps_etags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Django's default location() is the model's get_absolute_url(): a deploy changing
    that changes the URLs, so the version covers it as it covers location()."""
    from django.contrib.sitemaps import Sitemap

    from tests.djangoproject.shop.models import Product

    keyed = _keyed_sitemap("default", [], location=Sitemap.location)
    before = _first_page_etag(keyed)
    monkeypatch.setattr(Product, "get_absolute_url", lambda self: f"/new/{self.slug}/")
    assert _first_page_etag(keyed) != before


def test_a_key_ranges_entry_dated_after_its_lastmod_field_redates_the_next_index() -> None:
    """lastmod() newer than ``lastmod_field`` for an item of an unsampled range (item 2):
    the page listing it is found misdated when served, and the next index, planned row
    by row, dates no page before the entries it lists."""
    from datetime import datetime, timedelta

    def later(self: Any, obj: Any) -> Any:
        return obj.updated_at + timedelta(days=400) if obj.pk == 2 else obj.updated_at

    core = core_for({"products": _keyed_sitemap("default", [], lastmod=later)})
    for child in locs_of_index(get(core, "/sitemap_index.xml")[2]):
        assert get(core, child.removeprefix("https://example.com"))[0] == 200
    index = get(core, "/sitemap_index.xml")[2].decode()
    dates = re.findall(r"<lastmod>([^<]*)</lastmod>", index)
    assert max(datetime.fromisoformat(each) for each in dates).year >= 2025, index
