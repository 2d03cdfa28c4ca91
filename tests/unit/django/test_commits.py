"""A QuerySet section's versions kept while nothing is committed (``_django/commits.py``,
the rule of ``_providers/commits.py``): past ``metadata_ttl`` the next check of the
section and of a key range runs no aggregate (SQLite: its own connection's
``data_version``, no statement on Django's; PostgreSQL: the snapshot alone), and any
commit (an ORM save, a delete, a raw write on another connection, another process)
moves the ETag at once. Before, every check re-read every row."""

from __future__ import annotations

import textwrap
from datetime import timedelta
from functools import cache
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware import Section
from sitemap_middleware._engine.core import SitemapCore
from tests.harness.django import (
    ALIASES,
    RevisionedRows,
    alias_or_skip,
    core_for,
    get,
    locs_of_index,
    recorded_connections,
    unmanaged_model,
)
from tests.harness.processes import run_python

pytestmark = pytest.mark.usefixtures("django_project")
RANGE = (0, 30)  # a key range holding rows 3-30 (a page's)
#: What an aggregate of a version reads (a statement with none of these is no scan).
AGGREGATES = ("COUNT(", "MAX(", "SUM(")


def _provider(alias: str, revision: bool, queryset: Any = None, **kwargs: Any) -> Any:
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Revisioned

    return DjangoQuerySetProvider(
        Revisioned.objects.using(alias) if queryset is None else queryset,
        lastmod="updated",
        location="/r/{code}/{id}",
        version_field="revision" if revision else None,
        metadata_ttl=0,
        **kwargs,
    )


def _tokens(provider: Any) -> tuple[str | None, str | None]:
    async def read() -> tuple[str | None, str | None]:
        version = await provider.version()
        _, in_range = await provider.range_version(*RANGE)
        return version.token, in_range.token

    return anyio.run(read)


def _scans(statements: list[str]) -> list[str]:
    return [each for each in statements if any(word in each.upper() for word in AGGREGATES)]


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("revision", [False, True], ids=["checksum", "version_field"])
def test_nothing_committed_runs_no_aggregate(alias: str, revision: bool) -> None:
    """SQLite runs no statement on Django's connections at all; PostgreSQL reads its
    snapshot alone. (A PostgreSQL snapshot moves with a commit anywhere on the server,
    which this test shares: some round of a few must find it still.)"""
    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(40)
    provider = _provider(alias, revision)
    first = _tokens(provider)
    quiet = False
    for _ in range(1 if alias == "default" else 50):
        with recorded_connections() as (statements, _):
            assert _tokens(provider) == first
        if alias == "default":
            assert statements == [], statements
        assert all("snapshot" in each or _scans([each]) for each in statements), statements
        quiet = not _scans(statements)
        if quiet:
            break
    assert quiet, statements
    assert provider._versions.commits.applies is True


def _write(rows: RevisionedRows, alias: str, writer: str) -> None:
    """Row 6 (in :data:`RANGE`) renamed (and its lastmod moved: the index's bytes too),
    or deleted, however ``writer`` says."""
    from django.db import connections

    from tests.harness.django import DAY

    moved = DAY + timedelta(days=1)

    if writer == "orm save":
        row = rows.objects.get(pk=6)
        row.code, row.revision, row.updated = "saved", rows.next(), moved
        row.save()
    elif writer == "delete":
        rows.objects.filter(pk=6).delete()
    elif writer == "raw, another connection":
        other = connections.create_connection(alias)
        try:
            with other.cursor() as cursor:
                cursor.execute(
                    "UPDATE shop_revisioned SET code = 'raw', revision = %s, updated = %s "
                    "WHERE id = 6",
                    [rows.next(), other.ops.adapt_datetimefield_value(moved)],
                )
        finally:
            other.close()
    else:
        code = f"""
            from datetime import datetime
            import django
            django.setup()
            from tests.djangoproject.shop.models import Revisioned
            Revisioned.objects.using({alias!r}).filter(pk=6).update(code="elsewhere",
                revision={rows.next()}, updated=datetime.fromisoformat({moved.isoformat()!r}))
        """
        run_python("-c", textwrap.dedent(code))


