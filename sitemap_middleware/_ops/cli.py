"""The ``check`` and ``export`` commands: argparse, progress bar, output, exit status."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio

from .._sansio.limits import MAX_URLS
from .baseline import Baseline, MaxRemoved, compare_baseline, require_urls
from .check import CheckOptions, Progress, run_check
from .fetch import USER_AGENT, Fetcher
from .findings import CheckReport, github_annotations

__all__ = ["add_check_parser", "add_export_parser", "add_generate_parser"]


def _at_least_one(text: str) -> int:
    """argparse ``type=``: an integer >= 1 (argparse turns the error into exit 2)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    """argparse ``type=``: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def _rate(text: str) -> float:
    """argparse ``type=``: a finite number of requests a second >= 0 (0: unpaced)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(
            f"must be a number of requests a second >= 0 (0: unpaced), got {text!r}"
        )
    return value


def _max_removed(text: str) -> MaxRemoved:
    """argparse ``type=``: a count of URLs >= 0, or a percentage (``5%``)."""
    try:
        return MaxRemoved.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_check_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="crawl a site's sitemaps like a search engine and report every problem",
        description=(
            "Crawl robots.txt, its Sitemap: lines, indexes and pages; report protocol errors "
            "and Google's warnings per document and in a summary. Exit status: 0 clean or "
            "warnings only, 1 errors found, 2 bad usage."
        ),
    )
    parser.add_argument(
        "url",
        nargs="?",
        help="the site (https://example.com/), its robots.txt, or one sitemap URL; "
        "with --app, defaults to the origin of the app's base_url (Tenants: the first site's)",
    )
    parser.add_argument(
        "--app",
        metavar="MODULE:APP",
        help="ask this ASGI/WSGI app in-process (no network) and also fetch every listed URL",
    )
    parser.add_argument("--interface", choices=("auto", "asgi", "wsgi"), default="auto")
    parser.add_argument(
        "--schemas",
        metavar="DIR",
        help="directory of the official XSDs (default: $SITEMAP_SCHEMAS_DIR; none: XSD skipped)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--user-agent", default="Googlebot", help="robots.txt rules of this agent")
    parser.add_argument("--concurrency", type=_at_least_one, default=4, help="requests at once (4)")
    parser.add_argument(
        "--rate",
        type=_rate,
        help="requests a second at most (5 over the network, unpaced with --app; 0: unpaced)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=30.0,
        help="seconds for each whole request, body included (30)",
    )
    parser.add_argument(
        "--max-time",
        type=_seconds,
        help="seconds the whole run may take; past it the run stops and fails (no bound)",
    )
    parser.add_argument(
        "--guard-wait",
        metavar="SECONDS",
        type=_seconds,
        default=60.0,
        help="with --app: seconds to wait for the app's Guard(action='exclude') to probe "
        "every listed URL before crawling (60)",
    )
    parser.add_argument(
        "--no-http-checks", action="store_true", help="skip 304/HEAD/gzip/Vary checks"
    )
    parser.add_argument(
        "--check-urls",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="GET every listed URL (default: on with --app, off over the network)",
    )
    parser.add_argument("--max-urls", type=_at_least_one, help="GET at most this many listed URLs")
    parser.add_argument(
        "--max-documents", type=_at_least_one, default=10_000, help="sitemaps to follow (10000)"
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no line per document, no progress bar"
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        type=Path,
        help="fail on regressions against this earlier run (from --write-baseline)",
    )
    parser.add_argument(
        "--max-removed",
        metavar="N|N%",
        type=_max_removed,
        default="5%",
        help="with --baseline: baseline URLs that may disappear, a count or a percentage (5%%)",
    )
    parser.add_argument(
        "--write-baseline",
        metavar="FILE",
        type=Path,
        help="write this run's documents and URLs to FILE (JSON) for a later --baseline",
    )
    parser.add_argument(
        "--require",
        metavar="URL",
        action="append",
        default=[],
        help="fail unless a sitemap lists URL (repeatable)",
    )
    parser.add_argument(
        "--github",
        action="store_true",
        help="print findings as GitHub Actions annotations (::error, ::warning)",
    )
    parser.set_defaults(handler=_check_command)


