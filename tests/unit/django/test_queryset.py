"""Issue #11 item 3 for DjangoQuerySetProvider: the version (ETag) changes whenever a row
changes, not only when the count, the newest key or the newest lastmod move. Each test
failed before the row checksum (count + max key + max lastmod kept the old ETag)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from sitemap_middleware import ConfigurationError, Section
from tests.harness.django import alias_or_skip, core_for, get, locs, write_tags

pytestmark = pytest.mark.usefixtures("django_project")
ALIASES = ["default", pytest.param("pg", marks=pytest.mark.postgres)]
DAY = datetime(2024, 2, 1, tzinfo=timezone.utc)
PATH = "/sitemap-tags-1.xml"


@pytest.fixture
def alias(request: pytest.FixtureRequest) -> Iterator[str]:
    """The database alias of the test, its Tags emptied afterwards."""
    name = alias_or_skip(request.param)
    yield name
    write_tags(name, [])


def _core(alias: str, **kwargs: Any) -> Any:
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    provider = DjangoQuerySetProvider(
        Tag.objects.using(alias),
        lastmod="updated",
        location=lambda tag: f"/tags/{tag.code}/",  # the code is the slug: renames move it
        metadata_ttl=0,
        **kwargs,
    )
    return core_for({}, sections={"tags": Section(provider)})


def _tag(alias: str, pk: int, code: str, updated: datetime) -> None:
    from tests.djangoproject.shop.models import Tag

    Tag.objects.using(alias).create(pk=pk, code=code, updated=updated)


def _changed(alias: str, change: Callable[[], None], want: list[str], **kwargs: Any) -> None:
    """The ETag before and after ``change`` differ, GET lists ``want``, and the old ETag
    as If-None-Match gets the new document (200), not 304."""
    core = _core(alias, **kwargs)
    status, headers, _ = get(core, PATH)
    assert status == 200 and headers["etag"]
    old = headers["etag"]
    assert get(core, PATH, if_none_match=old)[0] == 304
    change()
    status, headers, body = get(core, PATH)
    assert status == 200
    assert headers["etag"] != old
    assert locs(body) == [f"https://example.com/tags/{code}/" for code in want]
    status, _, again = get(core, PATH, if_none_match=old)
    assert status == 200 and again == body


def _summaries_run(provider: Any) -> list[None]:
    """One item for each whole-table aggregate ``provider`` runs from now on."""
    runs: list[None] = []
    read = provider._versions.read_summary

    async def counting(*extra: Any) -> Any:
        runs.append(None)
        return await read(*extra)

    provider._versions.read_summary = counting
    return runs


def _seed(alias: str) -> None:
    write_tags(alias, [])
    _tag(alias, 10, "a", DAY - timedelta(days=2))
    _tag(alias, 11, "b", DAY - timedelta(days=1))
    _tag(alias, 12, "c", DAY)


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_a_rename_that_keeps_lastmod_changes_the_etag(alias: str) -> None:
    from tests.djangoproject.shop.models import Tag

    _seed(alias)
    _changed(
        alias,
        lambda: Tag.objects.using(alias).filter(pk=11).update(code="renamed"),
        ["a", "renamed", "c"],
    )


@pytest.mark.postgres
def test_a_case_only_rename_in_a_case_insensitive_column_changes_the_etag() -> None:
    """'Banana' -> 'banana' where the column's collation calls them equal: the row hash
    reads bytes, not the collation (the collation-aware hashtext family would not move)."""
    from django.db import connections

    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip("pg")
    write_tags(alias, [])
    _tag(alias, 10, "Banana", DAY)
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "CREATE COLLATION IF NOT EXISTS sitemap_nocase "
            "(provider = icu, locale = 'und-u-ks-level2', deterministic = false)"
        )
        # A LIKE index (varchar_pattern_ops) refuses such a collation: set aside meanwhile.
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'shop_tag' "
            "AND indexdef LIKE '%pattern_ops%'"
        )
        like_indexes = cursor.fetchall()
        for name, _ in like_indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute(
            "ALTER TABLE shop_tag ALTER COLUMN code TYPE varchar(40) COLLATE sitemap_nocase"
        )
    try:
        _changed(
            alias, lambda: Tag.objects.using(alias).filter(pk=10).update(code="banana"), ["banana"]
        )
    finally:
        write_tags(alias, [])
        with connections[alias].cursor() as cursor:
            cursor.execute(
                'ALTER TABLE shop_tag ALTER COLUMN code TYPE varchar(40) COLLATE "default"'
            )
            for _, definition in like_indexes:
                cursor.execute(definition)


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_a_delete_and_an_insert_at_a_lower_key_change_the_etag(alias: str) -> None:
    from tests.djangoproject.shop.models import Tag

    _seed(alias)

    def change() -> None:  # same count, same max key, same max lastmod
        Tag.objects.using(alias).filter(pk=11).delete()
        _tag(alias, 5, "new", DAY - timedelta(days=1))

    _changed(alias, change, ["new", "a", "c"])


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_an_update_below_the_newest_lastmod_changes_the_etag(alias: str) -> None:
    """A row's own <lastmod> moves while the newest lastmod (Last-Modified) stays."""
    from tests.djangoproject.shop.models import Tag

    _seed(alias)
    _changed(
        alias,
        lambda: Tag.objects.using(alias).filter(pk=10).update(updated=DAY - timedelta(hours=1)),
        ["a", "b", "c"],
    )


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_checksum_fields_limit_what_the_version_covers(alias: str) -> None:
    """With ``checksum_fields=["code"]`` a rename changes the ETag (the key is always
    covered); the rows' own lastmods are then not in the checksum."""
    from tests.djangoproject.shop.models import Tag

    _seed(alias)
    _changed(
        alias,
        lambda: Tag.objects.using(alias).filter(pk=11).update(code="renamed"),
        ["a", "renamed", "c"],
        checksum_fields=["code"],
    )
    core = _core(alias, checksum_fields=["code"])
    etag = get(core, PATH)[1]["etag"]
    Tag.objects.using(alias).filter(pk=10).update(updated=DAY - timedelta(hours=3))
    assert get(core, PATH)[1]["etag"] == etag  # what it was told to cover, and no more


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_version_field_replaces_the_checksum(alias: str) -> None:
    """``version_field``: the token is the count and the newest revision (no checksum)."""
    from tests.djangoproject.shop.models import Tag

    _seed(alias)
    core = _core(alias, version_field="id")  # stands in for a revision column here
    etag = get(core, PATH)[1]["etag"]
    Tag.objects.using(alias).filter(pk=11).update(code="renamed")
    assert get(core, PATH)[1]["etag"] == etag  # the revision did not move: same version
    _tag(alias, 13, "d", DAY)
    assert get(core, PATH)[1]["etag"] != etag


