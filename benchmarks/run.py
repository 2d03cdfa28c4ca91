"""The benchmark suite: ``python -m benchmarks.run [--smoke]`` (README: ``bash scripts/bench``).

Writes ``benchmarks/results/results.json`` and ``results.md``: medians of repeated runs,
as ratios to the floor (plain-Python serialization) and to each peer, all measured in
this one run on this machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx

from benchmarks import common, floor, peers, scale
from benchmarks.server import running

RESULTS = Path(__file__).resolve().parent / "results"
Timing = dict[str, Any]


def median_seconds(call: Callable[[], object], repeats: int) -> float:
    call()  # warm-up: imports, caches, first-touch allocations
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def traced_peak_kib(call: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] // 1024
    finally:
        tracemalloc.stop()


async def asgi_request(
    app: Any,
    path: str,
    headers: dict[str, str] | None = None,
    on_chunk: Callable[[bytes], object] | None = None,
) -> None:
    """One GET through an ASGI app on the running loop; each body chunk to ``on_chunk``."""
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in (headers or {}).items()],
        "http_version": "1.1",
        "scheme": "https",
        "server": ("example.com", 443),
    }
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and on_chunk is not None:
            on_chunk(message.get("body", b""))

    await app(scope, receive, send)


def asgi_get(
    app: Any, path: str, headers: dict[str, str] | None = None, keep: bool = True
) -> bytes:
    """Call an ASGI app in process (its own event loop); ``keep=False`` drops the body."""
    chunks: list[bytes] = []
    anyio.run(asgi_request, app, path, headers, chunks.append if keep else None)
    return b"".join(chunks)


def asgi_drain(app: Any, path: str, headers: dict[str, str] | None = None) -> None:
    """Stream a response and drop it, as a server does: measures our memory, not the harness'."""
    asgi_get(app, path, headers, keep=False)


def wsgi_call(app: Any, path: str, headers: dict[str, str] | None = None) -> bytes:
    environ_headers = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in (headers or {}).items()}
    return peers.wsgi_get(lambda env, sr: app({**env, **environ_headers}, sr), path)


# -- scenario 1: one page in process ------------------------------------------------------


def in_process(n: int, repeats: int) -> list[Timing]:
    raw = common.raw_items(n)
    path = "/sitemap-products-1.xml"
    html_path = "/sitemap-products-1.html"
    gz = {"accept-encoding": "gzip"}
    built_asgi = common.asgi_app(n, html=True)
    raw_asgi = common.asgi_app(n, mode="raw")
    built_wsgi = common.wsgi_app(n)
    raw_wsgi = common.wsgi_app(n, mode="raw")
    cases: dict[str, Callable[[], bytes]] = {
        "floor (plain Python join)": lambda: floor.render(raw).encode(),
        "floor + gzip level 6": lambda: gzip.compress(floor.render(raw).encode(), 6),
        "ours ASGI, built entries": lambda: asgi_get(built_asgi, path),
        "ours ASGI, built entries, gzip": lambda: asgi_get(built_asgi, path, gz),
        "ours ASGI, from dicts (validated)": lambda: asgi_get(raw_asgi, path),
        "ours ASGI, from dicts, gzip": lambda: asgi_get(raw_asgi, path, gz),
        # The same page as an HTML view for people (issue #14): same stream, HTML writer.
        "ours ASGI, built entries, HTML view": lambda: asgi_get(built_asgi, html_path),
        "ours WSGI, built entries": lambda: wsgi_call(built_wsgi, path),
        "ours WSGI, from dicts (validated)": lambda: wsgi_call(raw_wsgi, path),
    }
    if peers.available("django"):
        cases["django.contrib.sitemaps"] = peers.django_page(n)
    if peers.available("asgi-sitemaps"):
        asgi_peer = peers.asgi_sitemaps_app(n)
        cases["asgi-sitemaps"] = lambda: asgi_get(asgi_peer, "/sitemap.xml")
    if peers.available("flask-sitemap"):
        flask_peer = peers.flask_sitemap_app(n)
        cases["flask-sitemap"] = lambda: peers.wsgi_get(flask_peer, "/sitemap.xml")
    # Memory: our responses are streamed and dropped (what a server does); the floor and
    # the peers build whole documents by design, so their own call is their footprint.
    drains: dict[str, Callable[[], object]] = {
        "ours ASGI, built entries": lambda: asgi_drain(built_asgi, path),
        "ours ASGI, built entries, gzip": lambda: asgi_drain(built_asgi, path, gz),
        "ours ASGI, from dicts (validated)": lambda: asgi_drain(raw_asgi, path),
        "ours ASGI, from dicts, gzip": lambda: asgi_drain(raw_asgi, path, gz),
        "ours ASGI, built entries, HTML view": lambda: asgi_drain(built_asgi, html_path),
    }
    rows = []
    for name, call in cases.items():
        body = call()
        rows.append(
            {
                "case": name,
                "seconds": median_seconds(call, repeats),
                "bytes": len(body),
                "traced_peak_kib": traced_peak_kib(drains.get(name, call)),
            }
        )
    return rows


