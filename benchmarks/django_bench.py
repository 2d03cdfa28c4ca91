"""Issues #17 and #23: the same Django models served by django.contrib.sitemaps and by us.

``python -m benchmarks.django_bench --rows 1000000 --page 50000 --database postgresql
--out result.json`` (benchmarks/run.py runs it in a subprocess, because Django's settings
are per process).

One table of ``rows`` products (the test project's ``shop.Product`` model) on SQLite
(cached under the temporary folder) or PostgreSQL (``SITEMAP_TEST_POSTGRES_URL``'s
server, database ``<name>_django_bench``, filled once), one ``Sitemap`` class. Measured
in process, medians of ``--repeats`` runs, with tracemalloc peaks from a separate run:

* the floor: a raw cursor keyset read of the page plus the plain-Python join
  (``benchmarks/floor.py``), with the URL built by string formatting;
* Django's own ``sitemap`` view (template rendered) for page 1 and a far page;
* ``DjangoSitemapProvider`` around the very same ``Sitemap`` class;
* ``DjangoQuerySetProvider`` over the same table (keyset pages), with the default
  ``get_absolute_url()`` (a ``reverse()`` per row, as the Sitemap) and with the URL
  formatted as the floor formats it;
* the index of the whole table: Django's ``index`` view (and the same view with
  ``get_latest_lastmod()`` as one aggregate, what a tuned site writes) beside the *first*
  index of each provider (a new middleware each time: nothing planned), timed in
  alternation, one round after another, as ratios to Django's view in the same round.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from benchmarks import floor
from benchmarks.django_tables import markdown

START = datetime(2024, 1, 1)


def _database(rows: int) -> Path:
    directory = Path(tempfile.gettempdir()) / "sitemap_middleware_bench"
    directory.mkdir(exist_ok=True)
    return directory / f"django-products-{rows}.sqlite3"


def _postgres_url() -> str:
    """The benchmark's own database on the test server (created once): the tests'
    database keeps its few rows."""
    import psycopg

    url = os.environ.get("SITEMAP_TEST_POSTGRES_URL")
    if not url:
        raise SystemExit("--database postgresql needs SITEMAP_TEST_POSTGRES_URL")
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_django_bench"
    server = urlunsplit(("postgresql", parts.netloc, "/postgres", "", ""))
    with psycopg.connect(server, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))


def django_on(path: Path | None) -> None:
    """Django set up on the test project's settings and migrated, on the SQLite file
    ``path`` or (None) the benchmark's own PostgreSQL database."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.djangoproject.settings"
    if path is None:
        os.environ["SITEMAP_TEST_POSTGRES_URL"] = _postgres_url()
        os.environ["SITEMAP_DJANGO_DB"] = "postgres"
    else:
        os.environ["SITEMAP_DJANGO_DB"] = str(path)
        os.environ.pop("SITEMAP_TEST_POSTGRES_URL", None)  # one database here
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _setup(rows: int, database: str) -> Path | None:
    """Django on the test project's settings, on a table of ``rows`` products (built
    once); the SQLite file, if SQLite."""
    path = _database(rows) if database == "sqlite" else None
    django_on(path)
    from django.db import connection

    if path is not None:
        with sqlite3.connect(path) as conn:
            (have,) = conn.execute("SELECT count(*) FROM shop_product").fetchone()
            if have != rows:
                conn.execute("DELETE FROM shop_product")
                conn.executemany(
                    "INSERT INTO shop_product (id, slug, updated_at) VALUES (?, ?, ?)",
                    (
                        (i, f"product-{i}", (START + timedelta(seconds=i)).isoformat(" "))
                        for i in range(1, rows + 1)
                    ),
                )
        return path
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM shop_product")
        if cursor.fetchone()[0] != rows:
            cursor.execute("TRUNCATE shop_product")
            cursor.execute(
                "INSERT INTO shop_product (id, slug, updated_at) SELECT g, 'product-' || g, "
                "timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second' "
                "FROM generate_series(1, %s) g",
                [rows],
            )
            cursor.execute("ANALYZE shop_product")
    connection.close()
    return None


def _sitemap_class(page: int) -> Any:
    from django.contrib.sitemaps import Sitemap

    from tests.djangoproject.shop.models import Product

    class ProductSitemap(Sitemap):
        limit = page
        changefreq = "daily"
        priority = 0.5
        protocol = "https"

        def items(self) -> Any:
            return Product.objects.order_by("pk")

        def lastmod(self, obj: Any) -> datetime:
            return obj.updated_at

    return ProductSitemap


def _django_view(name: str, sitemaps: dict[str, Any], **query: str) -> Callable[[], bytes]:
    from django.contrib.sitemaps import views
    from django.test import RequestFactory

    request = RequestFactory(HTTP_HOST="example.com").get("/django/sitemap.xml", query)
    view = getattr(views, name)
    kwargs = {"section": "products"} if name == "sitemap" else {}

    def call() -> bytes:
        response = view(request, sitemaps=sitemaps, **kwargs)
        response.render()
        return bytes(response.content)

    return call