def test_bad_checksum_and_version_fields_say_which() -> None:
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    with pytest.raises(ConfigurationError, match="checksum field 'nope' .*Tag"):
        DjangoQuerySetProvider(Tag.objects.all(), checksum_fields=["nope"])
    with pytest.raises(ConfigurationError, match="version_field 'nope' is not a field of Tag"):
        DjangoQuerySetProvider(Tag.objects.all(), version_field="nope")
    with pytest.raises(ConfigurationError, match="either checksum_fields or version_field"):
        DjangoQuerySetProvider(Tag.objects.all(), checksum_fields=["code"], version_field="id")
    with pytest.raises(ConfigurationError, match="checksum_fields must be a non-empty list"):
        DjangoQuerySetProvider(Tag.objects.all(), checksum_fields="code")  # type: ignore[arg-type]


def test_a_vendor_without_a_row_checksum_asks_for_version_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.db import connections

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    monkeypatch.setattr(connections["default"], "vendor", "oracle")
    with pytest.raises(ConfigurationError, match="'oracle'.*version_field="):
        DjangoQuerySetProvider(Tag.objects.all())
    DjangoQuerySetProvider(Tag.objects.all(), version_field="id")  # no checksum needed


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
@pytest.mark.parametrize("change", ["rename", "unpublish"])
def test_a_key_range_page_never_answers_304_for_changed_content(
    alias: str, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If-Modified-Since with the date a key-range page was sent gets a 200 after a
    rename or an unpublish in its range (the newest `updated` stays put)."""
    import time

    from sitemap_middleware._engine import shared
    from tests.djangoproject.shop.models import Tag
    from tests.harness.django import locs_of_index

    _seed(alias)
    now = [time.time() - 3600]  # a clock of our own, in the past (replies cap the future)
    monkeypatch.setattr(shared, "wall_clock", lambda: now[0])
    core = _core(alias)
    status, _, index = get(core, "/sitemap_index.xml")
    assert status == 200
    page = locs_of_index(index)[0].removeprefix("https://example.com")
    assert "~" in page  # a key-range page
    get(core, page)  # its content first seen now
    now[0] += 5
    status, headers, body = get(core, page)
    modified = headers["last-modified"]
    assert get(core, page, if_modified_since=modified)[0] == 304
    tags = Tag.objects.using(alias)
    if change == "rename":
        tags.filter(pk=11).update(code="renamed")
    else:
        tags.filter(pk=11).delete()  # what an unpublish does to the queryset
    for _ in range(2):  # within the second the change was seen, and later
        status, _, again = get(core, page, if_modified_since=modified)
        assert status == 200 and again != body
        now[0] += 5


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_concurrent_revalidations_share_one_version_query(alias: str) -> None:
    """Thirty concurrent conditional requests run one aggregate query, not thirty."""
    import anyio

    from tests.harness.core import revalidated_together

    _seed(alias)
    core = _core(alias)
    status, headers, _ = get(core, PATH)
    assert status == 200
    provider = core.config.resolved_sections[0].provider
    queries = _summaries_run(provider)
    provider.forget()  # (what was kept: read again, once)
    statuses = anyio.run(revalidated_together, core, PATH, headers["etag"])
    assert statuses == [304] * 30
    assert len(queries) == 1


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_a_key_range_page_is_validated_by_its_own_rows(alias: str) -> None:
    """Revalidating a key-range page costs its range, not a checksum of the whole table
    (issue 23, item 2): no section-wide aggregate runs, the page answers 304, a rename in
    another page's range leaves it alone and one in its own range does not."""
    from tests.djangoproject.shop.models import Tag
    from tests.harness.django import locs_of_index

    write_tags(alias, [])
    for pk in range(1, 7):
        _tag(alias, pk, f"t{pk}", DAY)
    from sitemap_middleware.django import DjangoQuerySetProvider

    tags = DjangoQuerySetProvider(
        Tag.objects.using(alias),
        lastmod="updated",
        location=lambda tag: f"/tags/{tag.code}/",
        metadata_ttl=0,
    )
    core = core_for({}, sections={"tags": Section(tags, max_urls=3)})  # two pages of three
    status, _, index = get(core, "/sitemap_index.xml")
    pages = [url.removeprefix("https://example.com") for url in locs_of_index(index)]
    assert status == 200 and len(pages) == 2 and all("~" in page for page in pages)
    etags = [get(core, page)[1]["etag"] for page in pages]
    summaries = _summaries_run(tags)
    assert [
        get(core, page, if_none_match=etag)[0] for page, etag in zip(pages, etags, strict=True)
    ] == [304] * 2
    Tag.objects.using(alias).filter(pk=5).update(code="renamed")  # the second page's
    assert get(core, pages[0], if_none_match=etags[0])[0] == 304
    assert get(core, pages[1], if_none_match=etags[1])[0] == 200
    assert len(summaries) == 0


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
@pytest.mark.parametrize(
    ("key", "bounds"),
    [("pk", ["a", "z"]), ("pk", [None, "x"]), ("code", ["\u0000", "\u0000z"])],
    ids=["text-for-int", "open-text-for-int", "nul-in-text"],
)
def test_a_forged_key_range_answers_404(
    alias: str, key: str, bounds: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    """A key range the key cannot hold (text for an integer key; a NUL, which PostgreSQL
    text cannot hold) answers 404, never 503 and an ERROR (hostile review of issue 23)."""
    import base64
    import json

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    _seed(alias)
    tags = DjangoQuerySetProvider(
        Tag.objects.using(alias).filter(code__isnull=False),
        key=key,
        location=lambda tag: f"/tags/{tag.code}/",
    )
    core = core_for({}, sections={"tags": Section(tags)})
    token = base64.urlsafe_b64encode(json.dumps(bounds).encode()).decode().rstrip("=")
    assert get(core, f"/sitemap-tags-1~{token}.xml")[0] == 404
    assert "ERROR" not in caplog.text


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_a_deploy_that_changes_location_changes_the_etag(alias: str) -> None:
    """Another ``location`` function over the same rows writes other URLs: another ETag,
    so nothing stored or shared for the old code answers for the new."""
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    _seed(alias)
    etags = set()
    for location in (lambda tag: f"/tags/{tag.code}/", lambda tag: f"/labels/{tag.code}/"):
        tags = DjangoQuerySetProvider(
            Tag.objects.using(alias), lastmod="updated", location=location
        )
        etags.add(get(core_for({}, sections={"tags": Section(tags)}), PATH)[1]["etag"])
    assert len(etags) == 2


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_a_queryset_grouped_by_an_aggregate_is_planned(alias: str) -> None:
    """``annotate(Count(...)).filter(...)`` groups the rows: numbering them for page
    starts in the same query is refused by SQLite ("misuse of window function") and
    PostgreSQL ("window functions are not allowed in GROUP BY"), which left the section
    out (503). The grouped queryset is numbered as a subquery of its keys."""
    import anyio
    from django.db.models import Count

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    write_tags(alias, [(f"t{i}", DAY + timedelta(minutes=i)) for i in range(30)])
    grouped = Tag.objects.using(alias).annotate(n=Count("id")).filter(n__gt=0)
    provider = DjangoQuerySetProvider(
        grouped, lastmod="updated", location=lambda tag: f"/tags/{tag.code}/"
    )
    core = core_for({}, sections={"tags": Section(provider, max_urls=7)})
    status, _, index = get(core, "/sitemap_index.xml")
    assert status == 200, index
    urls: list[str] = []
    for page in range(1, 6):
        status, _, body = get(core, f"/sitemap-tags-{page}.xml")
        assert status == 200, (page, body)
        urls += locs(body)
    assert sorted(urls) == sorted(f"https://example.com/tags/t{i}/" for i in range(30))
    dates = anyio.run(provider.page_last_modified, 7)
    assert dates == [DAY + timedelta(minutes=m) for m in (6, 13, 20, 27, 29)]


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_two_rows_that_swap_their_lastmods_move_the_row_checksum(alias: str) -> None:
    """Summed over rows, a row hash linear in its fields' hashes keeps the sum when two
    tags swap their ``updated``: every swap here must move it (PostgreSQL's
    ``hash_record_extended``, tried for speed, missed most of them)."""
    from tests.djangoproject.shop.models import Tag

    tags = Tag.objects.using(alias)
    for pk in range(10, 20):
        _tag(alias, pk, f"t{pk}", DAY + timedelta(minutes=pk))
    kept = []
    for pk in range(10, 19):
        before = get(_core(alias), PATH)[1]["etag"]
        tags.filter(pk=pk).update(updated=DAY + timedelta(minutes=pk + 1))
        tags.filter(pk=pk + 1).update(updated=DAY + timedelta(minutes=pk))
        if get(_core(alias), PATH)[1]["etag"] == before:
            kept.append(pk)
        for each in (pk, pk + 1):  # back as it was
            tags.filter(pk=each).update(updated=DAY + timedelta(minutes=each))
    assert kept == []