def add_export_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "export",
        help="write every sitemap document the app serves to static files (.gz too)",
        description=(
            "Render robots.txt, the sitemap, its index and pages (and text sitemaps, the "
            "stylesheet and the IndexNow key file when configured) exactly as the middleware "
            "serves them, with a manifest of ETags; only changed documents are rewritten."
        ),
    )
    parser.add_argument(
        "directory",
        metavar="TARGET",
        help="a directory (created if missing), or s3://BUCKET/PREFIX, gs://..., az://... "
        "(the cloud extra; credentials from AWS_*, GOOGLE_*, AZURE_* variables)",
    )
    parser.add_argument("--app", metavar="MODULE:APP", required=True, help="the ASGI/WSGI app")
    parser.add_argument("--interface", choices=("auto", "asgi", "wsgi"), default="auto")
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="where the files are served from; must be the app's base_url (checked)",
    )
    parser.add_argument(
        "--endpoint-url",
        metavar="URL",
        help="S3-compatible server (MinIO, R2...; default: $AWS_ENDPOINT_URL)",
    )
    parser.add_argument("--region", help="S3 region (default: $AWS_REGION)")
    parser.add_argument(
        "--cache-control", metavar="VALUE", help="Cache-Control of every object (none)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=_export_command)


def add_generate_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "generate",
        help="write sitemap files for a URL list or a legacy sitemap, without an app",
        description=(
            "Read URLs from text files (one a line), sitemaps, indexes (their children too) "
            "or RSS/Atom feeds, local or http(s), and write the documents the middleware "
            "would serve for them (pages, index, robots.txt, .gz, manifest), as export does."
        ),
    )
    parser.add_argument("sources", nargs="+", help="urls.txt, sitemap.xml, an index, a feed, a URL")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="where to write")
    parser.add_argument(
        "--base-url", help="the site's base URL (default: the origin of the first URL)"
    )
    parser.add_argument("--section", default="pages", help="the section's name (pages)")
    parser.add_argument(
        "--max-urls-per-page", type=_at_least_one, help=f"URLs per page ({MAX_URLS} at most)"
    )
    parser.add_argument("--text-sitemaps", action="store_true", help="also write .txt sitemaps")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=_generate_command)


def _client(args: argparse.Namespace, app: object) -> Any:
    import httpx

    from .apps import client_for_app

    if app is not None:
        interface = None if args.interface == "auto" else args.interface
        return client_for_app(app, interface, timeout=args.timeout)
    return httpx.AsyncClient(
        timeout=httpx.Timeout(args.timeout),
        headers={"User-Agent": USER_AGENT},
        follow_redirects=False,
    )


