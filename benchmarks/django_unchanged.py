"""A Django QuerySet section revalidated past ``metadata_ttl`` while nothing was committed.

``python -m benchmarks.django_unchanged --rows 1000000 --database sqlite [--out r.json]``

The table of ``benchmarks/django_bench.py`` (``shop.Product``, built once), served by
``DjangoQuerySetProvider`` with the default row checksum and ``metadata_ttl=0`` (every
request is past it), its URLs from ``get_absolute_url()`` or from a location template: a
client holding the ETag of the index (validated by the section's version: a checksum of
every row) and of page 1 (a key range: its rows' checksum) asks again
(``If-None-Match``: 304). Each is timed in alternation, one round after another, with the same request to
the same kind of provider with the version reuse switched off (every check reads the
rows, as before it existed): ``x_read_every_time`` is the ratio of the medians.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import anyio

from benchmarks.django_bench import _setup, django_arguments

__all__ = ["main", "run"]


def _core(location: str | None, page: int, reuse: bool) -> Any:
    from sitemap_middleware import Section
    from sitemap_middleware._engine.core import SitemapCore
    from sitemap_middleware.django import DjangoQuerySetProvider, sitemap_config
    from tests.djangoproject.shop.models import Product

    provider = DjangoQuerySetProvider(
        Product.objects.all(), lastmod="updated_at", location=location, metadata_ttl=0
    )
    if not reuse:  # the check as it was: no signal, the aggregate every time
        commits = provider._versions.commits
        commits._signal, commits._resolved = None, True
    sections = {"products": Section(provider, max_urls=page)}
    return SitemapCore(sitemap_config({}, base_url="https://example.com", sections=sections))


def _get(core: Any, path: str, **headers: str) -> tuple[int, str, bytes]:
    """Status, ETag and body of one request answered by the core in process."""
    from sitemap_middleware._engine.core import RequestInfo

    async def answer() -> tuple[int, str, bytes]:
        request = RequestInfo("GET", path, {k.replace("_", "-"): v for k, v in headers.items()})
        reply = await core.respond(core.route(request), request)
        body = b"".join([chunk async for chunk in reply.body]) if reply.body else b""
        etag = next((value for key, value in reply.headers if key.lower() == "etag"), "")
        return reply.status, etag, body

    return anyio.run(answer)


def _revalidation(core: Any, path: str) -> Callable[[], None]:
    """``path`` asked again with the ETag it answered with: must be a 304."""
    status, etag, _ = _get(core, path)
    assert status == 200, (path, status)

    def call() -> None:
        assert _get(core, path, if_none_match=etag)[0] == 304, path

    return call


def _paths(core: Any) -> list[str]:
    """The index and its first page (a key-range page: validated by its own rows)."""
    from lxml import etree

    _, _, index = _get(core, "/sitemap_index.xml")
    first = etree.fromstring(index).findtext("{*}sitemap/{*}loc") or ""
    return ["/sitemap_index.xml", first.removeprefix("https://example.com")]


def run(rows: int, page: int, repeats: int, database: str) -> dict[str, Any]:
    _setup(rows, database)
    cases: list[dict[str, Any]] = []
    for name, location in (("get_absolute_url()", None), ("template", "/products/{slug}/")):
        cores = {reuse: _core(location, page, reuse) for reuse in (False, True)}
        for path in _paths(cores[True]):
            calls = {reuse: _revalidation(core, path) for reuse, core in cores.items()}
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(repeats):  # in alternation: the reference, then the reuse
                for reuse in (False, True):
                    started = time.perf_counter()
                    calls[reuse]()
                    times[reuse].append(time.perf_counter() - started)
            before, after = (statistics.median(times[reuse]) for reuse in (False, True))
            document = "index" if path == "/sitemap_index.xml" else "page 1"
            cases.append(
                {
                    "case": f"{document} 304, location {name}",
                    "read_every_time_seconds": before,
                    "nothing_committed_seconds": after,
                    "x_read_every_time": after / before,
                }
            )
    return {"rows": rows, "page_size": page, "database": database, "cases": cases}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = django_arguments(__doc__).parse_args(argv)
    results = run(args.rows, args.page, args.repeats, args.database)
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text)
    print(text)
    return results


if __name__ == "__main__":
    main()