def _page_and_index(core: SitemapCore) -> dict[str, str]:
    """The ETag of the index and of its first page (a key-range page)."""
    status, headers, index = get(core, "/sitemap_index.xml")
    assert status == 200
    page = locs_of_index(index)[0].removeprefix("https://example.com")
    assert "~" in page, page
    return {"/sitemap_index.xml": headers["etag"], page: get(core, page)[1]["etag"]}


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("revision", [False, True], ids=["checksum", "version_field"])
@pytest.mark.parametrize("writer", ["orm save", "delete", "raw, another connection", "process"])
def test_a_commit_moves_the_etags_at_once(alias: str, revision: bool, writer: str) -> None:
    """The index and the page holding row 6 answer 304 while nothing is committed; after
    the write (however made) both answer 200 with a new ETag on the very next request."""
    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(40)
    core = core_for({}, sections={"rows": Section(_provider(alias, revision), max_urls=20)})
    etags = _page_and_index(core)
    for path, etag in etags.items():
        assert get(core, path, if_none_match=etag)[0] == 304, path
    _write(rows, alias, writer)
    for path, etag in etags.items():
        status, headers, _ = get(core, path, if_none_match=etag)
        assert status == 200 and headers["etag"] != etag, path


@pytest.mark.parametrize("alias", ALIASES)
def test_sql_django_cannot_see_through_is_read_every_time(alias: str) -> None:
    """``extra()`` may read anything: every check runs the aggregate, and writes show."""
    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(12)
    provider = _provider(alias, False, rows.objects.extra(where=["1 = 1"]))
    first = _tokens(provider)
    assert provider._versions.commits.applies is False
    with recorded_connections() as (statements, _):
        assert _tokens(provider) == first
    assert _scans(statements), statements
    _write(rows, alias, "orm save")
    assert _tokens(provider)[0] != first[0]


@cache
def _view_model() -> Any:
    """An unmanaged model over a view of the revisioned rows (made once: Django keeps
    every model class it is given)."""
    from django.db import models

    return unmanaged_model(
        "RevisionView",
        "sitemap_revision_view",
        code=models.CharField(max_length=40, null=True),
        updated=models.DateTimeField(null=True),
        revision=models.BigIntegerField(),
    )


@pytest.mark.parametrize("alias", ALIASES)
def test_a_view_behind_an_unmanaged_model_is_read_every_time(alias: str) -> None:
    """A view may read what no commit of this database moves: every check of it runs
    the aggregate."""
    from django.db import connections

    name = alias_or_skip(alias)
    rows = RevisionedRows(name)
    rows.fill(12)

    with connections[name].cursor() as cursor:
        cursor.execute("DROP VIEW IF EXISTS sitemap_revision_view")
        cursor.execute("CREATE VIEW sitemap_revision_view AS SELECT * FROM shop_revisioned")
    try:
        provider = _provider(name, False, _view_model().objects.using(name))
        first = _tokens(provider)
        assert provider._versions.commits.applies is False
        _write(rows, name, "orm save")
        assert _tokens(provider)[0] != first[0]
    finally:
        with connections[name].cursor() as cursor:
            cursor.execute("DROP VIEW IF EXISTS sitemap_revision_view")


@cache
def _pointer_model() -> Any:
    """An unmanaged model whose rows point at the view's (its URLs are read through
    the join: ``{target__code}``)."""
    from django.db import models

    target = models.ForeignKey(_view_model(), on_delete=models.DO_NOTHING, db_constraint=False)
    return unmanaged_model("RevisionPointer", "sitemap_revision_pointer", target=target)


