"""Issue 23 item 3: the index after one row's write, for a Django QuerySet section with
``version_field``.

``python -m benchmarks.django_rewrite --rows 1000000 --database postgresql --out r.json``

One table of ``rows`` revisioned rows (the test project's ``shop.Revisioned``: id, code,
updated, revision, indexed) on SQLite (its own file, cached under the temporary folder)
or PostgreSQL (``benchmarks/django_bench.py``'s database). ``DjangoQuerySetProvider``
with a location template and ``version_field="revision"`` (library defaults). Round after
round, timed in alternation:

* Django's own ``index`` view over a ``Sitemap`` of the same rows (the reference);
* the first index of a new middleware (nothing planned: every range measured);
* the index of one kept middleware after one row's UPDATE (its code, updated and the
  next revision) and the provider's ``forget()`` (what a save hook calls to serve a write
  at once), neither timed: only the range holding the row is measured again;
* the same with ``row_count=`` reading the count a trigger keeps in ``shop_rowcount``
  (docs/how-to/big-tables.md's recipe): no ``count(*)`` in the version.

Ratios are to the first index and to Django's view in the same round; figures are
medians over the rounds.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from benchmarks.django_bench import START, _django_view, django_arguments, django_on

TEMPLATE = "/products/{code}/"
#: The count triggers (docs/how-to/big-tables.md), dropped while the table is refilled.
COUNTED = {
    "sqlite": [
        f"CREATE TRIGGER IF NOT EXISTS revisioned_counted_{event.lower()} AFTER {event} ON "
        f"shop_revisioned BEGIN UPDATE shop_rowcount SET total = total {step} "
        "WHERE name = 'revisioned'; END"
        for event, step in (("INSERT", "+ 1"), ("DELETE", "- 1"))
    ],
    "postgresql": [
        "CREATE OR REPLACE FUNCTION count_revisioned() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN UPDATE shop_rowcount SET total = total + CASE TG_OP WHEN 'INSERT' THEN "
        "(SELECT count(*) FROM moved) ELSE -(SELECT count(*) FROM moved) END "
        "WHERE name = 'revisioned'; RETURN NULL; END $$",
        "CREATE TRIGGER revisioned_counted_insert AFTER INSERT ON shop_revisioned REFERENCING "
        "NEW TABLE AS moved FOR EACH STATEMENT EXECUTE FUNCTION count_revisioned()",
        "CREATE TRIGGER revisioned_counted_delete AFTER DELETE ON shop_revisioned REFERENCING "
        "OLD TABLE AS moved FOR EACH STATEMENT EXECUTE FUNCTION count_revisioned()",
    ],
}
DROPPED = [f"DROP TRIGGER IF EXISTS revisioned_counted_{e}" for e in ("insert", "delete")]


def _counted(cursor: Any, database: str) -> None:
    """The counter row, right, and its triggers (after the table is filled)."""
    on = "" if database == "sqlite" else " ON shop_revisioned"
    for drop in DROPPED:
        cursor.execute(drop + on)
    cursor.execute("DELETE FROM shop_rowcount WHERE name = 'revisioned'")
    cursor.execute(
        "INSERT INTO shop_rowcount VALUES ('revisioned', (SELECT count(*) FROM shop_revisioned))"
    )
    for statement in COUNTED[database]:
        cursor.execute(statement)


def _setup(rows: int, database: str) -> None:
    """Django on the test project's settings, on ``rows`` revisioned rows (built once)."""
    path = None
    if database == "sqlite":
        directory = Path(tempfile.gettempdir()) / "sitemap_middleware_bench"
        directory.mkdir(exist_ok=True)
        path = directory / f"django-revisioned-{rows}.sqlite3"
    django_on(path)
    from django.db import connection

    if path is not None:
        with sqlite3.connect(path) as conn:
            (have,) = conn.execute("SELECT count(*) FROM shop_revisioned").fetchone()
            for drop in DROPPED:  # (row triggers would make the refill quadratic)
                conn.execute(drop)
            if have != rows:
                conn.execute("DELETE FROM shop_revisioned")
                conn.executemany(
                    "INSERT INTO shop_revisioned (id, code, updated, revision) VALUES (?, ?, ?, ?)",
                    (
                        (i, f"product-{i}", (START + timedelta(seconds=i)).isoformat(" "), i)
                        for i in range(1, rows + 1)
                    ),
                )
            _counted(conn.cursor(), "sqlite")
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM shop_revisioned")
        if cursor.fetchone()[0] != rows:
            for drop in DROPPED:
                cursor.execute(drop + " ON shop_revisioned")
            cursor.execute("TRUNCATE shop_revisioned")
            cursor.execute(
                "INSERT INTO shop_revisioned (id, code, updated, revision) SELECT g, "
                "'product-' || g, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second',"
                " g FROM generate_series(1, %s) g",
                [rows],
            )
            cursor.execute("ANALYZE shop_revisioned")
        _counted(cursor, "postgresql")
    connection.close()


