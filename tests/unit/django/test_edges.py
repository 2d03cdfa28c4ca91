"""Edges a hostile review found: NULL keys and lastmods, values the XSD refuses, empty
sitemaps, Django's host settings. Each test failed before its fix."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.http import parse_date

from sitemap_middleware import ConfigurationError, HTTPSettings, Section
from tests.harness.django import (
    ALIASES,
    DAY,
    alias_or_skip,
    as_bytes,
    core_for,
    get,
    locs,
    locs_of_index,
    sitemap_class,
    urls,
)
from tests.harness.documents import check_document

pytestmark = pytest.mark.usefixtures("django_project")


# -- 1. keys that may be NULL ------------------------------------------------------------


def test_a_nullable_key_is_refused_unless_the_queryset_leaves_nulls_out() -> None:
    """A unique but nullable key cannot order NULL rows (several may be NULL): refused at
    construction, naming Model.field and the two ways out; a queryset filtered on it is taken."""
    from django.db.models import Q

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    with pytest.raises(ConfigurationError) as refused:
        DjangoQuerySetProvider(Tag.objects.all(), key="code", lastmod="updated")
    message = str(refused.value)
    assert "Tag.code is nullable" in message
    assert "Tag.objects.filter(code__isnull=False)" in message and "key='pk'" in message
    with pytest.raises(ConfigurationError, match="Tag.code is nullable"):
        DjangoQuerySetProvider(Tag.objects.filter(code__gt="m"), key="code")  # not provably
    with pytest.raises(ConfigurationError, match="Tag.code is nullable"):
        DjangoQuerySetProvider(Tag.objects.filter(code__isnull=True), key="code")
    DjangoQuerySetProvider(Tag.objects.filter(code__isnull=False), key="code")
    DjangoQuerySetProvider(Tag.objects.exclude(code__isnull=True), key="code")
    DjangoQuerySetProvider(
        Tag.objects.filter(updated__isnull=False, code__isnull=False), key="code"
    )
    DjangoQuerySetProvider(Tag.objects.filter(Q(code__isnull=False) & Q(pk__gt=1)), key="code")
    with pytest.raises(ConfigurationError, match="Tag.code is nullable"):
        DjangoQuerySetProvider(Tag.objects.filter(Q(code__isnull=False) | Q(pk=1)), key="code")
    with pytest.raises(ConfigurationError, match="Tag.code is nullable"):
        DjangoQuerySetProvider(Tag.objects.exclude(code__isnull=False), key="code")
    DjangoQuerySetProvider(Tag.objects.all())  # the primary key is never NULL
    # one changefreq/priority for every row: a bad one is refused up front, by value
    with pytest.raises(ConfigurationError, match="invalid changefreq 'sometimes'"):
        DjangoQuerySetProvider(Tag.objects.all(), changefreq="sometimes")
    with pytest.raises(ConfigurationError, match="invalid priority 7"):
        DjangoQuerySetProvider(Tag.objects.all(), priority=7)


def _collect(provider: Any, size: int) -> tuple[int, list[str], list[str]]:
    async def main() -> tuple[int, list[str], list[str]]:
        count = await provider.count()
        paged = []
        for offset in range(0, count + size, size):  # one page past the end as well
            paged += [entry["loc"] async for entry in provider.page(offset, size)]
        every = [entry["loc"] async for entry in provider.entries()]
        await provider.page_last_modified(size)
        return count, paged, every

    return anyio.run(main)


KEYS = st.text(alphabet="aAb_ 0é", max_size=3)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(
        st.tuples(st.none() | KEYS, st.none() | st.just(DAY)),
        max_size=14,
        unique_by=lambda row: row[0] if row[0] is not None else object(),
    ),
    size=st.integers(1, 5),
    batch=st.integers(1, 4),
)
def test_keyset_pages_list_every_row_with_a_key_exactly_once(
    tags: Callable[..., None], rows: list[tuple[str | None, datetime | None]], size: int, batch: int
) -> None:
    """For any unique keys (text that sorts by collation, '' included) mixed with NULL
    keys and NULL lastmods, the pages and entries() of a queryset that leaves NULL keys
    out list every row with a key exactly once, in key order, whatever the page size."""
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    tags(rows)
    provider = DjangoQuerySetProvider(
        Tag.objects.filter(code__isnull=False),
        key="code",
        lastmod="updated",
        batch_size=batch,
        metadata_ttl=0,
    )
    count, paged, every = _collect(provider, size)
    expected = [f"/tags/{tag.pk}/" for tag in Tag.objects.exclude(code=None).order_by("code")]
    assert count == len(expected) == len([row for row in rows if row[0] is not None])
    assert paged == every == expected


@pytest.mark.parametrize("alias", ALIASES)
def test_queryset_pages_with_null_keys_in_the_table_through_the_core(
    alias: str, tags: Callable[..., None]
) -> None:
    """Rows with NULL keys and lastmods in the table: every page answers 200 and lists
    its own rows (no 503, no repeats), on SQLite and PostgreSQL."""
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    tags([(None, None), ("c", DAY), (None, DAY), ("a", None), ("b", DAY), (None, None)], alias)
    provider = DjangoQuerySetProvider(
        Tag.objects.using(alias).filter(code__isnull=False), key="code", lastmod="updated"
    )
    core = core_for({}, sections={"tags": Section(provider, max_urls=2)})
    pages = [get(core, f"/sitemap-tags-{n}.xml") for n in (1, 2, 3)]
    assert [status for status, _, _ in pages] == [200, 200, 404]
    assert [locs(pages[0][2]), locs(pages[1][2])] == [
        ["https://example.com/tags/4/", "https://example.com/tags/5/"],
        ["https://example.com/tags/2/"],
    ]


# -- 2. Last-Modified only when every item has a lastmod ---------------------------------


def _tag_sitemaps(alias: str) -> dict[str, Any]:
    from django.contrib.sitemaps import GenericSitemap

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    tags = Tag.objects.using(alias).order_by("pk")
    return {
        "generic": GenericSitemap({"queryset": tags, "date_field": "updated"}),
        "rows": Section(DjangoQuerySetProvider(tags, lastmod="updated", metadata_ttl=0)),
    }


@pytest.mark.parametrize("alias", ALIASES)
def test_last_modified_only_when_every_item_has_a_lastmod(
    alias: str, tags: Callable[..., None]
) -> None:
    """As Django's view: no validators while an item lacks a lastmod (the newest date says
    nothing about it: the old answer's Last-Modified stayed put when it was deleted, and a
    bare If-Modified-Since got a stale 304); with every item dated, validators, and 304s
    for an ETag (a time alone earns one only with ``trust_provider_times``)."""
    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    undated = [("a", DAY), ("b", None), ("c", DAY - timedelta(days=1))]
    tags(undated, alias)
    sitemaps = _tag_sitemaps(alias)
    core = core_for({"generic": sitemaps["generic"]}, sections={"rows": sitemaps["rows"]})
    trusting = core_for(
        {"generic": sitemaps["generic"]}, http=HTTPSettings(trust_provider_times=True)
    )
    for path in ("/sitemap-generic-1.xml", "/sitemap-rows-1.xml"):
        status, headers, body = get(core, path)
        assert status == 200 and len(locs(body)) == 3
        assert "last-modified" not in headers and "etag" not in headers
        Tag.objects.using(alias).filter(code="b").delete()
        status, headers, body = get(core, path)
        assert status == 200 and len(locs(body)) == 2
        if path == "/sitemap-generic-1.xml":  # a time only: Last-Modified, as Django's view
            assert headers["last-modified"] == "Thu, 01 Feb 2024 00:00:00 GMT"
            assert "etag" not in headers
            since = headers["last-modified"]
            # The date alone earns no 304 (this delete left it put); the user may vouch.
            assert get(core, path, if_modified_since=since)[0] == 200
            assert get(trusting, path, if_modified_since=since)[0] == 304
        else:  # a token: an ETag, and a Last-Modified never older than the rows
            modified = parse_date(headers["last-modified"])
            assert modified is not None and modified >= datetime(2024, 2, 1, tzinfo=UTC)
            assert get(core, path, if_none_match=headers["etag"])[0] == 304
        tags(undated, alias)


# -- 3. values Django writes as they are but the XSD refuses -----------------------------


def test_invalid_optional_values_are_left_out_and_the_url_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """priority=7, an unknown changefreq and a lastmod that is no date cost only that
    field (one warning per section and field, naming the value); a location with a space
    or '<' is percent-encoded (the same URL, written as the XSD wants); every page listed
    in the index answers 200, even one whose entries are all gone."""
    bad = sitemap_class(
        "Bad",
        ["/a b?q=<1>&r", "/plain"],
        priority=7,
        changefreq="sometimes",
        lastmod=lambda self, item: "last tuesday" if item == "/plain" else DAY,
    )
    gone = sitemap_class("Gone", [None, 42])  # locations Django would write as garbage
    core = core_for({"bad": bad, "gone": gone, "fine": sitemap_class("Fine", ["/ok"])})
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        for _ in range(2):
            status, _, body = get(core, "/sitemap-bad-1.xml")
            assert status == 200
    assert urls(body, ours=True) == [
        ("https://example.com/a%20b?q=%3C1%3E&r", "2024-02-01", None, None, ()),
        ("https://example.com/plain", None, None, None, ()),
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len([w for w in warnings if "'bad'" in w]) == 3, warnings
    assert any("priority" in w and "7" in w for w in warnings)
    assert any("changefreq" in w and "'sometimes'" in w for w in warnings)
    assert any("lastmod" in w and "'last tuesday'" in w for w in warnings)
    _, _, index = get(core, "/sitemap_index.xml")
    listed = [loc.rsplit("/", 1)[1] for loc in locs_of_index(index)]
    for name in listed:
        status, _, body = get(core, "/" + name)
        assert status == 200, name
        if b"<url>" in body:
            check_document(body)
    assert "sitemap-bad-1.xml" in listed


# -- 4. an empty sitemap ------------------------------------------------------------------


def test_an_empty_sitemap_answers_an_empty_urlset_as_in_django() -> None:
    """items() == []: its page 1 is an empty urlset (200), as Django's view serves, page 2
    is 404 as in Django; the index does not list it (an empty urlset is not valid against
    sitemap.xsd, which requires one <url>); a site of empty sitemaps answers sitemap.xml
    with an empty urlset rather than 404."""
    empty = sitemap_class("Empty", [])
    core = core_for({"empty": empty, "full": sitemap_class("Full", ["/a"])})
    status, _, body = get(core, "/sitemap-empty-1.xml")
    assert status == 200 and b"<urlset" in body and b"<url>" not in body
    assert get(core, "/sitemap-empty-2.xml")[0] == 404
    assert [loc for loc in locs_of_index(get(core, "/sitemap_index.xml")[2])] == [
        "https://example.com/sitemap-full-1.xml"
    ]
    assert locs(get(core, "/sitemap.xml")[2]) == ["https://example.com/a"]
    only_empty = core_for({"empty": empty}, html=True)
    status, _, body = get(only_empty, "/sitemap.xml")
    assert status == 200 and b"<urlset" in body and b"<url>" not in body
    assert get(only_empty, "/sitemap-empty-1.html")[0] == 200  # its HTML view too
    # Django's own view, for the same class
    from django.contrib.sitemaps.views import sitemap
    from django.test import RequestFactory

    request = RequestFactory().get("/sitemap.xml", HTTP_HOST="example.com")
    theirs = sitemap(request, {"empty": empty}).render()
    assert theirs.status_code == 200 and b"<url>" not in theirs.content


# -- 5. Django's host settings ------------------------------------------------------------


def test_empty_allowed_hosts_says_what_to_set() -> None:
    """ALLOWED_HOSTS = [] names the setting and what to put in it."""
    from django.test import override_settings

    from sitemap_middleware.django import django_trusted_hosts

    with (
        override_settings(ALLOWED_HOSTS=[]),
        pytest.raises(ConfigurationError) as refused,
    ):
        django_trusted_hosts("allowed_hosts")
    assert "settings.ALLOWED_HOSTS is empty" in str(refused.value)
    assert "ALLOWED_HOSTS = ['example.com']" in str(refused.value)


def test_an_ipv6_allowed_host_is_served() -> None:
    """'[::1]' in ALLOWED_HOSTS is an exact host: accepted, and a request for it gets
    URLs on http://[::1]:8000 (the port as the client sent it)."""
    from django.test import override_settings

    from sitemap_middleware.django import django_trusted_hosts

    with override_settings(ALLOWED_HOSTS=["localhost", "[::1]", "[::1]:8000"]):
        hosts = django_trusted_hosts("allowed_hosts")
        assert hosts == ("localhost", "[::1]", "[::1]:8000")
        core = core_for({"a": sitemap_class("A", ["/a"])}, hosts="allowed_hosts")
    status, _, body = get(core, "/sitemap.xml", host="[::1]:8000")
    assert status == 200 and b"<loc>https://[::1]:8000/a</loc>" in body
    assert get(core, "/sitemap.xml", host="[::2]")[0] == 400
    with (
        override_settings(ALLOWED_HOSTS=["[::1"]),
        pytest.raises(ConfigurationError, match=r"host '\[::1' cannot be matched exactly"),
    ):
        django_trusted_hosts("allowed_hosts")


