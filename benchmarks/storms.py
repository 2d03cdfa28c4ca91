"""Crawl-storm benchmarks (issue #13): ``python -m benchmarks.storms [--smoke] [--out DIR]``.

Provider = a plain generator function of dicts (no count, no version: the case where
the engine must do all the work), workload as the floor's (50,000 URLs with ``&`` to
escape, lastmod, changefreq, priority). Every figure is a median of 9 in this one run,
and each ratio is to the floor (or one request) timed in alternation with that very case,
round by round: the machine is shared, and drift then slows both sides alike.
Both adapters run in process. Results go to ``benchmarks/results/storms.{md,json}``
(``--smoke``: tiny sizes, one repeat, ``storms-smoke.*``; ``--out`` another directory).

- a SQL page deep in a 1,000,000-row SQLite table (the column mode and ``to_entry``),
  against fetching its rows with the same driver plus the floor;

- a section page, ``/sitemap.xml``, the first index (a new app each time) and a repeated
  index (the same app);
- a storm: 20 concurrent cold requests for one page (a new app each round): provider
  passes and total time against one cold request; each storm response is counted as it
  streams (as a server writes it out) and checked whole and alike, on both adapters;
- the same storm over loopback HTTP (uvicorn, werkzeug): time and server RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx

from benchmarks import common, floor
from benchmarks.run import RESULTS, asgi_get, asgi_request, median_seconds, wsgi_call
from benchmarks.server import running

PAGE = "/sitemap-products-1.xml"


class Passes:
    """A generator-of-dicts provider factory (a cursor over rows) that counts its passes.

    The dicts are built once, as a database driver hands over rows it already holds: what
    is timed is our work on them, as the floor times its own.
    """

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.count = 0

    def __call__(self) -> Iterator[dict[str, Any]]:
        self.count += 1
        yield from self.items


def _config(provider: Passes) -> Any:
    from sitemap_middleware import SitemapConfig

    return SitemapConfig(base_url=common.BASE_URL, sections={"products": provider})


def _asgi(provider: Passes) -> Any:
    from sitemap_middleware import ASGISitemapMiddleware

    return ASGISitemapMiddleware(common._home_asgi, config=_config(provider))


def _wsgi(provider: Passes) -> Any:
    from sitemap_middleware import WSGISitemapMiddleware

    return WSGISitemapMiddleware(common._home_wsgi, config=_config(provider))


def _asgi_storm(app: Any, path: str, k: int) -> None:
    sizes: list[int] = []

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(k):
                group.start_soon(_one, app, path, sizes)

    anyio.run(main)
    _check_sizes(sizes, k)


def _check_sizes(sizes: list[int], k: int) -> None:
    """Every response of the storm arrived, whole and alike."""
    assert len(sizes) == k and len(set(sizes)) == 1 and sizes[0] > 0, sizes


async def _one(app: Any, path: str, sizes: list[int]) -> None:
    # asgi_get runs its own loop; here every request shares this one, as under uvicorn.
    size = 0

    def count(chunk: bytes) -> None:
        nonlocal size
        size += len(chunk)

    await asgi_request(app, path, on_chunk=count)
    sizes.append(size)


def _wsgi_storm(app: Any, path: str, k: int) -> None:
    with ThreadPoolExecutor(k) as pool:
        sizes = list(pool.map(lambda _: _wsgi_count(app, path), range(k)))
    _check_sizes(sizes, k)


def _wsgi_count(app: Any, path: str) -> int:
    """One storm request, its body counted chunk by chunk as the ASGI storm's ``send``
    counts it (a server writes each chunk out): twenty joined copies of the page kept
    at once would time the client's memory, not the middleware."""
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "example.com",
        "SERVER_PORT": "80",
        "HTTP_HOST": "example.com",
        "wsgi.url_scheme": "http",
        "SERVER_PROTOCOL": "HTTP/1.1",
    }
    body = app(environ, lambda status, headers, exc_info=None: None)
    try:
        return sum(len(chunk) for chunk in body)
    finally:
        body.close()


