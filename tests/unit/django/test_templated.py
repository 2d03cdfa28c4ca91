"""A ``Sitemap`` declaring ``location_template`` (issue 23, item 6): served as a QuerySet
planned in the database, no model instance for its index, the URLs Django's view lists."""

from __future__ import annotations

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
