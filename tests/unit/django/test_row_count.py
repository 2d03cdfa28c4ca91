"""A row count a trigger keeps in place of ``count()`` in a QuerySet section's version
(``_django/row_count.py``, the rule of ``_providers/row_count.py``): with
``version_field`` the version then reads no whole-table count; it is checked against
``count()`` in one statement when due and when a whole plan does not add up, and a
count that disagrees (or reads NULL) is logged and ``count()`` used from then on."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from sitemap_middleware import ConfigurationError, Section
from sitemap_middleware._providers import row_count
from tests.harness.django import (
    ALIASES,
    RevisionedRows,
    alias_or_skip,
    core_for,
    get,
    locs,
    locs_of_index,
    recorded_connections,
)

pytestmark = pytest.mark.usefixtures("django_project")

#: The recipe of docs/how-to/big-tables.md for Django, per database.
TRIGGERS = {
    "sqlite": [
        "CREATE TRIGGER revisioned_in AFTER INSERT ON shop_revisioned BEGIN "
        "UPDATE shop_rowcount SET total = total + 1 WHERE name = 'revisioned'; END",
        "CREATE TRIGGER revisioned_out AFTER DELETE ON shop_revisioned BEGIN "
        "UPDATE shop_rowcount SET total = total - 1 WHERE name = 'revisioned'; END",
    ],
    "postgresql": [
        "CREATE OR REPLACE FUNCTION revisioned_rows() RETURNS trigger AS $$ BEGIN "
        "IF TG_OP = 'INSERT' THEN UPDATE shop_rowcount SET total = total + "
        "(SELECT count(*) FROM moved) WHERE name = 'revisioned'; "
        "ELSE UPDATE shop_rowcount SET total = total - (SELECT count(*) FROM moved) "
        "WHERE name = 'revisioned'; END IF; RETURN NULL; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER revisioned_in AFTER INSERT ON shop_revisioned REFERENCING NEW TABLE "
        "AS moved FOR EACH STATEMENT EXECUTE FUNCTION revisioned_rows()",
        "CREATE TRIGGER revisioned_out AFTER DELETE ON shop_revisioned REFERENCING OLD TABLE "
        "AS moved FOR EACH STATEMENT EXECUTE FUNCTION revisioned_rows()",
    ],
}


@pytest.fixture(params=ALIASES)
def rows(request: pytest.FixtureRequest) -> Iterator[RevisionedRows]:
    """Revisioned rows of the test's database, a counter row reading 0, no trigger."""
    from tests.djangoproject.shop.models import RowCount

    name = alias_or_skip(request.param)
    made = RevisionedRows(name)
    made.fill(0)
    RowCount.objects.using(name).update_or_create(name="revisioned", defaults={"total": 0})
    yield made
    _execute(
        name, ["DROP TRIGGER IF EXISTS revisioned_in", "DROP TRIGGER IF EXISTS revisioned_out"]
    )
    made.fill(0)


def _execute(alias: str, statements: list[str]) -> None:
    from django.db import connections

    connection = connections[alias]
    with connection.cursor() as cursor:
        for statement in statements:
            if connection.vendor == "postgresql" and statement.startswith("DROP TRIGGER"):
                statement += " ON shop_revisioned"
            cursor.execute(statement)


def _alias(rows: RevisionedRows) -> str:
    return str(rows.objects.db)


def _triggers(rows: RevisionedRows) -> None:
    from django.db import connections

    _execute(_alias(rows), TRIGGERS[connections[_alias(rows)].vendor])


def _kept(alias: str, name: str = "revisioned") -> Any:
    from tests.djangoproject.shop.models import RowCount

    return RowCount.objects.using(alias).filter(name=name).values("total")


def _provider(rows: RevisionedRows, **kwargs: Any) -> Any:
    from sitemap_middleware.django import DjangoQuerySetProvider

    arguments: dict[str, Any] = {"version_field": "revision", "row_count": _kept(_alias(rows))}
    return DjangoQuerySetProvider(
        rows.objects.all(),
        lastmod="updated",
        location="/r/{code}/{id}",
        metadata_ttl=0,
        **{**arguments, **kwargs},
    )


def _crawl(provider: Any) -> list[str]:
    """Every URL the index's pages list (each page must answer 200)."""
    core = core_for({}, sections={"rows": Section(provider, max_urls=5)})
    status, _, index = get(core, "/sitemap_index.xml")
    assert status == 200, index
    listed: list[str] = []
    for url in locs_of_index(index):
        status, _, body = get(core, url.removeprefix("https://example.com"))
        assert status == 200, url
        listed += locs(body)
    return listed


def _version(provider: Any) -> str:
    provider.forget()  # (nothing kept: read now)
    return str(anyio.run(provider.version).token)


def test_the_version_reads_the_kept_count_and_moves_with_every_write(
    rows: RevisionedRows,
) -> None:
    """No ``COUNT(`` of the whole queryset in the version (rows without a lastmod are an
    index lookup of ``IS NULL``), the counter read instead; an
    insert, a delete (no revision moves: only the count tells) and an update each move
    it."""
    _triggers(rows)
    for _ in range(20):
        rows.write("insert", len(rows.ids) * 7)
    provider = _provider(rows)
    with recorded_connections() as (statements, _):
        first = _version(provider)
    assert any("shop_rowcount" in each for each in statements), statements
    counts = [each for each in statements if "COUNT(" in each.upper()]
    assert all("IS NULL" in each.upper() for each in counts), counts
    assert anyio.run(provider.count) == 20
    seen = [first]
    for kind in ("delete", "rename", "insert"):
        rows.write(kind, 3)
        seen.append(_version(provider))
    assert len(set(seen)) == len(seen), seen


