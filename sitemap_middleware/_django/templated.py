"""A ``Sitemap`` that declares its URLs as a template of fields: served as a QuerySet.

Django's ``Sitemap.location()`` is Python: the only way to know a URL (and so whether a
page of them fits the byte budget) is to build the item and call it, which is what the
index of any other sitemap costs (one pass over ``items()``, a model instance and a
``location()`` per item). A sitemap whose ``items()`` is a QuerySet can say instead::

    class ProductSitemap(Sitemap):
        location_template = "/products/{slug}/"  # fields of the model (lookups join)
        lastmod_field = "updated_at"  # or GenericSitemap's date_field
        version_field = "revision"  # optional: see DjangoQuerySetProvider
        row_count = RowCount.objects.filter(name="products").values("total")  # optional

Then it is served by :class:`DjangoQuerySetProvider` over ``items()`` with that template:
pages are key ranges of the primary key, planned in the database (``ranges.py``), no
model instance and no ``reverse()`` per row. The template must give what ``location()``
gives: the middleware serves the template.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._exceptions import ConfigurationError

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap

    from .queryset import DjangoQuerySetProvider

__all__ = ["templated_provider"]


def templated_provider(
    sitemap: Sitemap | type[Sitemap], name: str
) -> DjangoQuerySetProvider | None:
    """The provider of a sitemap with a ``location_template``; None without one."""
    template = getattr(sitemap, "location_template", None)
    if template is None:
        return None
    label = f"section {name!r}: {_name(sitemap)}"
    if not isinstance(template, str):
        raise ConfigurationError(f"{label}.location_template must be a str, got {template!r}")
    from django.db.models import QuerySet

    from .queryset import DjangoQuerySetProvider

    instance = sitemap() if isinstance(sitemap, type) else sitemap
    if instance.i18n or instance.alternates or instance.x_default:
        raise ConfigurationError(
            f"{label}: location_template serves one URL per item; i18n and alternates "
            "need location() per language (drop location_template)"
        )
    changefreq, priority = (getattr(instance, field, None) for field in ("changefreq", "priority"))
    for field, value in (("changefreq", changefreq), ("priority", priority)):
        if callable(value):
            raise ConfigurationError(
                f"{label}: with location_template, {field} must be one value for every "
                f"item, not a method (it would need the model instance)"
            )
    lastmod = getattr(instance, "lastmod_field", None) or getattr(instance, "date_field", None)
    if lastmod is None and getattr(instance, "lastmod", None) is not None:
        raise ConfigurationError(
            f"{label}: with location_template, name the lastmod's field as lastmod_field "
            "(the lastmod() method would need the model instance)"
        )
    items = instance.items()
    if not isinstance(items, QuerySet):
        raise ConfigurationError(
            f"{label}: location_template needs items() to return a QuerySet, "
            f"got {type(items).__name__}"
        )
    version_field = getattr(instance, "version_field", None)
    if version_field is not None and not isinstance(version_field, str):
        raise ConfigurationError(f"{label}.version_field must be a str, got {version_field!r}")
    row_count = getattr(instance, "row_count", None)
    if callable(row_count):
        row_count = row_count()  # (a method, as Django's Sitemap attributes may be)
    return DjangoQuerySetProvider(
        items,
        location=template,
        lastmod=lastmod,
        changefreq=changefreq,
        priority=priority,
        version_field=version_field,
        row_count=row_count,
    )


def _name(sitemap: object) -> str:
    return sitemap.__name__ if isinstance(sitemap, type) else type(sitemap).__name__
