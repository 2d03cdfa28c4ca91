"""A QuerySet section planned where its rows live (issue 23, item 6): with a location
template of fields, the index comes from the SQL provider's grouped window query wrapped
around the queryset's own SQL, on Django's connection; no row is read unless it holds a
character that writing may change. Whatever the rows hold, the planned pages list the
URLs the row-by-row plan lists, each once, and no page outgrows its budget.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware import Section
from sitemap_middleware._django.values import ValueRows
from sitemap_middleware._providers import sql_ranges
from tests.harness.django import alias_or_skip, core_for, get, locs, locs_of_index, write_tags

pytestmark = pytest.mark.usefixtures("django_project")
ALIASES = ["default", pytest.param("pg", marks=pytest.mark.postgres)]
START = datetime(2025, 3, 1, tzinfo=timezone.utc)
#: Codes (Tag.code is a varchar(40), unique): mostly plain, with what percent-encoding,
#: XML escaping and dot segments do to a location's length, and NULLs.
CODES = st.one_of(
    st.text("abcXYZ019-._~/", min_size=0, max_size=12),
    st.text("ab&'\"<> %#?é\u4e2d😀.", min_size=1, max_size=10),
    st.sampled_from(["..", ".", "a/../b", "x" * 34]),
    st.none(),
)
TEMPLATE = "/t/{code}/{id}/{code}"


def _provider(alias: str, *, planned: bool) -> Any:
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    class RowByRow(DjangoQuerySetProvider):
        async def range_stats(self, rows_per_range: int) -> None:
            return None  # the engine measures every row in Python

    kind = DjangoQuerySetProvider if planned else RowByRow
    return kind(Tag.objects.using(alias), lastmod="updated", location=TEMPLATE, changefreq="daily")


def _crawl(provider: Any, max_urls: int, max_bytes: int) -> list[str]:
    """Every URL the index's pages list, each page held to the byte budget."""
    core = core_for(
        {}, sections={"tags": Section(provider, max_urls=max_urls)}, max_bytes_per_page=max_bytes
    )
    status, _, index = get(core, "/sitemap_index.xml")
    if status == 404:
        return []
    assert status == 200
    urls: list[str] = []
    for child in locs_of_index(index):
        status, _, body = get(core, child.removeprefix("https://example.com"))
        assert status == 200 and len(body) <= max_bytes, (child, len(body))
        urls.extend(locs(body))
    return urls