def _check_command(args: argparse.Namespace) -> int:
    from .apps import load_app
    from .schemas import load_schemas

    url = args.url
    app = load_app(args.app) if args.app else None
    if url is None and app is not None:  # the site its sitemaps describe (Tenants: the first)
        from .explain import site_for
        from .export import find_served

        try:
            site = site_for(find_served(app), "/")
        except ValueError:
            site = None
        url = site.base.origin + "/" if site is not None else "http://localhost/"
    if url is None:
        raise ValueError("give a URL to check, or --app MODULE:APP")
    baseline = None
    if args.baseline is not None:
        try:
            baseline = Baseline.from_json(args.baseline.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read --baseline {args.baseline}: {exc}") from None
    options = CheckOptions(
        user_agent=args.user_agent,
        schemas=load_schemas(args.schemas),
        http_checks=not args.no_http_checks,
        check_urls=bool(args.app) if args.check_urls is None else args.check_urls,
        max_documents=args.max_documents,
        max_url_checks=args.max_urls,
        max_time=args.max_time,
    )
    progress, lines = _progress(args, url)

    async def main() -> Any:
        async with _client(args, app) as client:
            rate = args.rate if args.rate is not None else (0.0 if args.app else 5.0)
            settling = await _settle_guard(app, url, args, rate) if app is not None else None
            crawl = options
            if settling is not None and options.max_time is not None:  # (the whole run's)
                crawl = replace(options, max_time=max(0.0, options.max_time - settling.seconds))
            fetcher = Fetcher(client, concurrency=args.concurrency, rate=rate, timeout=args.timeout)
            with lines:
                report = await run_check(url, fetcher, crawl, progress)
            if settling is not None:
                settling.add_to(report)
            return report

    began = time.monotonic()
    report = anyio.run(main)
    if app is not None:  # what the app's content ledger holds (read in process, after the crawl)
        _check_ledger(app, url, report)
    seconds = time.monotonic() - began
    if baseline is not None:
        compare_baseline(baseline, report, args.max_removed)
    require_urls(report, args.require)
    if args.write_baseline is not None:
        Baseline.from_report(report).write(args.write_baseline)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    elif args.github:
        print(github_annotations(report))
    else:
        print(_text(report, args, seconds))
    return 0 if report.ok else 1


async def _settle_guard(app: object, url: str, args: argparse.Namespace, rate: float) -> Any:
    """Let the app's excluding guard probe every listed URL first (see guard_wait.py)."""
    from .guard_wait import settle_guards

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    wait = min(args.guard_wait, args.max_time or math.inf)
    return await settle_guards(
        app, url, wait=wait, rate=rate, say=None if args.no_progress else say
    )


def _check_ledger(app: object, url: str, report: Any) -> None:
    from .apps import load_app
    from .export import find_served
    from .ledger_check import check_ledger

    try:
        served = find_served(load_app(app))
    except ValueError:  # no sitemap middleware of ours in it: nothing to read
        return
    check_ledger(served, url, report)


def _progress(args: argparse.Namespace, url: str) -> tuple[Progress, AbstractContextManager[Any]]:
    """A line per document on stderr (and a bar on a terminal), unless --no-progress."""
    from .terminal import DocumentLines, Paint, use_colour

    if args.no_progress:
        return Progress(), nullcontext()
    paint = Paint(use_colour(sys.stderr, plain=args.json or args.github))
    bar = not args.json and sys.stderr.isatty()
    lines = DocumentLines(sys.stderr, url, paint, bar=bar)
    return lines, lines


def _text(report: CheckReport, args: argparse.Namespace, seconds: float) -> str:
    """The text report: documents and findings, notes, hints, the table, the verdict."""
    from .hints import HintContext, hints
    from .terminal import Paint, colour_report, summary_table, use_colour

    paint = Paint(use_colour(sys.stdout))
    context = HintContext(
        timeout=args.timeout, max_time=args.max_time, app=bool(args.app), guard_wait=args.guard_wait
    )
    footer = [paint(f"hint: {hint}", "cyan") for hint in hints(report, context)]
    footer += summary_table(report, seconds, paint)
    return colour_report(report.format_text(footer), paint)


def _export_command(args: argparse.Namespace) -> int:
    from .apps import load_app
    from .export import DirectorySink, ExportSink, export_app
    from .sinks import SinkError

    target: ExportSink
    if "://" in args.directory:
        from .store_sink import ObjectStoreSink

        target = ObjectStoreSink.from_url(
            args.directory,
            endpoint_url=args.endpoint_url,
            region=args.region,
            cache_control=args.cache_control,
        )
    elif args.endpoint_url or args.region or args.cache_control:
        raise ValueError("--endpoint-url, --region and --cache-control are for object stores")
    else:
        target = DirectorySink(Path(args.directory))
    app = load_app(args.app)
    interface = None if args.interface == "auto" else args.interface

    async def main() -> Any:
        return await export_app(app, target, interface, public_url=args.public_url)

    try:
        result = anyio.run(main)
    except SinkError as exc:
        print(f"failed: {exc}", file=sys.stderr)
        print(
            "FAILED: the export stopped; nothing was removed and the earlier manifest was kept",
            file=sys.stderr,
        )
        return 1
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print(result.format_text())
    return 1 if result.failed else 0


def _generate_command(args: argparse.Namespace) -> int:
    from .generate import generate

    settings: dict[str, Any] = {"text_sitemaps": args.text_sitemaps}
    if args.max_urls_per_page is not None:
        settings["max_urls_per_page"] = args.max_urls_per_page

    async def main() -> Any:
        return await generate(
            args.sources, args.out, base_url=args.base_url, section=args.section, **settings
        )

    result = anyio.run(main)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print(result.format_text())
    return 1 if result.failed else 0
