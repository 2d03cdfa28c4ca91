"""A hint per common failure of `check`, read from its findings and from the causes of a
failed request (on real sockets: tests/integration/ops/test_check_terminal.py)."""

from __future__ import annotations

import socket
import ssl
import sys

import httpx
from starlette.applications import Starlette

from sitemap_middleware._ops.apps import client_for_app
from sitemap_middleware._ops.fetch import failure_kind
from sitemap_middleware._ops.findings import CheckReport
from sitemap_middleware._ops.hints import HintContext, hints
from tests.harness.checking import check_report
from tests.harness.core import make_config
from tests.harness.servers import asgi_app

if sys.version_info < (3, 11):
    from exceptiongroup import ExceptionGroup


def test_hint_when_no_sitemap_is_served() -> None:
    """An app without the middleware: robots.txt and /sitemap.xml are 404."""
    report = check_report("https://example.com/", client_for_app(Starlette()))
    assert hints(report, HintContext(timeout=30, app=True)) == [
        "https://example.com/sitemap.xml is not found (nor robots.txt): is the sitemap "
        "middleware installed around the app answering here, and is this its path? (a "
        "base_url with a path moves the sitemaps under it)"
    ]


def test_hints_for_findings_and_the_time_limit() -> None:
    report = CheckReport("https://example.com/")
    report.add("error", "check-time-limit", "stopped")
    report.add("warning", "lastmod-identical", "all the same")
    report.add("warning", "lastmod-identical", "all the same")
    said = hints(report, HintContext(timeout=30, max_time=2.5))
    assert said == [
        "the run stopped at --max-time 2.5 s: raise it, or fetch fewer URLs (--max-urls N, "
        "--no-check-urls)",
        "every lastmod is the same: give each URL the time its content last changed, or none "
        "(Ledger() dates content for you)",
    ]


def test_failure_kinds_read_the_causes() -> None:
    def chained(cause: BaseException) -> httpx.ConnectError:
        try:
            try:
                raise OSError("All connection attempts failed") from cause
            except OSError as exc:
                raise httpx.ConnectError(str(exc)) from exc
        except httpx.ConnectError as exc:
            return exc

    refused = ExceptionGroup("attempts", [OSError(101, "unreachable"), ConnectionRefusedError()])
    assert failure_kind(chained(refused)) == "refused"
    assert failure_kind(chained(socket.gaierror(-2, "Name or service not known"))) == "dns"
    assert failure_kind(chained(ssl.SSLError(1, "WRONG_VERSION_NUMBER"))) == "tls"
    assert failure_kind(chained(OSError(113, "No route to host"))) == "connect"
    assert failure_kind(httpx.RemoteProtocolError("peer closed")) == "http"


def test_hint_when_robots_txt_names_a_sitemap_that_is_not_found() -> None:
    """The middleware answers robots.txt, but every section is empty: /sitemap.xml is 404,
    and the hint names the empty sections before a missing middleware."""

    def nothing() -> list[str]:
        return []

    app = asgi_app(make_config({"pages": nothing}, base_url="https://example.com"))
    report = check_report("https://example.com/", client_for_app(app))
    (hint,) = hints(report, HintContext(timeout=30, app=True))
    assert hint.startswith(
        "https://example.com/sitemap.xml is not found, though robots.txt names it: is every "
        "section empty?"
    ), hint
    assert "explain" in hint