def test_page_answers_match_djangos_for_the_same_sitemap() -> None:
    """The same invalid-value sitemap through Django's view and ours: the same URLs (ours
    percent-encoded), and ours valid against the XSD."""
    from django.contrib.sitemaps.views import sitemap
    from django.test import RequestFactory

    bad = sitemap_class("Bad", ["/x y", "/z"], priority=7)
    request = RequestFactory().get("/sitemap.xml", HTTP_HOST="example.com", secure=True)
    theirs = sitemap(request, {"bad": bad}).render()
    assert theirs.status_code == 200
    assert b"<loc>https://example.com/x y</loc>" in theirs.content
    status, _, body = get(core_for({"bad": bad}), "/sitemap.xml")
    assert as_bytes(status, body) == body
    assert locs(body) == ["https://example.com/x%20y", "https://example.com/z"]


@pytest.mark.parametrize("alias", ALIASES)
def test_the_root_of_a_dated_generic_sitemap_sends_last_modified(
    alias: str, tags: Callable[..., None]
) -> None:
    """Issue 26: /sitemap.xml of a GenericSitemap(date_field=...) sends Last-Modified, as
    Django's sitemap view and the section's own page do."""
    alias = alias_or_skip(alias)
    tags([("a", DAY), ("c", DAY - timedelta(days=1))], alias)
    core = core_for({"generic": _tag_sitemaps(alias)["generic"]})
    page = get(core, "/sitemap-generic-1.xml")
    root = get(core, "/sitemap.xml")
    assert page[0] == root[0] == 200 and locs(page[2]) == locs(root[2])
    assert page[1]["last-modified"] == "Thu, 01 Feb 2024 00:00:00 GMT"
    assert root[1].get("last-modified") == page[1]["last-modified"]


