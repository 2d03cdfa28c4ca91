"""Naive datetimes under ``USE_TZ=False`` are wall-clock times in ``TIME_ZONE``.

That is what Django stores and reads then (its docs: "Django stores all datetimes in
local time"); taken as UTC, a Berlin 09:30 was written an hour late and a Tokyo one nine
hours ahead, in the future for a fresh item. Under ``USE_TZ=True`` a naive value (from
user code; the database gives aware ones) stays UTC, as Django's own ``Last-Modified``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from lxml import etree

from sitemap_middleware import Section, SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from tests.harness.django import core_for, get, instant, sitemap_class

pytestmark = pytest.mark.usefixtures("django_project")
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
WALL = datetime(2024, 1, 2, 9, 30)  # naive: 09:30 on the site's clock
TOKYO_UTC = datetime(2024, 1, 2, 0, 30, tzinfo=timezone.utc)  # Asia/Tokyo is UTC+9


@pytest.fixture
def tokyo_local_time() -> Iterator[None]:
    from django.test import override_settings

    with override_settings(USE_TZ=False, TIME_ZONE="Asia/Tokyo"):
        yield


def _lastmods(body: bytes) -> list[datetime]:
    texts = [url.findtext(NS + "lastmod") for url in etree.fromstring(body).iter(NS + "url")]
    return [moment for text in texts if (moment := instant(text)) is not None]


def _tag_rows() -> Iterator[Any]:
    from tests.djangoproject.shop.models import Tag

    tags = Tag.objects.using("default")
    tags.all().delete()
    tags.create(pk=1, code="a", updated=WALL)
    yield tags.order_by("pk")
    tags.all().delete()


@pytest.mark.usefixtures("tokyo_local_time")
def test_a_sitemaps_naive_lastmod_is_in_time_zone_without_use_tz() -> None:
    sitemap = sitemap_class("Local", ["/a/"], lastmod=WALL)
    core = core_for({"local": sitemap}, item_dates=True)
    status, headers, body = get(core, "/sitemap-local-1.xml")
    assert status == 200
    assert _lastmods(body) == [TOKYO_UTC]
    assert headers["last-modified"] == "Tue, 02 Jan 2024 00:30:00 GMT"


def test_a_sitemaps_naive_lastmod_is_utc_under_use_tz() -> None:
    sitemap = sitemap_class("Utc", ["/a/"], lastmod=WALL)
    status, _, body = get(core_for({"utc": sitemap}), "/sitemap-utc-1.xml")
    assert status == 200
    assert _lastmods(body) == [WALL.replace(tzinfo=timezone.utc)]


@pytest.mark.usefixtures("tokyo_local_time")
@pytest.mark.parametrize(
    "location", ["/tags/{code}/", lambda tag: f"/tags/{tag.code}/"], ids=["template", "function"]
)
def test_queryset_rows_lastmods_are_in_time_zone_without_use_tz(
    location: str | Callable[[Any], str],
) -> None:
    from sitemap_middleware.django import DjangoQuerySetProvider

    for tags in _tag_rows():
        provider = DjangoQuerySetProvider(tags, lastmod="updated", location=location)
        config = SitemapConfig(base_url="https://example.com", sections={"tags": Section(provider)})
        core = SitemapCore(config)
        status, _, body = get(core, "/sitemap.xml")
        assert status == 200
        assert _lastmods(body) == [TOKYO_UTC]
        _, _, index = get(core, "/sitemap_index.xml")
        (text,) = [e.text for e in etree.fromstring(index).iter(NS + "lastmod")]
        assert text is not None and instant(text) == TOKYO_UTC


@pytest.mark.usefixtures("tokyo_local_time")
def test_a_generic_sitemaps_last_modified_is_in_time_zone_without_use_tz() -> None:
    from django.contrib.sitemaps import GenericSitemap

    for tags in _tag_rows():
        generic = GenericSitemap({"queryset": tags, "date_field": "updated"})
        status, headers, body = get(core_for({"generic": generic}), "/sitemap-generic-1.xml")
        assert status == 200
        assert _lastmods(body) == [TOKYO_UTC]
        assert headers["last-modified"] == "Tue, 02 Jan 2024 00:30:00 GMT"