# -- scenario 2: the same page over loopback HTTP ----------------------------------------


def _clear_peak(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM (Linux >= 4.0)
        return True
    except OSError:
        return False


def over_http(n: int, repeats: int) -> list[Timing]:
    servers = [
        ("ours, uvicorn (ASGI)", "asgi", "/sitemap-products-1.xml"),
        ("ours, werkzeug + Flask (WSGI)", "wsgi", "/sitemap-products-1.xml"),
    ]
    if peers.available("asgi-sitemaps"):
        servers.append(("asgi-sitemaps, uvicorn", "asgi-sitemaps", "/sitemap.xml"))
    if peers.available("flask-sitemap"):
        servers.append(("flask-sitemap, werkzeug", "flask-sitemap", "/sitemap.xml"))
    rows = []
    for name, kind, path in servers:
        with running(kind, n) as server, httpx.Client(timeout=120) as client:
            totals, firsts, growths = [], [], []
            for attempt in range(repeats + 1):
                before = common.rss_kib(server.pid)
                resettable = _clear_peak(server.pid)
                started = time.perf_counter()
                first = None
                size = 0
                with client.stream(
                    "GET", server.url + path, headers={"Accept-Encoding": "identity"}
                ) as response:
                    for chunk in response.iter_raw():
                        if first is None:
                            first = time.perf_counter() - started
                        size += len(chunk)
                total = time.perf_counter() - started
                growth = common.peak_rss_kib(server.pid) - before if resettable else None
                if attempt:  # the first request warms the server up
                    totals.append(total)
                    firsts.append(first or total)
                    if growth is not None:
                        growths.append(growth)
            rows.append(
                {
                    "case": name,
                    "seconds": statistics.median(totals),
                    "ttfb_ms": statistics.median(firsts) * 1000,
                    "peak_rss_growth_kib": statistics.median(growths) if growths else None,
                    "bytes": size,
                }
            )
    return rows


# -- scenario 3: requests per second at concurrency 16 ------------------------------------


def _wrk(url: str, seconds: int, headers: dict[str, str]) -> float:
    args = ["wrk", "-t2", "-c16", f"-d{seconds}s", "--latency"]
    for key, value in headers.items():
        args += ["-H", f"{key}: {value}"]
    out = subprocess.run([*args, url], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    raise RuntimeError(out)


def _python_load(url: str, seconds: int, headers: dict[str, str]) -> float:
    async def main() -> float:
        done = 0
        deadline = time.perf_counter() + seconds
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=16)) as client:

            async def worker() -> None:
                nonlocal done
                while time.perf_counter() < deadline:
                    await client.get(url, headers=headers)
                    done += 1

            async with anyio.create_task_group() as group:
                for _ in range(16):
                    group.start_soon(worker)
        return done / seconds

    return anyio.run(main)


def throughput(seconds: int) -> tuple[list[Timing], str]:
    tool = "wrk" if shutil.which("wrk") else "python-httpx"
    measure = _wrk if tool == "wrk" else _python_load
    rows = []
    for flavour in ("asgi", "wsgi"):
        with running(flavour, 1000, 1000) as ours:
            page = ours.url + "/sitemap-products-1.xml"
            # wrk sends no Accept-Encoding: fetch the identity representation's tag.
            etag = httpx.get(page, headers={"Accept-Encoding": "identity"}).headers["etag"]
            page_rps = measure(page, seconds, {})
            not_modified_rps = measure(page, seconds, {"If-None-Match": etag})
        with running(f"static-{flavour}", 1000, 1000) as static:
            static_rps = measure(static.url + "/sitemap.xml", seconds, {})
        rows.append(
            {
                "server": "uvicorn" if flavour == "asgi" else "werkzeug",
                "page_1000_rps": page_rps,
                "conditional_304_rps": not_modified_rps,
                "static_bytes_rps": static_rps,
                "304_vs_static": not_modified_rps / static_rps,
            }
        )
    return rows, tool