@pytest.mark.parametrize("alias", ALIASES)
def test_a_view_joined_by_the_location_alone_is_read_every_time(alias: str) -> None:
    """The queryset reads a table, but its URLs (and checksum) read a view through a
    join the template makes: every check runs the aggregate."""
    from django.db import connections

    name = alias_or_skip(alias)
    rows = RevisionedRows(name)
    rows.fill(12)
    with connections[name].cursor() as cursor:
        cursor.execute("DROP VIEW IF EXISTS sitemap_revision_view")
        cursor.execute("DROP TABLE IF EXISTS sitemap_revision_pointer")
        cursor.execute("CREATE VIEW sitemap_revision_view AS SELECT * FROM shop_revisioned")
        cursor.execute(
            "CREATE TABLE sitemap_revision_pointer (id integer PRIMARY KEY, target_id bigint)"
        )
        cursor.execute("INSERT INTO sitemap_revision_pointer SELECT id, id FROM shop_revisioned")
    try:
        from sitemap_middleware.django import DjangoQuerySetProvider

        provider = DjangoQuerySetProvider(
            _pointer_model().objects.using(name),
            location="/p/{target__code}/{id}",
            checksum_fields=["target__code"],
            metadata_ttl=0,
        )
        first = _tokens(provider)
        assert provider._versions.commits.applies is False
        with recorded_connections() as (statements, _):
            assert _tokens(provider) == first
        assert _scans(statements), statements
    finally:
        with connections[name].cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS sitemap_revision_pointer")
            cursor.execute("DROP VIEW IF EXISTS sitemap_revision_view")


def test_the_tables_a_queryset_reads() -> None:
    """Its model's, its joins' and its subqueries'; None for SQL of the user's own."""
    from django.db.models import Exists, OuterRef
    from django.db.models.expressions import RawSQL

    from sitemap_middleware._django.commits import queryset_tables
    from tests.djangoproject.shop.models import Revisioned, Tag

    rows = Revisioned.objects.all()
    assert queryset_tables(rows) == [(None, "shop_revisioned")]
    inside = rows.filter(code__in=Tag.objects.values("code"))
    assert queryset_tables(inside) == [(None, "shop_revisioned"), (None, "shop_tag")]
    tagged = rows.filter(Exists(Tag.objects.filter(code=OuterRef("code"))))
    assert queryset_tables(tagged) == [(None, "shop_revisioned"), (None, "shop_tag")]
    assert queryset_tables(rows.extra(where=["1 = 1"])) is None
    assert queryset_tables(rows.annotate(x=RawSQL("1", []))) is None
    assert queryset_tables(rows.filter(id__in=Tag.objects.extra(where=["1 = 1"]))) is None


@pytest.mark.parametrize("alias", ALIASES)
def test_a_queryset_reading_the_clock_is_read_every_time(alias: str) -> None:
    """``filter(updated__lte=Now())`` (scheduled publishing) lists more rows as time
    passes with nothing committed: every check runs the aggregate, as before."""
    from django.db.models.functions import Now

    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(12)
    provider = _provider(alias, False, rows.objects.filter(updated__lte=Now()))
    first = _tokens(provider)
    assert provider._versions.commits.applies is False
    with recorded_connections() as (statements, _):
        assert _tokens(provider) == first
    assert _scans(statements), statements


def test_functions_of_the_clock_or_of_the_users_sql_are_not_seen_through() -> None:
    """``Now()``, ``Random()`` and a function whose SQL the user wrote (``Func(function=)``,
    a subclass of their own, a lookup of their own) may read what no commit moves."""
    from django.db.models import CharField, DateField, F, Func, Lookup
    from django.db.models.functions import Lower, Now, Random

    from sitemap_middleware._django.commits import queryset_tables
    from tests.djangoproject.shop.models import Revisioned

    class Today(Func):
        function = "CURRENT_DATE"
        template = "%(function)s"
        output_field = DateField()

    class Later(Lookup):
        lookup_name = "sitemap_later"

        def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
            lhs, params = self.process_lhs(compiler, connection)
            return f"{lhs} > CURRENT_TIMESTAMP", params

    rows = Revisioned.objects.all()
    assert queryset_tables(rows.annotate(c=Lower("code")).filter(c="x")) is not None
    assert queryset_tables(rows.filter(updated__lte=Now())) is None
    assert queryset_tables(rows.annotate(r=Random()).filter(r__lt=0.5)) is None
    assert queryset_tables(rows.annotate(d=Today())) is None
    assert (
        queryset_tables(rows.annotate(d=Func(F("code"), function="now", output_field=CharField())))
        is None
    )
    CharField.register_lookup(Later)
    try:
        assert queryset_tables(rows.filter(code__sitemap_later=True)) is None
    finally:
        CharField._unregister_lookup(Later)


