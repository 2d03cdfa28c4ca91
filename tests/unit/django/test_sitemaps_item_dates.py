"""``item_dates=True``: a plain ``Sitemap``'s pages get Django's ``Last-Modified`` (the
newest item lastmod, read from every item, only when every item has one), and with
``HTTPSettings(trust_provider_times=True)`` Django's 304s for ``If-Modified-Since``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest

from sitemap_middleware import ConfigurationError, HTTPSettings
from tests.harness.django import ALIASES, DAY, alias_or_skip, core_for, get, locs

pytestmark = pytest.mark.usefixtures("django_project")
PAGE = "/sitemap-tags-1.xml"
NEWEST = "Thu, 01 Feb 2024 00:00:00 GMT"


def _sitemap(alias: str) -> Any:
    """A plain Sitemap (no GenericSitemap) over the Tags, its lastmod a method."""
    from django.contrib.sitemaps import Sitemap

    from tests.djangoproject.shop.models import Tag

    class TagSitemap(Sitemap):
        def items(self) -> Any:
            return Tag.objects.using(alias).order_by("pk")

        def location(self, tag: Any) -> str:
            return f"/tags/{tag.code}/"

        def lastmod(self, tag: Any) -> datetime | None:
            return tag.updated

    return TagSitemap


@pytest.mark.parametrize("alias", ALIASES)
def test_item_dates_sends_the_newest_lastmod_when_every_item_has_one(
    alias: str, tags: Callable[..., None]
) -> None:
    """Django's view: Last-Modified is the newest item lastmod (no ETag: a time alone);
    without the option a plain Sitemap's pages carry no validator."""
    alias = alias_or_skip(alias)
    tags([("a", DAY - timedelta(days=1)), ("b", DAY), ("c", DAY - timedelta(days=2))], alias)
    sitemap = _sitemap(alias)
    dated = core_for({"tags": sitemap}, item_dates=True)
    for path in (PAGE, "/sitemap.xml"):
        status, headers, body = get(dated, path)
        assert status == 200 and len(locs(body)) == 3
        assert headers["last-modified"] == NEWEST
        assert "etag" not in headers
    status, headers, _ = get(core_for({"tags": sitemap}), PAGE)
    assert status == 200 and "last-modified" not in headers


@pytest.mark.parametrize("alias", ALIASES)
def test_item_dates_sends_no_last_modified_while_an_item_is_undated(
    alias: str, tags: Callable[..., None]
) -> None:
    """As Django's view: one item without a lastmod, no Last-Modified (the newest date says
    nothing about it); once it is dated, the header comes back."""
    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    tags([("a", DAY), ("b", None), ("c", DAY - timedelta(days=1))], alias)
    core = core_for({"tags": _sitemap(alias)}, item_dates=True)
    status, headers, body = get(core, PAGE)
    assert status == 200 and len(locs(body)) == 3
    assert "last-modified" not in headers and "etag" not in headers
    later = DAY + timedelta(hours=5)
    Tag.objects.using(alias).filter(code="b").update(updated=later)
    assert get(core, PAGE)[1]["last-modified"] == "Thu, 01 Feb 2024 05:00:00 GMT"


def test_if_modified_since_gets_a_304_only_with_trust_provider_times(
    tags: Callable[..., None],
) -> None:
    """The date alone earns no 304 (a deleted older item leaves it put) unless the user
    vouches for it, as Django's ConditionalGetMiddleware answers from it."""
    tags([("a", DAY), ("b", DAY - timedelta(days=1))])
    sitemap = _sitemap("default")
    plain = core_for({"tags": sitemap}, item_dates=True)
    trusting = core_for(
        {"tags": sitemap}, item_dates=True, http=HTTPSettings(trust_provider_times=True)
    )
    earlier = "Wed, 31 Jan 2024 00:00:00 GMT"
    assert get(plain, PAGE, if_modified_since=NEWEST)[0] == 200
    assert get(trusting, PAGE, if_modified_since=NEWEST)[0] == 304
    assert get(trusting, PAGE, if_modified_since=earlier)[0] == 200
    # Without item_dates there is no date to answer from, trusted or not.
    untold = core_for({"tags": sitemap}, http=HTTPSettings(trust_provider_times=True))
    assert get(untold, PAGE, if_modified_since=NEWEST)[0] == 200


def test_item_dates_reads_attributes_dates_zones_and_languages(
    tags: Callable[..., None],
) -> None:
    """``lastmod`` is read as Django's ``Sitemap._get`` reads it: an attribute as is, a
    method with the item (not the (item, language) pair under ``i18n``), only for items
    that are listed; a date is its midnight UTC, an aware time converted to GMT; a
    sitemap without items or without ``lastmod`` gets no date."""
    from django.contrib.sitemaps import Sitemap

    tags([("a", DAY), ("b", None)])
    base = _sitemap("default")
    seen: list[object] = []

    class Fixed(base):  # type: ignore[misc,valid-type]
        lastmod = date(2013, 3, 13)

    class Zoned(base):  # type: ignore[misc,valid-type]
        lastmod = datetime(2013, 3, 13, 10, tzinfo=timezone(timedelta(hours=-5)))

    class Languages(base):  # type: ignore[misc,valid-type]
        i18n = True
        languages = ["en", "de"]

        def lastmod(self, tag: Any) -> datetime | None:
            seen.append(tag)
            return tag.updated

        def get_languages_for_item(self, tag: Any) -> list[str]:
            return [] if tag.code == "b" else ["en", "de"]  # b (undated) is not listed

    class Empty(Fixed):
        def items(self) -> list[object]:
            return []

    class Undated(Sitemap):
        def items(self) -> list[str]:
            return ["/a/"]

        def location(self, item: str) -> str:
            return item

    def modified(sitemap: Any) -> str | None:
        core = core_for({"tags": sitemap}, item_dates=True)
        status, headers, _ = get(core, PAGE)
        assert status == 200
        return headers.get("last-modified")

    assert modified(Fixed) == "Wed, 13 Mar 2013 00:00:00 GMT"
    assert modified(Zoned) == "Wed, 13 Mar 2013 15:00:00 GMT"
    assert modified(Languages) == NEWEST
    assert seen and all(type(tag).__name__ == "Tag" for tag in seen)
    assert modified(Empty) is None
    assert modified(Undated) is None


def test_item_dates_reads_the_items_in_a_worker_thread(tags: Callable[..., None]) -> None:
    """The pass over the items is ORM work: never on the event loop's thread."""
    tags([("a", DAY)])
    threads: list[threading.Thread] = []

    class Recorded(_sitemap("default")):  # type: ignore[misc]
        def lastmod(self, tag: Any) -> datetime | None:
            threads.append(threading.current_thread())
            return tag.updated

    import anyio

    from sitemap_middleware.django import DjangoSitemapProvider

    version = anyio.run(DjangoSitemapProvider(Recorded, item_dates=True).version)
    assert version.last_modified == DAY
    assert threads and threading.current_thread() not in threads
    assert anyio.run(DjangoSitemapProvider(Recorded).version).last_modified is None


def test_a_bad_item_dates_value_is_refused() -> None:
    from sitemap_middleware.django import DjangoSitemapProvider, django_sections, sitemap_config

    sitemap = _sitemap("default")
    with pytest.raises(ConfigurationError, match="item_dates must be True or False, got 'yes'"):
        DjangoSitemapProvider(sitemap, item_dates="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="item_dates must be True or False, got 1"):
        sitemap_config({"tags": sitemap}, base_url="https://example.com", item_dates=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="item_dates must be True or False, got None"):
        django_sections({}, item_dates=None)  # type: ignore[arg-type]