def _index_lastmods(body: bytes) -> dict[str, str | None]:
    from lxml import etree

    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    root = etree.fromstring(body)
    return {
        item.findtext("s:loc", namespaces=ns).rsplit("/", 1)[-1]: item.findtext(
            "s:lastmod", namespaces=ns
        )
        for item in root.findall("s:sitemap", ns)
    }


@pytest.mark.parametrize("alias", ALIASES)
def test_the_index_takes_get_latest_lastmod_as_django_does(
    alias: str, tags: Callable[..., None]
) -> None:
    """Issue 26: every page of a section is listed with ``get_latest_lastmod()`` as
    Django's index lists it, whatever the items' own lastmods: an override, None
    (unknown: no <lastmod>) and a date (written as a date)."""
    from django.contrib.sitemaps import Sitemap

    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    tags([("a", DAY), ("b", DAY - timedelta(days=1)), ("c", DAY)], alias)

    class Overridden(Sitemap):
        limit = 2

        def items(self) -> Any:
            return Tag.objects.using(alias).order_by("pk")

        def location(self, tag: Any) -> str:
            return f"/tags/{tag.code}/"

        def lastmod(self, tag: Any) -> datetime:
            return tag.updated

        def get_latest_lastmod(self) -> Any:
            return datetime(2030, 1, 1, 12, tzinfo=UTC)

    class Unknown(Overridden):
        def get_latest_lastmod(self) -> Any:
            return None

    class Dated(Overridden):
        def get_latest_lastmod(self) -> Any:
            return DAY.date()

    core = core_for({"over": Overridden, "unknown": Unknown, "dated": Dated})
    status, _, body = get(core, "/sitemap_index.xml")
    assert status == 200
    check_document(body)
    assert _index_lastmods(body) == {
        "sitemap-over-1.xml": "2030-01-01T12:00:00+00:00",
        "sitemap-over-2.xml": "2030-01-01T12:00:00+00:00",
        "sitemap-unknown-1.xml": None,
        "sitemap-unknown-2.xml": None,
        "sitemap-dated-1.xml": "2024-02-01",
        "sitemap-dated-2.xml": "2024-02-01",
    }
