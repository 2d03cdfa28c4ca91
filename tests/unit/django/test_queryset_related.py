"""The default row checksum of a QuerySet section covers what its location template
reads through a join (``{category__slug}``), not only the model's own columns: renaming
the related row renames every URL pointing at it, so the ETags move with it. (Before,
the checksum covered the model's concrete fields alone: the section kept serving the
old URLs, with a 304, until one of its own rows changed.)"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import anyio
import pytest

from sitemap_middleware import Section
from sitemap_middleware._engine.core import SitemapCore
from tests.harness.django import ALIASES, alias_or_skip, get, unmanaged_model, write_tags

pytestmark = pytest.mark.usefixtures("django_project")


@cache
def _listing_model() -> Any:
    """An unmanaged model whose rows point at a Tag (created by the test)."""
    from django.db import models

    from tests.djangoproject.shop.models import Tag

    tag = models.ForeignKey(Tag, on_delete=models.DO_NOTHING, db_constraint=False)
    return unmanaged_model("Listing", "sitemap_listing", tag=tag)


@contextmanager
def _listings(alias: str, tags: int) -> Iterator[None]:
    """Tags ``t1``..``t<tags>`` and one listing pointing at each (same ids), removed
    afterwards."""
    from django.db import connections

    write_tags(alias, [(f"t{number}", None) for number in range(1, tags + 1)])
    with connections[alias].cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS sitemap_listing")
        cursor.execute("CREATE TABLE sitemap_listing (id integer PRIMARY KEY, tag_id bigint)")
        cursor.execute("INSERT INTO sitemap_listing SELECT id, id FROM shop_tag")
    try:
        yield
    finally:
        with connections[alias].cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS sitemap_listing")
        write_tags(alias, [])


@pytest.mark.parametrize("alias", ALIASES)
def test_renaming_a_related_row_moves_the_etags_and_the_urls(alias: str) -> None:

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    name = alias_or_skip(alias)
    with _listings(name, tags=5):
        provider = DjangoQuerySetProvider(
            _listing_model().objects.using(name),
            location="/l/{tag__code}/{id}",
            metadata_ttl=0,
        )
        core = _core(provider)
        page = anyio.run(provider.range_version, 1, 4)
        status, headers, body = get(core, "/sitemap.xml")
        assert status == 200 and b"/l/t3/3" in body, body[:300]
        Tag.objects.using(name).filter(pk=3).update(code="renamed")
        status, _, again = get(core, "/sitemap.xml", if_none_match=headers["etag"])
        assert status == 200, "a 304 for URLs that changed"
        assert b"/l/renamed/3" in again and b"/l/t3/3" not in again
        assert anyio.run(provider.range_version, 1, 4)[1].token != page[1].token


def _core(provider: Any) -> SitemapCore:
    from sitemap_middleware import SitemapConfig

    return SitemapCore(
        SitemapConfig(base_url="https://example.com", sections={"listings": Section(provider)})
    )


@pytest.mark.parametrize("alias", ALIASES)
def test_a_checksum_over_a_big_table_is_warned_of_once(
    alias: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default version of a QuerySet section reads every row: past
    ``BIG_TABLE_ROWS`` that is said once, with the option that reads only what changed."""
    import logging

    from sitemap_middleware._providers import checksum
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    name = alias_or_skip(alias)
    write_tags(name, [(f"t{number}", None) for number in range(1, 6)])
    monkeypatch.setattr(checksum, "BIG_TABLE_ROWS", 5)
    monkeypatch.setattr(checksum, "_TOLD", set())
    try:
        provider = DjangoQuerySetProvider(
            Tag.objects.using(name), location="/t/{id}", metadata_ttl=0
        )
        with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
            anyio.run(provider.version)
            anyio.run(provider.range_version, 0, 3)
            anyio.run(provider.version)
        warned = [r.getMessage() for r in caplog.records if "checksum of all" in r.getMessage()]
        assert len(warned) == 1, warned
        assert "DjangoQuerySetProvider(Tag)" in warned[0] and "pass version_field=" in warned[0]
    finally:
        write_tags(name, [])


def test_a_template_through_a_relation_to_many_rows_is_refused() -> None:
    """``{listing__id}`` from a Tag goes through its listings (many per tag): the join
    repeats the tag per listing, so the template is refused when the provider is made."""
    from sitemap_middleware import ConfigurationError
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    _listing_model()
    with pytest.raises(ConfigurationError, match="'listing', a relation to many rows"):
        DjangoQuerySetProvider(Tag.objects.all(), location="/t/{listing__id}/{code}")
    DjangoQuerySetProvider(_listing_model().objects.all(), location="/l/{tag__code}/{id}")


def test_a_relation_to_many_rows_named_last_is_refused() -> None:
    """``{listing}`` reads a listing's id from a Tag: the same join, one tag per listing
    (it was served, each tag repeated), while a foreign key named last is one value."""
    from sitemap_middleware import ConfigurationError
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    _listing_model()
    with pytest.raises(ConfigurationError, match="'listing', a relation to many rows"):
        DjangoQuerySetProvider(Tag.objects.all(), location="/t/{listing}/{code}")
    DjangoQuerySetProvider(_listing_model().objects.all(), location="/l/{tag}/{pk}/{tag_id}")


