"""`check --app` against an app whose `Guard(action="exclude")` leaves pages out: the
check lets the guard settle before it crawls, so it reads the sitemaps a settled server
serves (none of the URLs the guard leaves out, no ETag moving mid-crawl)."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest

from sitemap_middleware import ASGISitemapMiddleware, Guard, SitemapConfig, WSGISitemapMiddleware
from sitemap_middleware.__main__ import build_parser

BASE = "http://shop.test"
GOOD = [f"/p/{n}" for n in range(1, 41)]
#: What the guard leaves out: a 404, a noindex page, a redirect.
GUARDED = ["/gone", "/hidden", "/moved"]


def _answer(path: str) -> tuple[int, dict[str, str], str]:
    if path == "/gone":
        return 404, {}, "<p>sold out</p>"
    if path == "/hidden":
        return 200, {"X-Robots-Tag": "noindex"}, "<p>draft</p>"
    if path == "/moved":
        return 301, {"Location": "/p/1"}, ""
    return 200, {}, f"<p>{path}</p>"


def _config(paths: list[str], action: str = "exclude") -> SitemapConfig:
    # At the guard's own pace (one a minute) the wait would end past --guard-wait: the
    # check probes at its own (--rate: unpaced with --app).
    guard = Guard(action=action, max_probes_per_minute=1)
    return SitemapConfig(base_url=BASE, sections={"pages": ["/", *paths]}, guard=guard)


def asgi_app(paths: list[str], hang: anyio.Event | None = None, action: str = "exclude") -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    async def page(request: Request) -> Response:
        if request.url.path == "/slow" and hang is not None:
            await hang.wait()  # never set: a page that hangs
        status, headers, body = _answer(request.url.path)
        return HTMLResponse(body, status_code=status, headers=headers)

    app = Starlette(routes=[Route(path, page) for path in ["/", *paths]])
    app.add_middleware(ASGISitemapMiddleware, config=_config(paths, action))
    return app


def wsgi_app(paths: list[str]) -> Any:
    from flask import Flask, request

    app = Flask("guarded")

    def page() -> Any:
        status, headers, body = _answer(request.path)
        return body, status, headers

    for n, path in enumerate(["/", *paths]):
        app.add_url_rule(path, f"page{n}", page)
    app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=_config(paths))  # type: ignore[method-assign]
    return app


def run_check(app: Any, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, Any, str]:
    args = build_parser().parse_args(["check", "--app", "x:y", "--json", *options])
    args.app = app
    status = args.handler(args)
    out, err = capsys.readouterr()
    return status, json.loads(out), err


def _listed(report: dict[str, Any]) -> set[str]:
    found = {f.get("url") for d in report["documents"] for f in d["findings"] if f.get("url")} | {
        f.get("url") for f in report["findings"] if f.get("url")
    }
    return {url for url in found if url}


@pytest.mark.parametrize("flavour", ["asgi", "wsgi"])
def test_check_app_lets_the_guard_settle_first(
    flavour: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fresh process lists every URL until its guard has probed it: `check --app`
    plans every section and waits for the guard before crawling, so it passes, reports
    no url-* finding and no ETag moving (`http-head-mismatch`), and the sitemap lists
    none of the URLs the guard leaves out; it says on stderr that it waits."""
    paths = [*GOOD, *GUARDED]
    app = asgi_app(paths) if flavour == "asgi" else wsgi_app(paths)
    status, report, err = run_check(app, capsys)
    codes = report["summary"]["codes"]
    assert status == 0 and codes == {}, (codes, report["findings"], report["documents"])
    assert report["summary"]["urls"] == 1 + len(GOOD)
    assert not {BASE + path for path in GUARDED} & _listed(report)
    assert "waiting for the guard: " in err and f"of {1 + len(paths)} URLs probed" in err, err


def test_check_app_without_progress_waits_silently(capsys: pytest.CaptureFixture[str]) -> None:
    status, report, err = run_check(asgi_app([*GOOD, *GUARDED]), capsys, "--no-progress")
    assert status == 0 and report["summary"]["codes"] == {}
    assert "waiting for the guard" not in err


def test_a_reporting_guard_is_not_waited_for(capsys: pytest.CaptureFixture[str]) -> None:
    """`Guard(action="report")` changes no sitemap: the check reports the pages it would
    quarantine, without waiting for it."""
    status, report, err = run_check(asgi_app([*GOOD, *GUARDED], action="report"), capsys)
    codes = report["summary"]["codes"]
    assert status == 1 and codes == {"url-noindex": 1, "url-not-found": 1, "url-redirect": 1}
    assert "waiting for the guard" not in err, err


def test_a_guard_that_does_not_settle_is_reported_and_the_check_goes_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A page that hangs keeps its probe in flight (past --guard-wait): the check warns
    (`guard-unsettled`, naming how many URLs are unprobed), says so on stderr and crawls
    all the same."""
    paths = [*GOOD, "/slow"]
    status, report, err = run_check(
        asgi_app(paths, hang=anyio.Event()), capsys, "--guard-wait", "0.5", "--timeout", "1"
    )
    unsettled = [f for f in report["findings"] if f["code"] == "guard-unsettled"]
    assert len(unsettled) == 1 and unsettled[0]["severity"] == "warning", report["findings"]
    # (Verdicts land a batch at a time: the hanging probe holds its batch's.)
    unprobed = re.search(rf"not probed (\d+) of {1 + len(paths)} URLs", unsettled[0]["message"])
    assert unprobed is not None and int(unprobed[1]) >= 1, unsettled
    assert "--guard-wait 0.5 s" in unsettled[0]["message"], unsettled
    # The crawl went on: every document read, and the hanging page reported as such.
    assert report["summary"]["urls"] == 1 + len(paths)
    assert report["summary"]["codes"].get("url-unreachable") == 1, report["summary"]
    assert status == 1
    assert "not settled, crawling all the same" in err, err


def test_guard_wait_must_be_positive() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["check", "--app", "x:y", "--guard-wait", "0"])


def test_an_unsettled_guard_gets_a_hint() -> None:
    from sitemap_middleware._ops.findings import CheckReport
    from sitemap_middleware._ops.guard_wait import Settling
    from sitemap_middleware._ops.hints import HintContext, hints

    report = CheckReport(BASE + "/")
    Settling(probed=0, unprobed=3, seconds=0.5, wait=0.5).add_to(report)
    Settling(probed=3, unprobed=0, seconds=0.1, wait=0.5).add_to(report)  # settled: nothing
    assert report.codes() == {"guard-unsettled": 1}
    (hint,) = hints(report, HintContext(timeout=30, app=True, guard_wait=0.5))
    assert "within --guard-wait 0.5 s: raise it" in hint, hint
