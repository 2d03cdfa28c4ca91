"""One line of advice for each common failure ``check`` meets (the text report's ``hint:``
lines; the JSON has none).

A hint says what to try, once per kind of failure, whatever the number of findings: the
server not running, a host that does not resolve, TLS, timeouts, the run's time limit, a
``base_url`` that is not the URL being checked, sitemaps not served, and a few findings
whose fix is always the same.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from .findings import CheckReport
from .rules import origin_of

__all__ = ["HintContext", "hints"]

#: Findings whose advice needs no detail of the run: code -> hint.
BY_CODE = {
    "section-failed": "a section's data source failed: the server's log has its error "
    "(logger sitemap_middleware, level ERROR)",
    "http-no-validators": "no ETag or Last-Modified: with sitemap_middleware, give the provider "
    "a version(), list the URLs (a list, StaticProvider), or set "
    "renders=Renders(etag='content') (docs: Validators)",
    "lastmod-identical": "every lastmod is the same: give each URL the time its content last "
    "changed, or none (Ledger() dates content for you)",
    "robots-disallowed": "robots.txt disallows URLs a sitemap lists: allow them, or leave them "
    "out (Section(exclude=...))",
    "url-not-found": "listed URLs answer 404: list only pages the app serves (a provider's "
    "SKIP, Section(exclude=...))",
    "xsd-invalid": "a document breaks the sitemap schema: the first messages say where",
}


@dataclass(frozen=True, slots=True)
class HintContext:
    """What the run was told (the hints name the option to change)."""

    timeout: float
    max_time: float | None = None
    app: bool = False
    guard_wait: float = 60.0


def hints(report: CheckReport, context: HintContext) -> list[str]:
    """The hints for ``report``, most basic first, each once."""
    found = [*_not_served(report, context), *_unanswered(report, context)]
    codes = report.codes()
    if "check-time-limit" in codes and context.max_time is not None:
        found.append(
            f"the run stopped at --max-time {context.max_time:g} s: raise it, or fetch fewer "
            "URLs (--max-urls N, --no-check-urls)"
        )
    if "guard-unsettled" in codes:
        found.append(
            f"the app's guard had not probed every listed URL within --guard-wait "
            f"{context.guard_wait:g} s: raise it, or find the pages slow to answer (each "
            "probe waits Guard(timeout=...) at most)"
        )
    found += [hint for code, hint in BY_CODE.items() if code in codes]
    return list(dict.fromkeys(found))


def _unanswered(report: CheckReport, context: HintContext) -> list[str]:
    """Requests without an answer, by why."""
    said = []
    for kind, url in report.failures.items():
        parts = urlsplit(url)
        where = parts.netloc
        if kind == "refused":
            said.append(
                f"nothing answers at {where} (connection refused): is the server running, "
                "on this port?"
            )
        elif kind == "dns":
            said.append(
                f"{parts.hostname} does not resolve: a typo, or a name only production "
                "knows? A server on this machine is http://127.0.0.1:PORT/"
            )
        elif kind == "tls":
            said.append(
                f"TLS failed with {where}: an expired or self-signed certificate, or "
                "https:// to a plain-HTTP server (a local one is usually http://)?"
            )
        elif kind == "timeout":
            said.append(
                f"requests took longer than --timeout {context.timeout:g} s: raise it "
                f"(--timeout {context.timeout * 4:g}), or lower --concurrency for a slow server"
            )
        elif kind == "connect":
            said.append(f"cannot connect to {where}: a firewall, a proxy, or no route there?")
    return said


def _not_served(report: CheckReport, context: HintContext) -> list[str]:
    """Sitemaps missing where they were looked for, or naming another site."""
    said = []
    start = origin_of(report.start)
    documents = report.documents
    missing = [d.url for d in documents[1:] if d.status in (404, 410)]
    named = bool(documents) and documents[0].status == 200 and documents[0].entries > 0
    if missing and named and origin_of(missing[0]) == start:
        # The middleware's own robots.txt names /sitemap.xml even when no section has a URL.
        said.append(
            f"{missing[0]} is not found, though robots.txt names it: is every section empty? "
            "(an empty site answers 404; explain --app module:app URL says why a URL is not "
            "listed) Or is the sitemap middleware not around the app answering this path?"
        )
    elif missing:
        robots = " (nor robots.txt)" if documents and documents[0].status == 404 else ""
        said.append(
            f"{missing[0]} is not found{robots}: is the sitemap middleware installed around "
            "the app answering here, and is this its path? (a base_url with a path moves "
            "the sitemaps under it)"
        )
    elsewhere = sorted({origin_of(d.url) for d in documents} - {start})
    if elsewhere and _local(report.start) and not context.app:
        said.append(
            f"{start}/robots.txt names sitemaps on {elsewhere[0]}: is base_url your public "
            "URL? On your machine take it from the environment (docs: Local development), "
            "or check the app in process: check --app module:app"
        )
    if "loc-outside" in report.codes():
        said.append(
            "URLs outside the site or directory of their sitemap (loc-outside): is base_url "
            "the URL being checked, and its path where the app is mounted?"
        )
    return said


def _local(url: str) -> bool:
    """A loopback or unspecified address, or localhost: a server on this machine."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified
