"""Issue #17's benchmark: the same Django models served by django.contrib.sitemaps and by us.

``python -m benchmarks.django_bench --rows 1000000 --page 50000 --out result.json``
(benchmarks/run.py runs it in a subprocess, because Django's settings are per process).

One table of ``rows`` products (the test project's ``shop.Product`` model, SQLite), one
``Sitemap`` class. Measured in process, medians of ``--repeats`` runs, with tracemalloc
peaks from a separate run:

* the floor: a raw ``sqlite3`` keyset read of the page plus the plain-Python join
  (``benchmarks/floor.py``), with the URL built by string formatting;
* Django's own ``sitemap`` view (template rendered) for page 1 and a far page;
* ``DjangoSitemapProvider`` around the very same ``Sitemap`` class;
* ``DjangoQuerySetProvider`` over the same table (keyset pages), with the default
  ``get_absolute_url()`` (a ``reverse()`` per row, as the Sitemap) and with the URL
  formatted as the floor formats it;
* the index of the whole table, by Django's ``index`` view and by both providers.
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

from benchmarks import floor

START = datetime(2024, 1, 1)


def _database(rows: int) -> Path:
    directory = Path(tempfile.gettempdir()) / "sitemap_middleware_bench"
    directory.mkdir(exist_ok=True)
    return directory / f"django-products-{rows}.sqlite3"


def _setup(path: Path, rows: int) -> None:
    """Django on the test project's settings, on a table of ``rows`` products (built once)."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.djangoproject.settings"
    os.environ["SITEMAP_DJANGO_DB"] = str(path)
    os.environ.pop("SITEMAP_TEST_POSTGRES_URL", None)  # SQLite only: one database here
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
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


def _floor(path: Path, first_key: int, page: int) -> Callable[[], bytes]:
    """Raw sqlite3 keyset read of one page plus the plain-Python join: nothing to spare."""

    def call() -> bytes:
        with sqlite3.connect(path) as conn:
            rows = conn.execute(
                "SELECT slug, updated_at FROM shop_product WHERE id >= ? ORDER BY id LIMIT ?",
                (first_key, page),
            ).fetchall()
        items = [
            {
                "loc": f"https://example.com/products/{slug}/",
                "lastmod": updated.replace(" ", "T") + "+00:00",
                "changefreq": "daily",
                "priority": 0.5,
            }
            for slug, updated in rows
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


def run(rows: int, page: int, repeats: int) -> dict[str, Any]:
    path = _database(rows)
    _setup(path, rows)
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
            "floor (sqlite3 + plain join)": _floor(path, (number - 1) * page + 1, page),
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
    results: dict[str, Any] = {"rows": rows, "page_size": page, "pages": far, "cases": []}
    for label, cases in pages.items():
        number = int(label.split()[1])
        for name, call in cases.items():
            body = call()
            # Key-range pages keep 1 % headroom for rows inserted during a crawl.
            size = page - page // 100 if "QuerySetProvider" in name else page
            expected = min(size, rows - (number - 1) * size)
            assert isinstance(body, bytes) and body.count(b"<url>") == expected, name
            app = drains.get(name)
            results["cases"].append(
                {
                    "document": label,
                    "case": name,
                    "seconds": _median(call, repeats),
                    "bytes": len(body),
                    "traced_peak_kib": _peak_kib(
                        partial(asgi_drain, app, f"/sitemap-products-{number}.xml") if app else call
                    ),
                }
            )
    index_cases: dict[str, tuple[Callable[[], object], int]] = {
        "django.contrib.sitemaps index view": (
            _django_view("index", {"products": sitemap}),
            1,
        ),
        "ours: DjangoSitemapProvider (get_latest_lastmod, as Django)": (
            partial(asgi_get, adapter, "/sitemap_index.xml"),
            1,
        ),
        "ours: DjangoQuerySetProvider (page plan cached)": (
            partial(asgi_get, keyset, "/sitemap_index.xml"),
            repeats,
        ),
    }

    def cold_index(location: Any) -> bytes:
        """A first index: a new provider and middleware, so the plan is measured."""
        provider = DjangoQuerySetProvider(
            Product.objects.all(),
            lastmod="updated_at",
            changefreq="daily",
            priority=0.5,
            location=location,
        )
        config = sitemap_config(
            {},
            base_url="https://example.com",
            sections={"products": Section(provider, max_urls=page)},
        )
        return asgi_get(ASGISitemapMiddleware(_home_asgi, config=config), "/sitemap_index.xml")

    index_cases["ours: DjangoQuerySetProvider, first index, location formatted"] = (
        partial(cold_index, lambda product: f"/products/{product.slug}/"),
        1,
    )
    index_cases["ours: DjangoQuerySetProvider, first index, location template (values)"] = (
        partial(cold_index, "/products/{slug}/"),
        1,
    )
    for name, (call, times) in index_cases.items():
        results["cases"].append(
            {"document": "index", "case": name, "seconds": _median(call, times), "bytes": 0}
        )
    return results


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--page", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    results = run(args.rows, args.page, args.repeats)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    else:
        print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
