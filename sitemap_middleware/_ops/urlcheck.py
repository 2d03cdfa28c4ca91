"""The listed URLs themselves: each must answer 200, stay indexable and be canonical.

These are the problems Search Console reports as "Submitted URL not found (404)",
"... has crawl issue", "Page with redirect", "Submitted URL marked 'noindex'" and
"Alternate page with proper canonical tag".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit, urlunsplit

import anyio

from .fetch import Fetched, Fetcher
from .findings import CheckReport

__all__ = ["check_listed_urls", "page_signals"]

#: Read at most this much of a page for its <head> (Google reads robots meta in the head).
HEAD_BYTES = 512 * 1024


class _HeadSignals(HTMLParser):
    """Collects ``<meta name=robots|googlebot>`` and ``<link rel=canonical>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.robots: list[str] = []
        self.canonical: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): (value or "") for name, value in attrs}
        if tag == "meta" and values.get("name", "").lower() in ("robots", "googlebot"):
            self.robots.append(values.get("content", "").lower())
        elif (
            tag == "link"
            and "canonical" in values.get("rel", "").lower().split()
            and self.canonical is None
        ):
            self.canonical = values.get("href", "").strip()


def page_signals(html: str) -> tuple[bool, str | None]:
    """(has a noindex robots meta, the canonical href or None) of an HTML page."""
    parser = _HeadSignals()
    parser.feed(html)
    parser.close()
    noindex = any(
        "noindex" in c or "none" in [v.strip() for v in c.split(",")] for c in parser.robots
    )
    return noindex, parser.canonical


def _header_noindex(value: str | None) -> bool:
    """``X-Robots-Tag: noindex`` (or ``googlebot: noindex``, or ``none``)."""
    if not value:
        return False
    for part in value.lower().split(","):
        directive = part.rsplit(":", 1)[-1].strip()
        if directive in ("noindex", "none"):
            return True
    return False


def _same_url(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    norm = [
        urlunsplit((p.scheme.lower(), p.netloc.lower(), p.path or "/", p.query, ""))
        for p in (pa, pb)
    ]
    return norm[0] == norm[1]


def judge(url: str, document: str, fetched: Fetched, report: CheckReport) -> None:
    """Findings for one listed URL's response."""
    where = {"document": document, "url": url}
    if fetched.error is not None:
        report.add("error", "url-unreachable", fetched.error, **where)
        return
    status = fetched.status
    if 300 <= status < 400:
        location = fetched.header("location") or "?"
        report.add(
            "error",
            "url-redirect",
            f"answers {status} to {location}: list the target instead",
            **where,
        )
        return
    if status != 200:
        code = "url-not-found" if status in (404, 410) else "url-status"
        report.add("error", code, f"answers {status}, not 200", **where)
        return
    if _header_noindex(fetched.header("x-robots-tag")):
        report.add(
            "error",
            "url-noindex",
            "X-Robots-Tag says noindex: listed pages must be indexable",
            **where,
        )
    media = (fetched.header("content-type") or "").split(";")[0].strip().lower()
    if media not in ("text/html", "application/xhtml+xml"):
        return
    noindex, canonical = page_signals(fetched.body[:HEAD_BYTES].decode("utf-8", "replace"))
    if noindex:
        report.add(
            "error",
            "url-noindex",
            "<meta name=robots> says noindex: listed pages must be indexable",
            **where,
        )
    if canonical is not None:
        target = urljoin(url, canonical)
        if not _same_url(target, url):
            report.add(
                "warning",
                "url-canonical-elsewhere",
                f"its canonical is {target}: list the canonical URL instead",
                **where,
            )


async def check_listed_urls(
    fetcher: Fetcher,
    urls: Iterable[tuple[str, str]],
    report: CheckReport,
    advance: Callable[[], None] | None = None,
    workers: int = 8,
) -> None:
    """GET every ``(url, document)`` once (no redirects followed) and judge the answer.

    A few workers share one iterator, so a million URLs never become a million tasks;
    the fetcher bounds concurrency and rate on top.
    """
    pending = iter(urls)

    async def worker() -> None:
        for url, document in pending:
            fetched = await fetcher.fetch(url, headers={"Accept": "text/html,*/*;q=0.8"})
            judge(url, document, fetched, report)
            report.urls_checked += 1
            if advance is not None:
                advance()

    async with anyio.create_task_group() as group:
        for _ in range(workers):
            group.start_soon(worker)