def test_a_filtered_relation_reading_chance_is_not_seen_through() -> None:
    """A ``FilteredRelation``'s condition is SQL of the join (``ON ... < random()``), not
    of the where clause: ``Random()`` or ``Now()`` there lists other rows with nothing
    committed too (it was seen through, so the version was kept while the rows moved),
    and the tables of its subqueries count."""
    from django.db.models import FilteredRelation, Q, Subquery
    from django.db.models.functions import Random

    from sitemap_middleware._django.commits import queryset_tables
    from tests.djangoproject.shop.models import Revisioned, Tag
    from tests.unit.django.test_queryset_related import _listing_model

    _listing_model()

    def joined(condition: Q) -> Any:
        relation = FilteredRelation("listing", condition=condition)
        return Tag.objects.alias(live=relation).filter(live__isnull=False)

    assert queryset_tables(joined(Q(listing__id__gt=0))) == [
        (None, "shop_tag"),
        (None, "sitemap_listing"),
    ]
    assert queryset_tables(joined(Q(listing__id__lt=Random() * 10))) is None
    assert queryset_tables(joined(~Q(Q(listing__id=1) | Q(listing__id__lt=Random() * 10)))) is None
    inside = Q(listing__id=Subquery(Revisioned.objects.values("id")[:1]))
    assert (None, "shop_revisioned") in (queryset_tables(joined(inside)) or [])


WRITES = st.tuples(
    st.sampled_from(["rename", "same code", "insert", "delete", "other table", "raw"]),
    st.integers(0, 10**6),
)


@pytest.mark.slow
@pytest.mark.parametrize("alias", ALIASES)
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(count=st.integers(1, 60), writes=st.lists(WRITES, min_size=1, max_size=5))
def test_a_page_etag_moves_exactly_when_its_bytes_do(
    alias: str, count: int, writes: list[tuple[str, int]]
) -> None:
    """After every write (one that changes URLs, or one that commits without changing
    any: a code rewritten as it was, another table), each key-range page the index
    lists answers 304 to the ETag held for it exactly when its bytes are unchanged."""
    from django.db import connections
    from django.db.models import F

    from tests.djangoproject.shop.models import Tag

    name = alias_or_skip(alias)
    rows = RevisionedRows(name)
    rows.fill(count)
    # The checksum over what the entries are made of (the key is always covered): by
    # default it covers the revision too, which moves with a rename to the same code.
    provider = _provider(name, False, checksum_fields=["code", "updated"])
    core = core_for({}, sections={"rows": Section(provider, max_urls=20)})
    held: dict[str, tuple[str, bytes]] = {}
    for kind, number in [("none", 0), *writes]:
        key = rows.ids[number % len(rows.ids)] if rows.ids else 0
        if kind == "same code":
            rows.objects.filter(pk=key).update(code=F("code"))  # (commits, same bytes)
        elif kind == "other table":
            Tag.objects.using(name).create(pk=10**6, code=f"t{number}")
            Tag.objects.using(name).filter(pk=10**6).delete()
        elif kind == "raw":
            other = connections.create_connection(name)
            try:
                with other.cursor() as cursor:
                    sql = "UPDATE shop_revisioned SET code = %s WHERE id = %s"
                    cursor.execute(sql, [f"raw{number}", key])
            finally:
                other.close()
        elif kind != "none":
            rows.write(kind, number)
        status, _, index = get(core, "/sitemap_index.xml")
        for url in locs_of_index(index) if status == 200 else []:
            path = url.removeprefix("https://example.com")
            status, headers, body = get(core, path)
            assert status == 200
            if path in held:
                etag, before = held[path]
                assert (headers["etag"] == etag) == (body == before), (path, kind)
                assert get(core, path, if_none_match=etag)[0] == (304 if body == before else 200)
            held[path] = (headers["etag"], body)
