"""`sitemap-middleware check`: a clean site passes, every rule fails on the broken site."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import uvicorn

from sitemap_middleware._ops.apps import client_for_app
from sitemap_middleware._ops.check import CheckOptions, Progress, run_check
from sitemap_middleware._ops.fetch import Fetcher
from sitemap_middleware._ops.findings import CheckReport
from sitemap_middleware._ops.schemas import load_schemas
from tests.harness.core import make_config
from tests.harness.documents import require_schemas
from tests.harness.ports import bound_socket
from tests.harness.servers import serve, serve_uvicorn
from tests.sites.checked_sites import broken_app, clean_sections
from tests.sites.hostile_sites import HostileSite

ROOT = Path(__file__).resolve().parents[3]


class Counting(Progress):
    def __init__(self) -> None:
        self.total = self.done = 0

    def add_total(self, n: int) -> None:
        self.total += n

    def advance(self) -> None:
        self.done += 1


def check(url: str, progress: Progress | None = None, **options: Any) -> CheckReport:
    async def main() -> CheckReport:
        async with httpx.AsyncClient(timeout=30) as client:
            fetcher = Fetcher(client, concurrency=4, rate=0)
            return await run_check(url, fetcher, CheckOptions(**options), progress)

    return anyio.run(main)


def where(report: CheckReport, code: str) -> list[tuple[str | None, str | None]]:
    """(document, url) of every kept finding with ``code``."""
    found = [(f.document, f.url) for f in report.site.kept if f.code == code]
    for document in report.documents:
        found += [(f.document, f.url) for f in document.findings.kept if f.code == code]
    return found


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_our_middleware_passes_every_check(server: str) -> None:
    """The middleware on a real server: no error and no warning, XSD-valid, all crawled."""
    require_schemas()
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = make_config(clean_sections(base), base_url=base, max_urls_per_page=1000)
    progress = Counting()
    with serve(server, config, sock) as url:
        report = check(url + "/", progress, schemas=load_schemas(None))
    assert report.codes() == {}, report.format_text()
    assert [d.kind for d in report.documents] == ["robots", "sitemapindex", *["urlset"] * 3]
    assert report.urls == 1506 and report.ok
    assert progress.done == progress.total == 5
    assert report.requests == 1 + 4 * 4  # robots.txt, then GET, 304, HEAD, identity each
    assert any("validated against the XSDs" in note for note in report.notes)


@pytest.fixture(scope="module")
def broken() -> Iterator[str]:
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    # No Date header from uvicorn: the broken site sends its own (an hour behind).
    server = uvicorn.Server(
        uvicorn.Config(broken_app(base), log_level="warning", date_header=False)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "uvicorn failed to start"
        threading.Event().wait(0.01)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def broken_report(broken: str) -> CheckReport:
    require_schemas()
    return check(broken + "/", schemas=load_schemas(None))


#: code -> the document (path) it must be found in, and the listed URL's path if any.
EXPECTED = {
    "robots-sitemap-relative": ("/robots.txt", None),
    "xml-malformed": ("/malformed.xml", None),
    "http-status": ("/missing.xml", None),
    "xml-root": ("/wrong-root.xml", None),
    "fetch-failed": ("/bomb.xml.gz", None),
    "too-many-urls": ("/many.xml.gz", None),
    "empty": ("/empty.xml", None),
    "index-nested": ("/nested-index.xml", None),
    "index-lastmod-stale": ("/sitemap_index.xml", "/a.xml"),
    "xsd-invalid": ("/a.xml", None),
    "loc-outside": ("/a.xml", "https://elsewhere.example/page"),
    "lastmod-future": ("/a.xml", "/future"),
    "lastmod-after-response": ("/a.xml", "/recent"),
    "lastmod-after-document": ("/a.xml", "/after-doc"),
    "lastmod-invalid": ("/a.xml", "/bad-date"),
    "loc-not-escaped": ("/a.xml", "/caf\u00e9"),
    "loc-invalid": ("/a.xml", "/" + "x" * 2100),
    "robots-disallowed": ("/a.xml", "/private/x"),
    "duplicate-url": ("/b.xml", "/dup"),
    "hreflang-not-reciprocal": ("/a.xml", "/p1"),
    "hreflang-no-self": ("/a.xml", "/p4"),
    "lastmod-identical": ("/b.xml", None),
    "http-no-304": ("/a.xml", None),
    "http-no-gzip": ("/a.xml", None),
    "http-gzip-unasked": ("/b.xml", None),
    "http-head-mismatch": ("/b.xml", None),
    "content-type": ("/b.xml", None),
    "http-vary-missing": ("/c.xml", None),
}


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_each_check_fails_on_the_broken_site(
    code: str, broken: str, broken_report: CheckReport
) -> None:
    """Every rule is broken once on the broken site, and found where it was broken."""
    document, url = EXPECTED[code]
    expected_url = None if url is None else (url if url.startswith("https:") else broken + url)
    assert (
        (broken + document, expected_url) in where(broken_report, code)
        if url
        else any(found == broken + document for found, _ in where(broken_report, code))
    ), broken_report.format_text()


def test_broken_site_summary_and_json(broken_report: CheckReport) -> None:
    """The report fails, counts everything, and its JSON names codes and documents."""
    assert not broken_report.ok
    data = broken_report.as_dict()
    summary = data["summary"]
    assert isinstance(summary, dict) and summary["errors"] == broken_report.count("error") > 20
    assert set(EXPECTED) <= set(summary["codes"])
    assert json.loads(json.dumps(data)) == data
    # the foreign child of the index is reported, never fetched
    assert all("elsewhere.example" not in d.url for d in broken_report.documents)
    assert any("not checked" in note for note in broken_report.notes)  # p2 -> p3 is unlisted


def test_without_schemas_says_xsd_was_skipped(broken: str) -> None:
    """No schemas: the report says XSD validation was skipped; other checks still run."""
    report = check(broken + "/a.xml", schemas=None, http_checks=False)
    assert any(note.startswith("XSD validation skipped") for note in report.notes)
    assert "xsd-invalid" not in report.codes() and "lastmod-invalid" in report.codes()
    assert [d.url for d in report.documents] == [broken + "/robots.txt", broken + "/a.xml"]


def test_cli_json_exit_status_and_rate(broken: str) -> None:
    """The command exits 1 on errors and prints JSON with --json (as CI uses it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SITEMAP_SCHEMAS_DIR", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sitemap_middleware",
            "check",
            broken + "/c.xml",
            "--json",
            "--rate",
            "20",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is False and data["summary"]["codes"] == {
        "http-vary-missing": 1,
        "robots-sitemap-relative": 1,
    }
    bad = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "check", "not-a-url"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "must be an absolute http(s) URL" in bad.stderr


@pytest.mark.parametrize("name", ["selfcheck_asgi", "selfcheck_wsgi"])
def test_app_self_check_reports_listed_urls(name: str) -> None:
    """--app asks the app in-process for every listed URL: status, redirect, noindex, canonical."""
    from tests.sites import checked_sites

    async def main() -> CheckReport:
        async with client_for_app(getattr(checked_sites, name)) as client:
            options = CheckOptions(check_urls=True)
            return await run_check("https://shop.example/", Fetcher(client, rate=0), options)

    report = anyio.run(main)
    found = {(code, url) for code in report.codes() for _, url in where(report, code)}
    base = "https://shop.example"
    assert found == {
        ("url-redirect", f"{base}/moved"),
        ("url-not-found", f"{base}/missing"),
        ("url-noindex", f"{base}/hidden"),
        ("url-noindex", f"{base}/meta-hidden"),
        ("url-canonical-elsewhere", f"{base}/copy"),
    }, report.format_text()
    assert report.urls_checked == 7


def test_cli_app_mode_prints_a_text_report() -> None:
    """`check --app module:app` works without a URL and without a network."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sitemap_middleware",
            "check",
            "--app",
            "tests.sites.checked_sites:selfcheck_asgi",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 1, done.stderr
    assert "url-redirect: answers 301 to /ok" in done.stdout
    assert (
        done.stdout.strip()
        .splitlines()[-1]
        .startswith("FAILED: 2 documents, 7 URLs listed, 7 URLs fetched, 4 errors, 1 warnings")
    )


def test_cli_app_mode_starts_at_the_first_tenant_site(capsys: pytest.CaptureFixture[str]) -> None:
    """`check --app` on an app serving Tenants, without a URL, starts at the first site's
    origin (as `explain` takes a path), not at http://localhost/ (which its hosts refuse)."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig, Tenants
    from sitemap_middleware.__main__ import build_parser

    async def page(request: Any) -> Any:
        return PlainTextResponse("hello")

    shop = SitemapConfig(base_url="http://shop.test:8000", sections={"pages": ["/"]})
    other = SitemapConfig(base_url="https://other.test", sections={"pages": ["/"]})
    app = Starlette(routes=[Route("/", page)])
    app.add_middleware(
        ASGISitemapMiddleware,
        config=Tenants(sites={"shop.test:8000": shop, "other.test": other}),
    )
    args = build_parser().parse_args(["check", "--app", "x:y", "--no-progress"])
    args.app = app
    assert args.handler(args) == 0
    out = capsys.readouterr().out
    assert "http://shop.test:8000/sitemap.xml  [urlset, HTTP 200, 1 entries" in out, out


# -- hostile servers: dripping bodies, redirects ------------------------------------------


@contextmanager
def hostile(robots_hops: int = 0, index_lists_target: bool = False) -> Iterator[str]:
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with serve_uvicorn(HostileSite(base, robots_hops, index_lists_target).app(), sock):
        yield base


def test_cli_timeout_bounds_a_whole_request_to_a_dripping_server() -> None:
    """A body dripping a byte every 0.1 s is cut at --timeout: an error, not a hang."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SITEMAP_SCHEMAS_DIR", None)
    with hostile() as base:
        done = subprocess.run(
            [sys.executable, "-m", "sitemap_middleware", "check", base + "/drip.xml"]
            + ["--timeout", "0.3", "--json", "--no-http-checks", "--rate", "0"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            cwd=ROOT,
        )
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    drip = next(d for d in data["documents"] if d["url"] == base + "/drip.xml")
    assert [(f["code"], f["message"]) for f in drip["findings"]] == [
        ("fetch-failed", "timed out after 0.3 s (the whole request, body included)")
    ]


@pytest.mark.parametrize("hops", [1, 5])
def test_redirected_robots_txt_is_followed(hops: int) -> None:
    """RFC 9309 2.3.1.2: up to five redirects are followed; its rules and Sitemap: apply."""
    with hostile(robots_hops=hops) as base:
        report = check(base + "/", http_checks=False)
    robots = report.documents[0]
    assert robots.status == 200 and robots.findings.kept == [], report.format_text()
    assert [d.url for d in report.documents] == [
        base + "/robots.txt",
        base + "/index.xml",
        base + "/old-sitemap.xml",
    ]
    assert where(report, "robots-disallowed") == [(base + "/old-sitemap.xml", base + "/private/x")]


def test_robots_txt_redirecting_more_than_five_times_is_unavailable() -> None:
    """A sixth redirect: robots.txt is unavailable (4xx semantics: allow all), a warning."""
    with hostile(robots_hops=6) as base:
        report = check(base + "/", http_checks=False)
    robots = report.documents[0]
    assert [(f.severity, f.code) for f in robots.findings.kept] == [("warning", "robots-redirects")]
    assert "more than 5 redirects" in robots.findings.kept[0].message
    assert "robots-disallowed" not in report.codes() and "http-status" not in report.codes()
    assert [d.url for d in report.documents][1:] == [base + "/sitemap.xml"]  # the fallback


def test_redirected_sitemaps_are_followed_with_a_warning() -> None:
    """An index child that redirects is read at its target, and the redirect is a warning."""
    with hostile() as base:
        report = check(base + "/", http_checks=False)
    child = report.documents[2]
    assert child.url == base + "/old-sitemap.xml" and child.kind == "urlset"
    assert [(f.severity, f.code) for f in child.findings.kept] == [("warning", "http-redirect")]
    assert child.findings.kept[0].message == (
        f"redirected (308) to {base}/sitemap.xml: list the final URL"
    )
    assert report.urls == 2 and "http-status" not in report.codes()


def test_a_redirect_to_a_listed_sitemap_is_not_read_twice() -> None:
    """Its URLs are not counted twice (no duplicate-url): the listed target is checked."""
    with hostile(index_lists_target=True) as base:
        report = check(base + "/", http_checks=False)
    old = next(d for d in report.documents if d.url == base + "/old-sitemap.xml")
    assert [f.message for f in old.findings.kept] == [
        f"redirected (308) to {base}/sitemap.xml, which is listed too (checked there): "
        "list the final URL once"
    ]
    assert "duplicate-url" not in report.codes() and report.urls == 2


def test_a_sitemap_redirect_loop_is_an_error() -> None:
    """Redirects are followed at most five times; a loop is reported, not followed forever."""
    with hostile() as base:
        report = check(base + "/loop.xml", http_checks=False)
    loop = report.documents[1]
    assert [(f.severity, f.code) for f in loop.findings.kept] == [
        ("error", "http-too-many-redirects")
    ]
    assert loop.findings.kept[0].message.startswith("more than 5 redirects")


def test_feeds_listed_in_robots_txt_are_checked_as_feeds() -> None:
    """robots.txt lists the feeds (search engines take them as sitemaps): check reads them
    as feeds, finds no error in them and checks the URLs they link."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from sitemap_middleware import ASGISitemapMiddleware, Feed, Robots, Section, SitemapConfig
    from sitemap_middleware.providers import StaticProvider

    async def page(request: Any) -> PlainTextResponse:
        return PlainTextResponse("ok")

    rows = [{"loc": f"/post-{n}", "lastmod": f"2024-01-0{n}"} for n in range(1, 6)]
    config = SitemapConfig(
        base_url="https://blog.example",
        sections={"posts": Section(StaticProvider(rows))},
        robots=Robots(),
        feeds=[
            Feed(name="feed.atom", sections=["posts"]),
            Feed(name="feed.rss", sections=["posts"], format="rss"),
        ],
    )
    app = ASGISitemapMiddleware(Starlette(routes=[Route("/{p:path}", page)]), config=config)

    async def main() -> CheckReport:
        async with client_for_app(app) as client:
            options = CheckOptions(check_urls=True)
            return await run_check("https://blog.example/", Fetcher(client, rate=0), options)

    report = anyio.run(main)
    assert report.count("error") == 0, report.format_text()
    kinds = {doc.url.rsplit("/", 1)[1]: doc.kind for doc in report.documents}
    assert kinds["feed.atom"] == kinds["feed.rss"] == "feed"
    feeds = [doc for doc in report.documents if doc.kind == "feed"]
    assert [doc.entries for doc in feeds] == [5, 5]


@pytest.mark.parametrize("index_catches_up", [True, False], ids=["changed-mid-crawl", "stale"])
def test_an_index_lastmod_behind_its_sitemap_is_read_again_before_it_is_reported(
    index_catches_up: bool,
) -> None:
    """A child's content changed after the index was read (the demo's deal turns over
    every minute): the index, read again, lists the new lastmod, so nothing is stale.
    An index that still says the older date is reported, as before."""
    older, newer = "2024-01-01T00:00:00+00:00", "2024-02-01T00:00:00+00:00"
    served: set[str] = set()

    def index() -> str:
        lastmod = newer if index_catches_up and "/a.xml" in served else older
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>http://site.test/a.xml</loc><lastmod>{lastmod}</lastmod></sitemap>"
            "</sitemapindex>"
        )

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        xml = {"content-type": "application/xml", "date": "Thu, 01 Feb 2024 00:00:01 GMT"}
        if path == "/sitemap_index.xml":
            return httpx.Response(200, stream=httpx.ByteStream(index().encode()), headers=xml)
        if path == "/a.xml":
            served.add(path)
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>'
                '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<url><loc>http://site.test/a</loc><lastmod>{newer}</lastmod></url></urlset>"
            )
            return httpx.Response(200, stream=httpx.ByteStream(body.encode()), headers=xml)
        return httpx.Response(404, stream=httpx.ByteStream(b""))

    async def main() -> CheckReport:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            fetcher = Fetcher(client, concurrency=1, rate=0)
            return await run_check("http://site.test/sitemap_index.xml", fetcher, CheckOptions())

    report = anyio.run(main)
    stale = where(report, "index-lastmod-stale")
    assert stale == (
        []
        if index_catches_up
        else [("http://site.test/sitemap_index.xml", "http://site.test/a.xml")]
    )