@cache
def _label_model() -> Any:
    """An unmanaged model of a Tag's labels, one per language (created by the test)."""
    from django.db import models

    from tests.djangoproject.shop.models import Tag

    return unmanaged_model(
        "Label",
        "sitemap_label",
        tag=models.ForeignKey(
            Tag, on_delete=models.DO_NOTHING, db_constraint=False, related_name="labels"
        ),
        language=models.CharField(max_length=5),
        text=models.CharField(max_length=40),
    )


@pytest.mark.parametrize("alias", ALIASES)
def test_a_template_through_a_filtered_relation_is_served(alias: str) -> None:
    """``FilteredRelation("labels", condition=Q(labels__language="en"))``, Django's way to
    one related row per object, names its row: served (it raised FieldDoesNotExist when
    the provider was made), and renaming that row moves the ETag."""
    from django.db import connections
    from django.db.models import FilteredRelation, Q

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    name = alias_or_skip(alias)
    write_tags(name, [(f"t{number}", None) for number in range(1, 4)])
    with connections[name].cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS sitemap_label")
        cursor.execute(
            "CREATE TABLE sitemap_label (id integer PRIMARY KEY, tag_id bigint, "
            "language varchar(5), text varchar(40))"
        )
        cursor.execute("INSERT INTO sitemap_label SELECT id, id, 'en', 'en' || code FROM shop_tag")
        cursor.execute("INSERT INTO sitemap_label SELECT 10 + id, id, 'fr', 'fr' FROM shop_tag")
    _label_model()
    english = FilteredRelation("labels", condition=Q(labels__language="en"))
    try:
        provider = DjangoQuerySetProvider(
            Tag.objects.using(name).alias(english=english),
            location="/t/{english__text}/{id}",
            metadata_ttl=0,
        )
        core = _core(provider)
        status, headers, body = get(core, "/sitemap.xml")
        assert status == 200 and body.count(b"<loc>") == 3 and b"/t/ent2/2" in body, body
        with connections[name].cursor() as cursor:
            cursor.execute("UPDATE sitemap_label SET text = 'renamed' WHERE id = 2")
        status, _, again = get(core, "/sitemap.xml", if_none_match=headers["etag"])
        assert status == 200 and b"/t/renamed/2" in again, "a 304 for URLs that changed"
    finally:
        with connections[name].cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS sitemap_label")
        write_tags(name, [])


def test_transforms_after_a_field_are_no_relation() -> None:
    """``{updated__date__year}`` reads a field through two transforms: no join to check
    (it raised AttributeError when the provider was made)."""
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    DjangoQuerySetProvider(Tag.objects.all(), location="/t/{updated__date__year}/{id}")


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("annotation", ["n", "k", "v", "x0"])
def test_an_annotation_named_like_the_versions_own_aggregates(alias: str, annotation: str) -> None:
    """A location template reading an annotation the version aggregates beside its own
    (``n``, ``k``, ``v``, ``x0`` named the count, newest key, checksum and snapshot):
    the version is the rows', not an error or a value of its own."""
    from django.db.models import F

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    name = alias_or_skip(alias)
    with _listings(name, tags=3):
        listings = _listing_model().objects.using(name)
        provider = DjangoQuerySetProvider(
            listings.annotate(**{annotation: F("tag__code")}),
            location=f"/l/{{{annotation}}}/{{id}}",
            metadata_ttl=0,
        )
        core = _core(provider)
        status, headers, body = get(core, "/sitemap.xml")
        assert status == 200 and b"/l/t2/2" in body, body
        assert anyio.run(provider.count) == 3
        Tag.objects.using(name).filter(pk=2).update(code="renamed")
        status, _, again = get(core, "/sitemap.xml", if_none_match=headers["etag"])
        assert status == 200 and b"/l/renamed/2" in again, "a 304 for URLs that changed"


@cache
def _shelf_model() -> Any:
    """Unmanaged models (no table): a Shelf with many Labels, apart from the project's
    models so that deleting their rows never looks for these tables."""
    from django.db import models

    label = unmanaged_model(
        "ShelfLabel", "sitemap_shelf_label", code=models.CharField(max_length=20)
    )
    return unmanaged_model("Shelf", "sitemap_shelf", labels=models.ManyToManyField(label))


def test_a_template_through_a_relation_to_many_rows_says_which_rows_to_list() -> None:
    """The refusal names the way out: the related model's rows (one URL each) and, over
    a many-to-many field, its through model's rows (one URL per pair)."""
    from sitemap_middleware import ConfigurationError
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    _listing_model()  # (its reverse relation on Tag: listing)
    with pytest.raises(ConfigurationError) as refused:
        DjangoQuerySetProvider(_shelf_model().objects.all(), location="/s/{labels__code}/")
    message = str(refused.value)
    assert "a queryset of ShelfLabel, whose template names {code}" in message, message
    assert "Shelf.labels.through" in message, message
    with pytest.raises(ConfigurationError) as refused:
        DjangoQuerySetProvider(Tag.objects.all(), location="/t/{listing__id}/{code}")
    assert "a queryset of Listing, whose template names {id}" in str(refused.value)
    assert ".through" not in str(refused.value)