def run(rows: int, page: int, repeats: int, database: str) -> dict[str, Any]:
    _setup(rows, database)
    from django.contrib.sitemaps import Sitemap
    from django.db.models import Max

    from benchmarks.common import _home_asgi
    from benchmarks.run import asgi_get
    from sitemap_middleware import ASGISitemapMiddleware, Section
    from sitemap_middleware.django import DjangoQuerySetProvider, sitemap_config
    from tests.djangoproject.shop.models import Revisioned, RowCount

    class RevisionedSitemap(Sitemap):
        limit = page
        protocol = "https"

        def items(self) -> Any:
            return Revisioned.objects.order_by("pk")

        def location(self, item: Any) -> str:
            return TEMPLATE.format(code=item.code)

        def lastmod(self, item: Any) -> datetime:
            return item.updated

    def middleware(counted: bool = False) -> tuple[ASGISitemapMiddleware, DjangoQuerySetProvider]:
        provider = DjangoQuerySetProvider(
            Revisioned.objects.all(),
            lastmod="updated",
            location=TEMPLATE,
            version_field="revision",
            row_count=RowCount.objects.filter(name="revisioned").values("total")
            if counted
            else None,
        )
        sections = {"products": Section(provider, max_urls=page)}
        config = sitemap_config({}, base_url="https://example.com", sections=sections)
        return ASGISitemapMiddleware(_home_asgi, config=config), provider

    kept, provider = middleware()
    counted, counting = middleware(counted=True)
    index = "/sitemap_index.xml"
    first = asgi_get(kept, index)  # planned once: what the writes below start from
    asgi_get(counted, index)
    revision = Revisioned.objects.aggregate(top=Max("revision"))["top"]
    written = 0

    def after_write(
        app: ASGISitemapMiddleware, kept_provider: DjangoQuerySetProvider
    ) -> Callable[[], bytes]:
        """Writes one row (untimed), then returns the timed call: the kept index."""
        nonlocal revision, written
        written += 1
        revision += 1
        key = 1 + (written * 7919 * 127) % rows  # rows spread over the table
        Revisioned.objects.filter(pk=key).update(
            code=f"written-{written}-{key}",
            updated=START.replace(tzinfo=timezone.utc) + timedelta(days=999),
            revision=revision,
        )
        kept_provider.forget()
        return lambda: asgi_get(app, index)

    reference = "django.contrib.sitemaps index view"
    first_case = "ours: first index (new middleware, every range measured)"
    kept_case = "ours: index after one row's UPDATE (kept ranges, version_field)"
    counted_case = "ours: the same with row_count= (a count a trigger keeps)"
    cases: dict[str, Callable[[], Callable[[], object]]] = {
        reference: lambda: _django_view("index", {"products": RevisionedSitemap}),
        first_case: lambda: lambda: asgi_get(middleware()[0], index),
        kept_case: lambda: after_write(kept, provider),
        counted_case: lambda: after_write(counted, counting),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    bodies: dict[str, bytes] = {}
    for _ in range(repeats):
        for name, prepare in cases.items():
            call = prepare()
            started = time.perf_counter()
            body = call()
            times[name].append(time.perf_counter() - started)
            bodies[name] = body if isinstance(body, bytes) else b""
    assert bodies[kept_case].count(b"<sitemap>") == first.count(b"<sitemap>") >= rows // page
    assert bodies[counted_case].count(b"<sitemap>") == first.count(b"<sitemap>")
    results: dict[str, Any] = {"rows": rows, "page_size": page, "database": database}
    results["cases"] = [
        {
            "case": name,
            "seconds": statistics.median(spent),
            "x_django_in_round": statistics.median(
                mine / theirs for mine, theirs in zip(spent, times[reference], strict=True)
            ),
            "x_first_index_in_round": statistics.median(
                mine / theirs for mine, theirs in zip(spent, times[first_case], strict=True)
            ),
            "rounds": spent,
        }
        for name, spent in times.items()
    ]
    return results


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = django_arguments(__doc__).parse_args(argv)
    results = run(args.rows, args.page, args.repeats, args.database)
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return results


if __name__ == "__main__":
    main()