def test_a_count_nobody_keeps_is_logged_and_count_used(
    rows: RevisionedRows, caplog: pytest.LogCaptureFixture
) -> None:
    """No trigger: the counter says 0 while the table holds 12 rows. The plan's ranges
    do not add up: checked, logged, and later versions count the rows (a delete, which
    moves no revision, moves the version)."""
    for _ in range(12):
        rows.write("insert", len(rows.ids) * 7)
    provider = _provider(rows)
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        assert len(_crawl(provider)) == 12
    assert "row_count reads 0 but the source holds 12 rows" in caplog.text
    before = _version(provider)
    rows.write("delete", 0)
    assert _version(provider) != before
    assert len(_crawl(provider)) == 11


def test_a_count_that_reads_no_row_or_null_is_logged(
    rows: RevisionedRows, caplog: pytest.LogCaptureFixture
) -> None:
    """No counter row (a typo in the filter), or NULL: no count; ``count()`` is used
    (logged) and the sitemap served."""
    from tests.djangoproject.shop.models import RowCount

    for _ in range(12):
        rows.write("insert", len(rows.ids) * 7)
    RowCount.objects.using(_alias(rows)).create(name="nothing", total=None)
    for kept in (_kept(_alias(rows), "typo"), _kept(_alias(rows), "nothing")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
            assert len(_crawl(_provider(rows, row_count=kept))) == 12
        assert "row_count reads None, not a count" in caplog.text
    RowCount.objects.using(_alias(rows)).filter(name="nothing").delete()


def test_a_due_check_reads_the_kept_count_beside_count_in_one_statement(
    rows: RevisionedRows, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Once a check is due, one statement of the version reads both (one snapshot); a
    count that drifted is caught there: logged, and the version counts the rows."""
    from tests.djangoproject.shop.models import RowCount

    _triggers(rows)
    for _ in range(6):
        rows.write("insert", len(rows.ids) * 7)
    monkeypatch.setattr(row_count, "CHECK_EVERY", 0.0)
    provider = _provider(rows)
    with recorded_connections() as (statements, _):
        _version(provider)
    both = [each for each in statements if "shop_rowcount" in each and "COUNT(" in each.upper()]
    assert both, statements
    RowCount.objects.using(_alias(rows)).update(total=99)
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        _version(provider)
    assert "row_count reads 99 but the source holds 6 rows" in caplog.text
    assert anyio.run(provider.count) == 6


def test_a_sitemap_declaring_row_count_is_served_with_it(rows: RevisionedRows) -> None:
    """``row_count`` beside ``version_field`` on a ``Sitemap`` with a location template
    (an attribute or a method)."""
    from django.contrib.sitemaps import Sitemap

    _triggers(rows)
    rows.write("insert", 1)
    kept = _kept(_alias(rows))

    class Revisions(Sitemap):
        location_template = "/r/{code}/{id}"
        lastmod_field = "updated"
        version_field = "revision"

        def items(self) -> Any:
            return rows.objects.all()

        def row_count(self) -> Any:
            return kept

    core = core_for({"rows": Revisions})
    section: Any = core.config.sections["rows"]
    provider = section.provider
    assert provider._versions.kept_count.statement is kept
    assert get(core, "/sitemap_index.xml")[0] == 200


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"version_field": None}, "row_count needs version_field="),
        ({"row_count": 12}, "row_count must be a QuerySet of one value"),
        ({"row_count": "all"}, "row_count must be a QuerySet of one value"),
        ({"row_count": "two values"}, "row_count must be a QuerySet of one value"),
        ({"queryset": "distinct"}, "row_count needs a key the schema makes unique"),
    ],
)
def test_a_row_count_that_cannot_work_is_refused(
    rows: RevisionedRows, arguments: dict[str, Any], message: str
) -> None:
    from tests.djangoproject.shop.models import RowCount

    counts = RowCount.objects.using(_alias(rows))
    made = {
        "all": counts.all(),
        "two values": counts.values("name", "total"),
        "distinct": rows.objects.distinct(),
    }
    given = {name: made.get(value, value) for name, value in arguments.items()}
    queryset = given.pop("queryset", None)
    with pytest.raises(ConfigurationError, match=message):
        provider = _provider(rows, **given)
        if queryset is not None:
            from sitemap_middleware.django import DjangoQuerySetProvider

            DjangoQuerySetProvider(
                queryset, version_field="revision", row_count=_kept(_alias(rows))
            )
        assert provider is None


@pytest.mark.parametrize("due", [False, True], ids=["plan", "due check"])
def test_a_count_that_reads_several_rows_is_logged_and_count_used(
    rows: RevisionedRows,
    due: bool,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A filter that matches several counters (``values("total")`` of every one): no
    count. PostgreSQL refused the scalar subquery of the check (every version due failed
    from then on); SQLite took any row. Logged, and ``count()`` used: the sitemap served."""
    from tests.djangoproject.shop.models import RowCount

    for _ in range(12):
        rows.write("insert", len(rows.ids) * 7)
    RowCount.objects.using(_alias(rows)).filter(name="revisioned").update(total=12)
    RowCount.objects.using(_alias(rows)).create(name="another", total=3)
    if due:
        monkeypatch.setattr(row_count, "CHECK_EVERY", 0.0)
    every = RowCount.objects.using(_alias(rows)).values("total")
    try:
        with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
            assert len(_crawl(_provider(rows, row_count=every))) == 12
        assert "row_count reads" in caplog.text
    finally:
        RowCount.objects.using(_alias(rows)).filter(name="another").delete()