# -- scenario 4: the index of a 1,000,000-URL section -------------------------------------


def index_of_a_million(n: int, repeats: int) -> list[Timing]:
    from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig

    countable = common.asgi_app(n, mode="lazy")

    def lazy_entries() -> Any:
        for i in range(n):
            yield common.url(i)

    by_iteration = ASGISitemapMiddleware(
        common._home_asgi,
        config=SitemapConfig(base_url=common.BASE_URL, sections={"products": lazy_entries}),
    )
    cases: dict[str, Callable[[], bytes]] = {
        "ours, provider with count()": lambda: asgi_get(countable, "/sitemap_index.xml"),
        "ours, plain generator (counted by iterating)": lambda: asgi_get(
            by_iteration, "/sitemap_index.xml"
        ),
    }
    if peers.available("django"):
        cases["django.contrib.sitemaps index"] = peers.django_index(n)
    if peers.available("flask-sitemap"):
        flask_peer = peers.flask_sitemap_app(n)
        cases["flask-sitemap (sitemap.xml = index)"] = lambda: peers.wsgi_get(
            flask_peer, "/sitemap.xml"
        )
    rows = []
    for name, call in cases.items():
        slow = "iterat" in name or "flask" in name
        rows.append(
            {
                "case": name,
                "seconds": median_seconds(call, 1 if slow else repeats),
                "bytes": len(call()),
            }
        )
    return rows


# -- gzip level ---------------------------------------------------------------------------


def gzip_levels(n: int, repeats: int) -> list[Timing]:
    from sitemap_middleware._sansio.compress import GzipStream

    body = floor.render(common.raw_items(n)).encode()
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    rows = []
    for level in (1, 3, 5, 6, 9):

        def run(level: int = level) -> bytes:
            stream = GzipStream(level)
            return b"".join([stream.compress(c) for c in chunks] + [stream.finish()])

        out = run()
        assert zlib.decompress(out, 31) == body
        rows.append(
            {
                "level": level,
                "seconds": median_seconds(run, repeats),
                "bytes": len(out),
                "ratio": len(body) / len(out),
            }
        )
    return rows


# -- Django: the same models by django.contrib.sitemaps and by our adapters ---------------


def django_models(rows: int, page: int, repeats: int) -> dict[str, Any] | None:
    """benchmarks/django_bench.py in its own process (Django's settings are per process)."""
    if not peers.available("django"):
        return None
    out = RESULTS / "django.partial.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "benchmarks.django_bench", "--rows", str(rows)]
    argv += ["--page", str(page), "--repeats", str(repeats), "--out", str(out)]
    subprocess.run(argv, check=True, cwd=Path(__file__).resolve().parents[1])
    try:
        return dict(json.loads(out.read_text()))
    finally:
        out.unlink()


def _django_table(result: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"## Django models: {result['rows']:,} rows, {result['page_size']:,} URLs a page\n",
        "The same `shop.Product` table and `Sitemap` class (SQLite). The floor is a raw",
        "sqlite3 keyset read plus the plain-Python join; memory is the tracemalloc peak",
        "(ours streamed and dropped, as a server does).\n",
        "| document | case | median | x floor | x Django | peak traced KiB |",
        "|---|---|---|---|---|---|",
    ]
    by_document: dict[str, list[dict[str, Any]]] = {}
    for row in result["cases"]:
        by_document.setdefault(row["document"], []).append(row)
    for document, rows in by_document.items():
        floor_row = next((r for r in rows if r["case"].startswith("floor")), None)
        django_row = next(r for r in rows if r["case"].startswith("django"))
        for row in rows:
            ratio = f"{row['seconds'] / floor_row['seconds']:.1f}" if floor_row else ""
            lines.append(
                f"| {document} | {row['case']} | {row['seconds'] * 1000:.0f} ms | {ratio} | "
                f"{row['seconds'] / django_row['seconds']:.2f} | {row.get('traced_peak_kib', '')} |"
            )
    return lines


# -- report -------------------------------------------------------------------------------