def paired(
    call: Callable[[], object], reference: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """Medians of ``call`` and ``reference`` timed in alternation, round by round: a busy
    moment on the shared machine slows both, so their ratio holds."""
    call()
    reference()  # warm-up
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        reference()
        theirs.append(time.perf_counter() - started)
        started = time.perf_counter()
        call()
        ours.append(time.perf_counter() - started)
    return statistics.median(ours), statistics.median(theirs)


def in_process(n: int, repeats: int, storm: int) -> list[dict[str, Any]]:
    raw = common.raw_items(n)
    rows: list[dict[str, Any]] = []

    def render_floor() -> bytes:
        return floor.render(raw).encode()

    floor_s = median_seconds(render_floor, repeats)
    rows.append({"case": "floor (plain Python join)", "seconds": floor_s, "x_floor": 1.0})
    for flavour, make, get, storm_call in (
        ("ASGI", _asgi, asgi_get, _asgi_storm),
        ("WSGI", _wsgi, wsgi_call, _wsgi_storm),
    ):

        def case(
            name: str, call: Callable[[], object], flavour: str = flavour, **extra: Any
        ) -> None:
            seconds, floor_round = paired(call, render_floor, repeats)
            row = {
                "case": f"{flavour}: {name}",
                "seconds": seconds,
                "x_floor": seconds / floor_round,
                "floor_seconds": floor_round,
            }
            rows.append({**row, **extra})

        shared = make(Passes(raw))
        case("section page, generator of dicts", lambda: get(shared, PAGE))  # noqa: B023
        case("/sitemap.xml, generator of dicts", lambda: get(shared, "/sitemap.xml"))  # noqa: B023
        case(
            "first /sitemap_index.xml (new app)",
            lambda: get(make(Passes(raw)), "/sitemap_index.xml"),  # noqa: B023
        )
        get(shared, "/sitemap_index.xml")
        case("repeated /sitemap_index.xml", lambda: get(shared, "/sitemap_index.xml"))  # noqa: B023
        passes: list[int] = []

        def burst(passes: list[int] = passes) -> None:
            provider = Passes(raw)
            storm_call(make(provider), PAGE, storm)  # noqa: B023
            passes.append(provider.count)

        def one_request() -> None:
            get(make(Passes(raw)), PAGE)  # noqa: B023

        many, one = paired(burst, one_request, repeats)
        case(
            f"{storm} concurrent cold requests for one page",
            burst,
            x_one_request=many / one,
            one_request_seconds=one,
            provider_passes=max(passes),
        )
    return rows


def _sql_provider(engine: Any, columns: bool, metadata_ttl: float = 3600) -> Any:
    """``SQLAlchemyProvider`` over the scale benchmark's table, the floor's fields (a URL
    with ``&`` to escape, lastmod, changefreq, priority): the column mode (``location=``
    a template, no object or call per row) or ``to_entry`` returning a mapping."""
    from sqlalchemy import Column, DateTime, Integer, MetaData, Table

    from sitemap_middleware.providers import SQLAlchemyProvider

    table = Table(
        "products",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("updated_at", DateTime),
    )
    common_args: dict[str, Any] = {
        "key": "id",
        "lastmod": "updated_at",
        # The version (a checksum of every row) is not what is timed here.
        "metadata_ttl": metadata_ttl,
    }
    if columns:
        return SQLAlchemyProvider(
            engine,
            table,
            location="/products/{id}?ref=a&b={id}",
            changefreq="daily",
            priority=0.5,
            **common_args,
        )
    return SQLAlchemyProvider(
        engine,
        table,
        to_entry=lambda row: {
            "loc": f"/products/{row.id}?ref=a&b={row.id}",
            "lastmod": row.updated_at,
            "changefreq": "daily",
            "priority": 0.5,
        },
        **common_args,
    )


def _sql_config(engine: Any, columns: bool, page_size: int) -> Any:
    from sitemap_middleware import Renders, SitemapConfig

    return SitemapConfig(
        base_url=common.BASE_URL,
        sections={"products": _sql_provider(engine, columns)},
        max_urls_per_page=page_size,
        renders=Renders(memory_bytes=0),  # each request renders: stored bytes are not timed
    )


async def _asgi_body(app: Any, path: str) -> bytes:
    chunks: list[bytes] = []
    await asgi_request(app, path, on_chunk=chunks.append)
    return b"".join(chunks)


def _on(loop: Any, app: Any, target: str) -> Callable[[], bytes]:
    return lambda: loop.call(_asgi_body, app, target)


def _wsgi_get(app: Any, target: str) -> Callable[[], bytes]:
    return lambda: wsgi_call(app, target)


def sql_page(rows: int, repeats: int) -> list[dict[str, Any]]:
    """A page deep in a big SQLite table against (fetching its rows + the floor).

    As under a server, one event loop serves every request and the engine keeps its
    connection pool: ASGI requests run on one long-lived loop (as uvicorn's), WSGI ones
    on the middleware's own loop thread. The reference fetches the page's rows with the
    same driver (SQLAlchemy + aiosqlite, one keyset query, untyped: the timestamps stay
    strings) and adds the floor's time for as many URLs.
    """
    import tempfile

    from anyio.from_thread import start_blocking_portal
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    from benchmarks.scale import build_table
    from sitemap_middleware import ASGISitemapMiddleware, WSGISitemapMiddleware
    from sitemap_middleware._adapters.portal import get_portal

    page_size = min(50_000, rows // 2)
    directory = Path(tempfile.gettempdir()) / "sitemap_middleware_bench"
    directory.mkdir(exist_ok=True)
    path = directory / f"products-{rows}.sqlite3"
    build_table(path, rows)
    url = f"sqlite+aiosqlite:///{path}"
    # Key-range pages keep 1 % headroom for rows inserted during a crawl.
    per_page = page_size - page_size // 100
    page = min(20, rows // per_page)  # a full page, deep in the table
    target = f"/sitemap-products-{page}.xml"
    after = (page - 1) * per_page
    raw = common.raw_items(per_page)
    out: list[dict[str, Any]] = []
    with start_blocking_portal() as loop:  # the ASGI server's loop
        engine = create_async_engine(url)

        async def fetch() -> None:
            async with engine.connect() as conn:
                query = "SELECT id, updated_at FROM products WHERE id > :a ORDER BY id LIMIT :n"
                found = (await conn.execute(text(query), {"a": after, "n": per_page})).all()
            assert len(found) == per_page

        fetch_s = median_seconds(lambda: loop.call(fetch), repeats)
        floor_s = median_seconds(lambda: floor.render(raw).encode(), repeats)
        reference = fetch_s + floor_s
        out.append(
            {
                "case": f"SQL reference: fetch {per_page:,} rows + floor",
                "seconds": reference,
                "x_floor": 1.0,
                "fetch_seconds": fetch_s,
                "floor_seconds": floor_s,
            }
        )
        cases: list[tuple[str, Callable[[], bytes]]] = []
        wsgi_engines = []  # pooled on the WSGI middleware's loop, disposed there
        for columns, label in ((True, "location= columns"), (False, "to_entry a mapping")):
            asgi = ASGISitemapMiddleware(
                common._home_asgi, config=_sql_config(engine, columns, page_size)
            )
            wsgi_engines.append(create_async_engine(url))
            wsgi = WSGISitemapMiddleware(
                common._home_wsgi, config=_sql_config(wsgi_engines[-1], columns, page_size)
            )
            cases.append(
                (f"ASGI: SQL page {page} of {rows:,} rows ({label})", _on(loop, asgi, target))
            )
            cases.append(
                (f"WSGI: SQL page {page} of {rows:,} rows ({label})", _wsgi_get(wsgi, target))
            )

        def fetch_and_floor() -> None:
            loop.call(fetch)
            floor.render(raw).encode()

        for name, get in cases:
            body = get()
            assert body.count(b"<url>") == per_page, body[-300:]
            seconds, reference_round = paired(get, fetch_and_floor, repeats)
            out.append(
                {
                    "case": name,
                    "seconds": seconds,
                    "x_floor": seconds / reference_round,
                    "reference_seconds": reference_round,
                }
            )
        loop.call(engine.dispose)
        for wsgi_engine in wsgi_engines:
            get_portal().call(wsgi_engine.dispose)
    return out


def over_http(n: int, repeats: int, storm: int) -> list[dict[str, Any]]:
    """The storm against real servers (stored renders off: every burst is cold)."""
    rows = []
    for kind, name in (("asgi", "uvicorn"), ("wsgi", "werkzeug")):
        env = {"SITEMAP_BENCH_STORE_BYTES": "0"}
        with running(kind, n, env=env) as server, httpx.Client(timeout=120) as client:
            url = server.url + PAGE

            async def burst(url: str = url) -> None:
                async with httpx.AsyncClient(timeout=120) as aclient:
                    await asyncio.gather(*(aclient.get(url) for _ in range(storm)))

            client.get(url)
            one = median_seconds(lambda: client.get(url), repeats)  # noqa: B023
            before = common.rss_kib(server.pid)
            many = median_seconds(lambda: asyncio.run(burst()), repeats)
            after = json.loads(client.get(server.url + "/__memory").content)["rss_kib"]
            rows.append(
                {
                    "case": f"{name}: {storm} concurrent cold requests",
                    "seconds": many,
                    "x_one_request": many / one,
                    "server_rss_mib_before": before / 1024,
                    "server_rss_mib_after": after / 1024,
                    "server_peak_rss_mib": common.peak_rss_kib(server.pid) / 1024,
                }
            )
    return rows


def report(results: dict[str, Any]) -> str:
    title = f"## Crawl storms (generator of dicts, {results.get('urls', 50_000):,} URLs)\n"
    if results.get("smoke"):
        title += "\nSmoke run: tiny sizes, one repeat; it checks the benchmark runs, ratios mean nothing.\n"
    lines = [
        title,
        "| case | median | x floor | x one request | provider passes |",
        "|---|---|---|---|---|",
    ]
    for row in results["in_process"]:
        x_one = row.get("x_one_request")
        lines.append(
            f"| {row['case']} | {row['seconds'] * 1000:.1f} ms | {row['x_floor']:.2f} | "
            f"{'' if x_one is None else f'{x_one:.2f}'} | {row.get('provider_passes', '')} |"
        )
    lines += [
        "",
        "| SQL (SQLite, aiosqlite; one loop, pooled engine) | median | x (fetch rows + floor) |",
        "|---|---|---|",
    ]
    for row in results["sql"]:
        lines.append(f"| {row['case']} | {row['seconds'] * 1000:.1f} ms | {row['x_floor']:.2f} |")
    lines += [
        "",
        "| over HTTP | median | x one request | server RSS before / after / peak |",
        "|---|---|---|---|",
    ]
    for row in results["over_http"]:
        lines.append(
            f"| {row['case']} | {row['seconds'] * 1000:.0f} ms | {row['x_one_request']:.2f} | "
            f"{row['server_rss_mib_before']:.0f} / {row['server_rss_mib_after']:.0f} / "
            f"{row['server_peak_rss_mib']:.0f} MiB |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    n, repeats, storm = (500, 1, 4) if args.smoke else (50_000, 9, 20)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "in_process": in_process(n, repeats, storm),
        "sql": sql_page(5_000 if args.smoke else 1_000_000, repeats),
        "over_http": over_http(n, repeats, storm),
    }
    results["seconds"] = time.perf_counter() - started
    results["urls"] = n
    results["smoke"] = args.smoke
    args.out.mkdir(parents=True, exist_ok=True)
    name = "storms-smoke" if args.smoke else "storms"
    (args.out / f"{name}.json").write_text(json.dumps(results, indent=2))
    (args.out / f"{name}.md").write_text(report(results))
    print(report(results), file=sys.stdout)
    print(f"({results['seconds']:.0f} s)", file=sys.stderr)
    return results


if __name__ == "__main__":
    main()