def _floor(path: Path | None, first_key: int, page: int) -> Callable[[], bytes]:
    """A raw cursor's keyset read of one page plus the plain-Python join: nothing to spare
    (sqlite3, or Django's PostgreSQL connection)."""
    sql = "SELECT slug, updated_at FROM shop_product WHERE id >= %s ORDER BY id LIMIT %s"

    def read() -> list[tuple[str, Any]]:
        if path is not None:
            with sqlite3.connect(path) as conn:
                return conn.execute(sql.replace("%s", "?"), (first_key, page)).fetchall()
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(sql, [first_key, page])
            return list(cursor.fetchall())

    def call() -> bytes:
        items = [
            {
                "loc": f"https://example.com/products/{slug}/",
                "lastmod": updated.replace(" ", "T") + "+00:00"
                if isinstance(updated, str)
                else updated.isoformat(),
                "changefreq": "daily",
                "priority": 0.5,
            }
            for slug, updated in read()
        ]
        return floor.render(items).encode()

    return call


def _median(call: Callable[[], object], repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _peak_kib(call: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] // 1024
    finally:
        tracemalloc.stop()


def run(
    rows: int,
    page: int,
    repeats: int,
    database: str = "sqlite",
    pages_too: bool = True,
    pages_only: bool = False,
) -> dict[str, Any]:
    path = _setup(rows, database)
    from benchmarks.common import _home_asgi
    from benchmarks.run import asgi_drain, asgi_get
    from sitemap_middleware import ASGISitemapMiddleware, Section
    from sitemap_middleware.django import DjangoQuerySetProvider, sitemap_config
    from tests.djangoproject.shop.models import Product

    sitemap = _sitemap_class(page)
    adapter = ASGISitemapMiddleware(
        _home_asgi, config=sitemap_config({"products": sitemap}, base_url="https://example.com")
    )
    queryset = DjangoQuerySetProvider(
        Product.objects.all(), lastmod="updated_at", changefreq="daily", priority=0.5
    )
    keyset = ASGISitemapMiddleware(
        _home_asgi,
        config=sitemap_config(
            {},
            base_url="https://example.com",
            sections={"products": Section(queryset, max_urls=page)},
        ),
    )
    # The same, with the URL formatted as the floor does instead of reverse() per row.
    formatted = DjangoQuerySetProvider(
        Product.objects.all(),
        lastmod="updated_at",
        changefreq="daily",
        priority=0.5,
        location=lambda product: f"/products/{product.slug}/",
    )
    keyset_formatted = ASGISitemapMiddleware(
        _home_asgi,
        config=sitemap_config(
            {},
            base_url="https://example.com",
            sections={"products": Section(formatted, max_urls=page)},
        ),
    )
    # The same URL from a location template: values, no model instance per row.
    templated = DjangoQuerySetProvider(
        Product.objects.all(),
        lastmod="updated_at",
        changefreq="daily",
        priority=0.5,
        location="/products/{slug}/",
    )
    keyset_templated = ASGISitemapMiddleware(
        _home_asgi,
        config=sitemap_config(
            {},
            base_url="https://example.com",
            sections={"products": Section(templated, max_urls=page)},
        ),
    )
    far = -(-rows // page)
    pages: dict[str, dict[str, Callable[[], object]]] = {}
    for number in sorted({1, min(20, far)}):
        ours = f"/sitemap-products-{number}.xml"
        pages[f"page {number}"] = {
            "floor (raw cursor + plain join)": _floor(path, (number - 1) * page + 1, page),
            "django.contrib.sitemaps view": _django_view(
                "sitemap", {"products": sitemap}, p=str(number)
            ),
            "ours: DjangoSitemapProvider (same Sitemap class)": partial(asgi_get, adapter, ours),
            "ours: DjangoQuerySetProvider (keyset)": partial(asgi_get, keyset, ours),
            "ours: DjangoQuerySetProvider, location formatted (no reverse())": partial(
                asgi_get, keyset_formatted, ours
            ),
            "ours: DjangoQuerySetProvider, location template (values)": partial(
                asgi_get, keyset_templated, ours
            ),
        }
    drains: dict[str, Any] = {
        "ours: DjangoSitemapProvider (same Sitemap class)": adapter,
        "ours: DjangoQuerySetProvider (keyset)": keyset,
        "ours: DjangoQuerySetProvider, location formatted (no reverse())": keyset_formatted,
        "ours: DjangoQuerySetProvider, location template (values)": keyset_templated,
    }
    results: dict[str, Any] = {"rows": rows, "page_size": page, "pages": far}
    results.update(database=database, cases=[])
    for label, cases in pages.items() if pages_too else ():
        number = int(label.split()[1])
        for name, call in cases.items():
            started = time.perf_counter()
            body = call()  # ours: rendered, then kept in the render store (later: a 304-cheap
            first = time.perf_counter() - started  # version check and the stored bytes)
            # Key-range pages keep 1 % headroom for rows inserted during a crawl.
            size = page - page // 100 if "QuerySetProvider" in name else page
            expected = min(size, rows - (number - 1) * size)
            assert isinstance(body, bytes) and body.count(b"<url>") == expected, name
            app = drains.get(name)
            results["cases"].append(
                {
                    "document": label,
                    "case": name,
                    "first_seconds": first,
                    "seconds": _median(call, repeats),
                    "bytes": len(body),
                    "traced_peak_kib": _peak_kib(
                        partial(asgi_drain, app, f"/sitemap-products-{number}.xml") if app else call
                    ),
                }
            )
    results["cases"].append(
        {
            "document": "index",
            "case": "ours: DjangoQuerySetProvider, location template (page plan cached)",
            "seconds": _median(partial(asgi_get, keyset_templated, "/sitemap_index.xml"), repeats),
            "bytes": 0,
        }
    )
    if not pages_only:
        results["cases"].extend(_first_indexes(sitemap, page, repeats))
    return results


def _first_indexes(sitemap: Any, page: int, repeats: int) -> list[dict[str, Any]]:
    """Django's index view and each provider's first index (a new middleware: nothing
    planned), timed in alternation, round after round; each ratio is to Django's view
    in the same round, and the figures are medians over the rounds."""
    from benchmarks.common import _home_asgi
    from benchmarks.run import asgi_get
    from sitemap_middleware import ASGISitemapMiddleware, Section
    from sitemap_middleware.django import DjangoQuerySetProvider, sitemap_config
    from tests.djangoproject.shop.models import Product

    def first_index(sitemaps: dict[str, Any], provider: Any = None) -> bytes:
        sections = {} if provider is None else {"products": Section(provider, max_urls=page)}
        config = sitemap_config(sitemaps, base_url="https://example.com", sections=sections)
        return asgi_get(ASGISitemapMiddleware(_home_asgi, config=config), "/sitemap_index.xml")

    def queryset(location: Any) -> Callable[[], bytes]:
        def call() -> bytes:
            provider = DjangoQuerySetProvider(
                Product.objects.all(),
                lastmod="updated_at",
                changefreq="daily",
                priority=0.5,
                location=location,
            )
            return first_index({}, provider)

        return call

    class Aggregated(sitemap):
        def get_latest_lastmod(self) -> Any:
            from django.db.models import Max

            return Product.objects.aggregate(latest=Max("updated_at"))["latest"]

    class Templated(sitemap):
        """The same Sitemap declaring its URLs as a template of fields (documented rule)."""

        location_template = "/products/{slug}/"
        lastmod_field = "updated_at"

    class Keyed(sitemap):
        """The same Sitemap keeping its location(), declaring key_ranges (documented rule)."""

        key_ranges = True
        lastmod_field = "updated_at"

    reference = "django.contrib.sitemaps index view"
    cases: dict[str, Callable[[], object]] = {
        reference: _django_view("index", {"products": sitemap}),
        "django.contrib.sitemaps index view, get_latest_lastmod() one aggregate": _django_view(
            "index", {"products": Aggregated}
        ),
        "ours: DjangoSitemapProvider, first index (same Sitemap class)": partial(
            first_index, {"products": sitemap}
        ),
        "ours: the same Sitemap declaring location_template, first index": partial(
            first_index, {"products": Templated}
        ),
        "ours: the same Sitemap declaring key_ranges (its location() kept), first index": (
            partial(first_index, {"products": Keyed})
        ),
        "ours: DjangoQuerySetProvider, first index, location template (values)": queryset(
            "/products/{slug}/"
        ),
        "ours: DjangoQuerySetProvider, first index, location function": queryset(
            lambda product: f"/products/{product.slug}/"
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, call in cases.items():
            started = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - started)
    return [
        {
            "document": "index",
            "case": name,
            "seconds": statistics.median(spent),
            "bytes": 0,
            "x_django_in_round": statistics.median(
                mine / theirs for mine, theirs in zip(spent, times[reference], strict=True)
            ),
            "rounds": spent,
        }
        for name, spent in times.items()
    ]


def django_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The options every Django benchmark takes: rows, page size, repeats, database, JSON."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--page", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--out", type=Path)
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = django_arguments(__doc__)
    parser.add_argument("--index-only", action="store_true", help="first indexes alone")
    parser.add_argument("--pages-only", action="store_true", help="pages alone")
    parser.add_argument("--table", type=Path, nargs="+", help="print README tables of runs")
    args = parser.parse_args(argv)
    if args.table:
        runs = [json.loads(path.read_text()) for path in args.table]
        print(markdown(runs))
        return {"runs": runs}
    results = run(
        args.rows, args.page, args.repeats, args.database, not args.index_only, args.pages_only
    )
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    else:
        print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
