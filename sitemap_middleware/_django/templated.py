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

A sitemap that keeps its ``location()`` (and per-item ``changefreq()``/``priority()``)
can declare ``key_ranges = True`` instead (with ``lastmod_field`` when it has a lastmod):
served the same way, its pages' items built as Django builds them, its index planned
from the database's row counts per key range, a few hundred items built to size them
(``range_plan.py``), not one per item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._exceptions import ConfigurationError

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap

    from .queryset import DjangoQuerySetProvider

__all__ = ["keyed_provider", "templated_provider"]


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

    from .queryset import DjangoQuerySetProvider

    instance = sitemap() if isinstance(sitemap, type) else sitemap
    lastmod, items = _one_url_per_item(instance, label, "location_template")
    changefreq, priority = (getattr(instance, field, None) for field in ("changefreq", "priority"))
    for field, value in (("changefreq", changefreq), ("priority", priority)):
        if callable(value):
            raise ConfigurationError(
                f"{label}: with location_template, {field} must be one value for every "
                f"item, not a method (it would need the model instance)"
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


def keyed_provider(sitemap: Sitemap | type[Sitemap], name: str) -> DjangoQuerySetProvider | None:
    """The provider of a sitemap declaring ``key_ranges = True``; None without it."""
    opted = getattr(sitemap, "key_ranges", False)
    if opted is not True:
        if opted is not False and opted is not None:  # (1, "yes": not words that act)
            raise ConfigurationError(
                f"section {name!r}: {_name(sitemap)}.key_ranges must be True or False, "
                f"got {opted!r}"
            )
        return None
    from django.contrib.sitemaps import Sitemap
    from django.db.models.query import ModelIterable

    from .queryset import DjangoQuerySetProvider
    from .sitemaps import _Listing
    from .times import naive_zone

    label = f"section {name!r}: {_name(sitemap)}"
    instance = sitemap() if isinstance(sitemap, type) else sitemap
    lastmod, items = _one_url_per_item(instance, label, "key_ranges")
    kind = type(instance)
    if kind.get_urls is not Sitemap.get_urls or kind._urls is not Sitemap._urls:
        raise ConfigurationError(
            f"{label}: key_ranges builds each item's entry as Django does; an overridden "
            "get_urls() would be passed by (drop key_ranges)"
        )
    if items.query.is_sliced or items._iterable_class is not ModelIterable:
        raise ConfigurationError(
            f"{label}: key_ranges pages items() by primary key: it must be a QuerySet of "
            "model instances, not sliced ([:n]) and not values()"
        )
    listing = _Listing(instance, items, section=name, zone=naive_zone())
    code = _made_of(instance, items.model)

    def to_entry(item: object) -> object:
        _ = code  # (closed over: in this function's identity)
        return listing.entry(item, None)

    version_field = getattr(instance, "version_field", None)
    row_count = getattr(instance, "row_count", None)
    return DjangoQuerySetProvider(
        items,
        to_entry=to_entry,  # type: ignore[arg-type]  # (an entry mapping, or SKIP)
        lastmod=lastmod,
        version_field=version_field,
        row_count=row_count() if callable(row_count) else row_count,
    )


def _made_of(instance: Sitemap, model: type[Any]) -> str:
    """What a key_ranges sitemap's entries are made of, part of its provider's version: a
    deploy changing it changes the ETags (see identity.py). The methods' code, the values
    used as they are (a class attribute, or one GenericSitemap sets on the instance) and,
    under Django's default location(), the model's get_absolute_url()."""
    from django.contrib.sitemaps import Sitemap

    from .._providers.identity import function_identity

    parts = []
    for each in ("location", "lastmod", "changefreq", "priority"):
        value = getattr(instance, each, None)
        parts.append(function_identity(value) if callable(value) else repr(value))
    if type(instance).location is Sitemap.location:
        parts.append(function_identity(getattr(model, "get_absolute_url", None)))
    return "|".join(parts)


def _one_url_per_item(instance: Sitemap, label: str, option: str) -> tuple[str | None, Any]:
    """What ``location_template`` and ``key_ranges`` both need: one URL per item (no
    i18n), a lastmod() named by its field (the index dates pages by it, without building
    the items), and ``items()`` a QuerySet. Its lastmod field and ``items()``."""
    from django.db.models import QuerySet

    if instance.i18n or instance.alternates or instance.x_default:
        raise ConfigurationError(
            f"{label}: {option} serves one URL per item; i18n and alternates need "
            f"location() per language (drop {option})"
        )
    lastmod = getattr(instance, "lastmod_field", None) or getattr(instance, "date_field", None)
    if lastmod is None and getattr(instance, "lastmod", None) is not None:
        raise ConfigurationError(
            f"{label}: with {option}, name the field lastmod() reads as lastmod_field (the "
            "index dates each page by it, without building the items)"
        )
    items = instance.items()
    if not isinstance(items, QuerySet):
        raise ConfigurationError(
            f"{label}: {option} needs items() to return a QuerySet, got {type(items).__name__}"
        )
    return lastmod, items


def _name(sitemap: object) -> str:
    return sitemap.__name__ if isinstance(sitemap, type) else type(sitemap).__name__