def _rows(count: int, codes: list[str | None], minutes: list[int | None]) -> list[Any]:
    rows: list[tuple[str | None, datetime | None]] = []
    for place in range(count):
        code = codes[place % len(codes)]
        minute = minutes[place % len(minutes)]
        rows.append(
            (
                # unique, as Tag.code is: the place always four digits ("1"+"2" was ""+"12")
                None if code is None else f"{code}{place:04d}"[-40:],
                None if minute is None else START + timedelta(minutes=minute, seconds=place),
            )
        )
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("alias", ALIASES)
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    count=st.integers(0, 200),
    codes=st.lists(CODES, min_size=1, max_size=6),
    minutes=st.lists(st.one_of(st.none(), st.integers(0, 10**6)), min_size=1, max_size=4),
    max_urls=st.integers(20, 60),
    max_bytes=st.sampled_from([1024, 2048, 6000, 10**6]),
    halves=st.booleans(),
)
def test_pages_planned_by_the_database_hold_every_row_once_within_budget(
    alias: str,
    count: int,
    codes: list[str | None],
    minutes: list[int | None],
    max_urls: int,
    max_bytes: int,
    halves: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever the rows hold, the plan from the database never makes an overfull page,
    lists each URL once, and lists the URLs the row-by-row plan lists."""
    import anyio

    alias = alias_or_skip(alias)
    rows = _rows(count, codes, minutes)
    write_tags(alias, rows)
    monkeypatch.setattr(sql_ranges, "PARALLEL_ROWS", 1 if halves else 10**12)
    try:
        planned = _provider(alias, planned=True)
        stats = anyio.run(planned.range_stats, 3)
        assert stats is not None and sum(each.rows for each in stats.ranges) == len(rows)
        by_ranges = _crawl(planned, max_urls, max_bytes)
        by_rows = _crawl(_provider(alias, planned=False), max_urls, max_bytes)
    finally:
        write_tags(alias, [])
    assert len(by_ranges) == len(set(by_ranges))
    assert sorted(by_ranges) == sorted(by_rows)
    assert len(by_rows) == sum(code is not None for code, _ in rows)


@pytest.mark.parametrize("alias", ALIASES)
def test_an_index_of_plain_rows_reads_no_row(alias: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index of 3,000 plain rows reads no row (no values, no model instance); the range
    holding an odd row is read alone, and the index is the row-by-row plan's index."""
    alias = alias_or_skip(alias)
    rows: list[tuple[str | None, datetime | None]] = [
        (f"tag-{i}", START + timedelta(minutes=i)) for i in range(3000)
    ]
    rows[1500] = ("caf\u00e9 & cr\u00e8me", START)
    write_tags(alias, rows)
    reads: list[int] = []
    pairs = ValueRows.pairs

    def counting(self: ValueRows, queryset: Any, size: int) -> Any:
        found = pairs(self, queryset, size)
        reads.append(len(found))
        return found

    monkeypatch.setattr(ValueRows, "pairs", counting)
    try:
        status, _, planned = get(
            core_for({}, sections={"tags": Section(_provider(alias, planned=True), max_urls=500)}),
            "/sitemap_index.xml",
        )
        assert status == 200 and len(locs_of_index(planned)) == 7  # 495 rows a page
        assert len(reads) == 1 and reads[0] < 495, reads  # the odd row's range, alone
        reads.clear()
        _, _, measured = get(
            core_for({}, sections={"tags": Section(_provider(alias, planned=False), max_urls=500)}),
            "/sitemap_index.xml",
        )
        assert sum(reads) == 3000 and planned == measured
    finally:
        write_tags(alias, [])


@pytest.mark.parametrize("alias", ALIASES)
def test_a_queryset_with_annotations_of_its_own_is_planned(alias: str) -> None:
    """Annotations of the queryset's own (a datetime here) are not location columns:
    the section is still planned in the database, and lists every row once."""
    import anyio
    from django.db.models import F

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    write_tags(alias, [(f"t{i}", START) for i in range(50)])
    try:
        queryset = Tag.objects.using(alias).annotate(seen=F("updated")).filter(seen__isnull=False)
        provider = DjangoQuerySetProvider(queryset, lastmod="updated", location=TEMPLATE)
        stats = anyio.run(provider.range_stats, 5)
        urls = _crawl(provider, 20, 10**6)
    finally:
        write_tags(alias, [])
    assert stats is not None and sum(each.urls for each in stats.ranges) == 50
    assert len(urls) == len(set(urls)) == 50


@pytest.mark.parametrize("alias", ALIASES)
def test_a_text_key_is_planned_in_the_databases_order(alias: str) -> None:
    """Ranges of a text key (the database's collation orders them, as it orders the
    pages' reads): the planned pages list what the row-by-row pages list, each once."""
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    codes = ["B", "a", "é", "Z", "a b", "a-b", "_x", "中", "😀", "&", "~", "0", "A", "ab"]
    write_tags(alias, [(f"{code}{i}{code}", START) for i, code in enumerate(codes * 9)])
    try:

        class RowByRow(DjangoQuerySetProvider):
            async def range_stats(self, rows_per_range: int) -> None:
                return None

        def provider(planned: bool) -> Any:
            queryset = Tag.objects.using(alias).filter(code__isnull=False)
            kind = DjangoQuerySetProvider if planned else RowByRow
            return kind(queryset, key="code", location="/t/{code}/{id}")

        by_ranges = _crawl(provider(True), 20, 10**6)
        by_rows = _crawl(provider(False), 20, 10**6)
    finally:
        write_tags(alias, [])
    assert len(by_ranges) == len(set(by_ranges)) == len(set(by_rows)) == len(codes) * 9
    assert sorted(by_ranges) == sorted(by_rows)


def test_a_queryset_that_can_hold_no_row_is_planned_empty() -> None:
    """``filter(pk__in=[])``: Django compiles no SQL for it (EmptyResultSet); the section
    is empty, not an error."""
    import anyio

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    write_tags("default", [("a", START)])
    try:
        for queryset in (Tag.objects.filter(pk__in=[]), Tag.objects.none()):
            provider = DjangoQuerySetProvider(queryset, location=TEMPLATE)
            stats = anyio.run(provider.range_stats, 5)
            assert stats is not None and list(stats.ranges) == []
            assert _crawl(provider, 20, 10**6) == []
    finally:
        write_tags("default", [])


@pytest.mark.parametrize("alias", ALIASES)
def test_a_filtered_queryset_is_planned_with_its_parameters(alias: str) -> None:
    """The queryset's own SQL parameters (a LIKE, a %) reach the database with the
    wrapper around them: the planned section lists exactly the rows the filter keeps."""
    import anyio

    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    write_tags(alias, [(f"{i}%{i % 3}", START) for i in range(60)])
    try:
        queryset = Tag.objects.using(alias).filter(code__contains="%1")
        provider = DjangoQuerySetProvider(queryset, location="/t/{id}")
        stats = anyio.run(provider.range_stats, 5)
        urls = _crawl(provider, 20, 10**6)
    finally:
        write_tags(alias, [])
    assert stats is not None and sum(each.rows for each in stats.ranges) == 20
    assert len(urls) == len(set(urls)) == 20


@pytest.mark.parametrize("alias", ALIASES)
def test_a_field_converting_its_values_is_measured_row_by_row(
    alias: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CharField subclass with ``from_db_value`` (an enum, a decoded or expanded value):
    the URL is built from what Django gives, not from what the database holds, so the
    database cannot measure it: no page outgrows its budget, every URL listed once."""
    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    field = Tag._meta.get_field("code")
    monkeypatch.setattr(
        field,
        "from_db_value",
        lambda value, *_: None if value is None else value * 8,
        raising=False,
    )
    write_tags(alias, [(f"c{i}", START) for i in range(120)])
    try:
        by_ranges = _crawl(_provider(alias, planned=True), 50, 4000)
        by_rows = _crawl(_provider(alias, planned=False), 50, 4000)
    finally:
        write_tags(alias, [])
    assert len(by_ranges) == len(set(by_ranges)) == 120
    assert sorted(by_ranges) == sorted(by_rows)


@pytest.mark.parametrize("alias", ALIASES)
def test_a_queryset_located_by_get_absolute_url_is_planned_from_row_counts(
    alias: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default location (``get_absolute_url()``, a model instance per row) is counted
    in the database: the index builds the objects of its eight sampled ranges alone, and
    its pages list every row once, as the row-by-row plan does."""
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    alias = alias_or_skip(alias)
    write_tags(alias, [(f"tag-{i}", START + timedelta(minutes=i)) for i in range(6000)])
    built: list[int] = []
    located = Tag.get_absolute_url

    def counting(self: Any) -> str:
        built.append(self.pk)
        return located(self)

    monkeypatch.setattr(Tag, "get_absolute_url", counting)
    try:
        provider = DjangoQuerySetProvider(Tag.objects.using(alias), lastmod="updated")
        core = core_for({}, sections={"tags": Section(provider, max_urls=1000)})
        status, _, index = get(core, "/sitemap_index.xml")
        assert status == 200 and len(locs_of_index(index)) == 7  # (990 URLs a page)
        assert 0 < len(built) <= 8 * 45  # (45 rows a range: whole ranges fill 990)
        by_ranges = _crawl(provider, 1000, 10 * 1024 * 1024)
    finally:
        write_tags(alias, [])
    assert len(by_ranges) == len(set(by_ranges)) == 6000
