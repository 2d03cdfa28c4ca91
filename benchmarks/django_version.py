"""The cost of DjangoQuerySetProvider's version query (issue #11 item 3).

``python -m benchmarks.django_version --rows 1000000 [--out result.json]``

One table of ``rows`` products (the test project's ``shop.Product``: id, slug,
updated_at), on SQLite (the file ``benchmarks/django_bench.py`` builds) and, when
``SITEMAP_TEST_POSTGRES_URL`` names a server, on PostgreSQL too. Medians of
``--repeats`` calls of ``version()`` with ``metadata_ttl=0`` (each call runs the query):

* ``checksum``: the default, count + max key + max lastmod + the row checksum over every
  concrete field (SQLite: the registered CRC-32 function; PostgreSQL: hashtextextended);
* ``checksum_slug``: ``checksum_fields=["slug"]`` (the key is always covered);
* ``count_max``: ``version_field="id"``, i.e. count and maxima only: the query the
  version was before the checksum (and what a revision column costs without an index).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import anyio

from benchmarks.django_bench import START, _database


def _setup(rows: int) -> list[str]:
    """Django on both databases, ``rows`` products in each; the aliases to measure."""
    path = _database(rows)
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.djangoproject.settings"
    os.environ["SITEMAP_DJANGO_DB"] = str(path)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    aliases = [alias for alias in ("default", "pg") if alias in settings.DATABASES]
    for alias in aliases:
        call_command("migrate", database=alias, verbosity=0)
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT count(*) FROM shop_product")
            if cursor.fetchone()[0] == rows:
                continue
            cursor.execute("DELETE FROM shop_product")
            if alias == "pg":
                cursor.execute(
                    "INSERT INTO shop_product (id, slug, updated_at) SELECT i, "
                    "'product-' || i, %s::timestamptz + i * interval '1 second' "
                    "FROM generate_series(1, %s) AS i",
                    [START.isoformat() + "+00:00", rows],
                )
                cursor.execute("ANALYZE shop_product")
            else:
                from datetime import timedelta

                cursor.executemany(
                    "INSERT INTO shop_product (id, slug, updated_at) VALUES (%s, %s, %s)",
                    [
                        (i, f"product-{i}", (START + timedelta(seconds=i)).isoformat(" "))
                        for i in range(1, rows + 1)
                    ],
                )
    connections.close_all()
    return aliases


def _median(provider: Any, repeats: int) -> float:
    anyio.run(provider.version)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        anyio.run(provider.version)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run(rows: int, repeats: int) -> dict[str, Any]:
    aliases = _setup(rows)
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Product

    cases: dict[str, dict[str, Any]] = {
        "checksum": {},
        "checksum_slug": {"checksum_fields": ["slug"]},
        "count_max": {"version_field": "id"},
    }
    results: list[dict[str, Any]] = []
    for alias in aliases:
        vendor = "sqlite" if alias == "default" else "postgresql"
        for case, kwargs in cases.items():
            provider = DjangoQuerySetProvider(
                Product.objects.using(alias), lastmod="updated_at", metadata_ttl=0, **kwargs
            )
            seconds = _median(provider, repeats)
            results.append({"database": vendor, "case": case, "seconds": round(seconds, 4)})
    for result in results:
        base = next(
            r["seconds"]
            for r in results
            if r["database"] == result["database"] and r["case"] == "count_max"
        )
        result["vs_count_max"] = round(result["seconds"] / base, 2)
    return {"rows": rows, "repeats": repeats, "results": results}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result = run(args.rows, args.repeats)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return result


if __name__ == "__main__":
    main()