def _ratio_table(rows: list[Timing], key: str = "seconds") -> list[str]:
    floor_row = rows[0]
    peer_rows = [r for r in rows if not r["case"].startswith(("ours", "floor"))]
    head = (
        "| case | median | x floor | "
        + " | ".join(f"x {p['case']}" for p in peer_rows)
        + " | peak traced KiB |"
    )
    lines = [head, "|" + "---|" * (4 + len(peer_rows))]
    for row in rows:
        ratios = " | ".join(f"{row[key] / p[key]:.2f}" for p in peer_rows)
        lines.append(
            f"| {row['case']} | {row[key] * 1000:.1f} ms | {row[key] / floor_row[key]:.2f} | {ratios} | {row.get('traced_peak_kib', '')} |"
        )
    return lines


def report(results: dict[str, Any]) -> str:
    lines = [
        f"# Benchmark results\n\n{results['machine']}\n",
        "## One 50,000-URL page, in process\n",
    ]
    lines += _ratio_table(results["in_process"])
    lines += [
        "",
        "## Over loopback HTTP (identity)\n",
        "| case | total | TTFB | server peak RSS growth |",
        "|---|---|---|---|",
    ]
    for row in results["over_http"]:
        growth = (
            f"{row['peak_rss_growth_kib'] / 1024:.1f} MiB"
            if row["peak_rss_growth_kib"] is not None
            else "n/a"
        )
        lines.append(
            f"| {row['case']} | {row['seconds'] * 1000:.0f} ms | {row['ttfb_ms']:.1f} ms | {growth} |"
        )
    lines += [
        "",
        f"## Requests per second, concurrency 16 ({results['throughput_tool']})\n",
        "| server | 1,000-URL page | 304 | static bytes | 304 / static |",
        "|---|---|---|---|---|",
    ]
    for row in results["throughput"]:
        lines.append(
            f"| {row['server']} | {row['page_1000_rps']:.0f} | {row['conditional_304_rps']:.0f} | {row['static_bytes_rps']:.0f} | {row['304_vs_static']:.2f} |"
        )
    lines += ["", "## Index of a 1,000,000-URL section\n", "| case | median |", "|---|---|"]
    for row in results["index"]:
        lines.append(f"| {row['case']} | {row['seconds'] * 1000:.1f} ms |")
    lines += [
        "",
        "## gzip level (50,000-URL page)\n",
        "| level | time | bytes | ratio |",
        "|---|---|---|---|",
    ]
    for row in results["gzip_levels"]:
        lines.append(
            f"| {row['level']} | {row['seconds'] * 1000:.1f} ms | {row['bytes']:,} | {row['ratio']:.1f} |"
        )
    lines += [
        "",
        "## SQLite at scale (SQLAlchemyProvider, aiosqlite)\n",
        "| measure | value |",
        "|---|---|",
    ]
    for key, value in results["scale"].items():
        lines.append(f"| {key} | {value} |")
    if results.get("django"):
        lines += _django_table(results["django"])
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny workload: checks the suite runs")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    n, big, repeats, seconds, rows = (
        (200, 2_000, 1, 1, 5_000) if args.smoke else (50_000, 1_000_000, 5, 5, 1_000_000)
    )
    results: dict[str, Any] = {
        "machine": f"{platform.platform()}, Python {platform.python_version()}, {len(__import__('os').sched_getaffinity(0))} CPUs",
        "smoke": args.smoke,
    }
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("in_process", lambda: in_process(n, repeats)),
        ("over_http", lambda: over_http(n, repeats)),
        ("index", lambda: index_of_a_million(big, repeats)),
        ("gzip_levels", lambda: gzip_levels(n, repeats)),
        ("scale", lambda: scale.run(rows, page_size=min(50_000, max(rows // 20, 100)))),
        ("django", lambda: django_models(rows, min(50_000, max(rows // 20, 100)), min(repeats, 3))),
    ]
    for key, step in steps:
        print(f"running {key} ...", file=sys.stderr, flush=True)
        results[key] = step()
    print("running throughput ...", file=sys.stderr, flush=True)
    results["throughput"], results["throughput_tool"] = throughput(seconds)
    args.out.mkdir(parents=True, exist_ok=True)
    name = "smoke" if args.smoke else "results"
    (args.out / f"{name}.json").write_text(json.dumps(results, indent=2))
    (args.out / f"{name}.md").write_text(report(results))
    print(report(results))
    return results


if __name__ == "__main__":
    main()
