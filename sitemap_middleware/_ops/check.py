"""``sitemap-middleware check``: crawl a site's sitemaps as a search engine does, and judge.

robots.txt -> its ``Sitemap:`` lines -> indexes -> urlsets (gzip and text sitemaps too),
each document checked on its own (XSD, limits, locations, lastmods, HTTP semantics),
then the whole (duplicates, robots.txt rules, hreflang reciprocity, index lastmods),
then optionally every listed URL. Works against any site: nothing here knows our
middleware.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

import anyio
from werkzeug.http import parse_date

from .._engine.answer import FAILED_SECTIONS_HEADER, failed_sections_text
from .._sansio.limits import ROBOTS_MAX_BYTES
from .._sansio.robots_rules import RobotsRules
from .fetch import REDIRECTS, Fetched, Fetcher
from .findings import CheckReport, DocumentReport
from .httpcheck import check_content_type, check_http
from .rules import (
    Parsed,
    check_document,
    check_duplicates,
    check_hreflang,
    check_index_lastmods,
    check_robots,
    origin_of,
    parse_sitemap,
    stale_children,
)
from .schemas import Schemas
from .urlcheck import check_listed_urls

__all__ = ["CheckOptions", "run_check"]

#: XSD messages kept per document (the first ones say what is wrong).
MAX_XSD_ERRORS = 20
#: Consecutive redirects followed for robots.txt (RFC 9309 2.3.1.2: "at least five") and
#: for sitemaps; one more and robots.txt is unavailable, a sitemap an error.
MAX_REDIRECTS = 5


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What to check and how hard.

    :param user_agent: whose robots.txt rules apply (``Googlebot``).
    :param schemas: compiled XSDs, or ``None`` to skip XSD validation (said in the report).
    :param http_checks: revalidation, HEAD, gzip and Vary (three more requests a document).
    :param check_urls: also GET every listed URL (status, redirect, noindex, canonical).
    :param max_documents: stop following indexes after this many sitemaps.
    :param max_url_checks: GET at most this many listed URLs (``None``: all).
    :param max_time: seconds the whole run may take (``None``: unbounded); past it the
        run stops, reports what it saw and fails (``check-time-limit``).
    """

    user_agent: str = "Googlebot"
    schemas: Schemas | None = None
    http_checks: bool = True
    check_urls: bool = False
    max_documents: int = 10_000
    max_url_checks: int | None = None
    max_time: float | None = None


class Progress:
    """Progress callbacks (the CLI draws a bar and a line per document with them); the
    default does nothing."""

    def add_total(self, n: int) -> None:
        """``n`` more steps are known."""

    def advance(self) -> None:
        """One step done."""

    def document(self, report: DocumentReport) -> None:
        """A document (robots.txt, an index, a sitemap) was read and judged."""

    def listed_urls(self, total: int) -> None:
        """The GETs of ``total`` listed URLs begin (one ``advance`` each)."""


class _Crawl:
    def __init__(
        self, fetcher: Fetcher, options: CheckOptions, report: CheckReport, progress: Progress
    ) -> None:
        self.fetcher = fetcher
        self.options = options
        self.report = report
        self.progress = progress
        self.parsed: list[tuple[str, Parsed]] = []
        self.children: list[tuple[DocumentReport, Parsed]] = []
        self.seen: set[str] = set()
        self.kinds: dict[str, str] = {}

    async def robots(self, robots_url: str) -> tuple[RobotsRules, list[str]]:
        report = DocumentReport(robots_url, kind="robots")
        self.report.documents.append(report)
        fetched = await self.fetcher.fetch(
            robots_url,
            headers={"Accept-Encoding": "gzip"},
            redirects=MAX_REDIRECTS,
            max_bytes=ROBOTS_MAX_BYTES,  # RFC 9309 2.5: the rest is not read
        )
        report.status, report.bytes, report.wire_bytes = (
            fetched.status,
            len(fetched.body),
            len(fetched.raw),
        )
        agent = self.options.user_agent
        allow_all = RobotsRules("", agent)
        if fetched.error is not None:
            report.add("error", "fetch-failed", fetched.error)
            self.report.failed(fetched.failure, robots_url)
            return allow_all, []
        if 300 <= fetched.status < 400:
            # RFC 9309 2.3.1.2: past five redirects robots.txt may be taken as unavailable,
            # which 2.3.1.3 makes "allow everything" (as for a 4xx).
            why = (
                f"more than {MAX_REDIRECTS} redirects"
                if fetched.status in REDIRECTS and fetched.header("location")
                else f"a {fetched.status} without a redirect to follow"
            )
            report.add(
                "warning",
                "robots-redirects",
                f"robots.txt: {why}; taken as unavailable (RFC 9309 2.3.1.2), so no rules "
                "and no Sitemap: lines",
            )
            return allow_all, []
        if 400 <= fetched.status < 500:
            report.add(
                "warning",
                "robots-missing",
                f"robots.txt answers {fetched.status}: no Sitemap: lines, no rules",
            )
            return allow_all, []  # RFC 9309 2.3.1.3: unavailable robots.txt allows everything
        if fetched.status != 200:
            report.add(
                "error",
                "http-status",
                f"robots.txt answers {fetched.status}: Google stops crawling the site "
                "while it does",
            )
            # RFC 9309 2.3.1.4: unreachable, so complete disallow
            return RobotsRules("User-agent: *\nDisallow: /", agent), []
        if fetched.truncated:
            report.add(
                "warning",
                "robots-too-large",
                f"robots.txt is over {ROBOTS_MAX_BYTES:,} bytes: only the first "
                f"{ROBOTS_MAX_BYTES:,} are read (RFC 9309 2.5, as Google does)",
            )
        text = fetched.body.decode("utf-8", "replace")
        if fetched.truncated:
            text = text.rsplit("\n", 1)[0]  # a line cut in two is no rule
        parser = RobotsRules(text, agent)
        lines = text.splitlines()
        sitemaps = []
        for line in lines:
            field, _, value = line.partition(":")
            if field.strip().lower() != "sitemap":
                continue
            value = value.split("#", 1)[0].strip()
            if urlsplit(value).scheme in ("http", "https") and urlsplit(value).netloc:
                sitemaps.append(value)
            else:
                report.add(
                    "error", "robots-sitemap-relative", f"Sitemap: {value!r} is not an absolute URL"
                )
        report.entries = len(sitemaps)
        if not sitemaps:
            report.add(
                "warning",
                "robots-no-sitemap",
                "robots.txt has no Sitemap: line; trying /sitemap.xml",
            )
        return parser, sitemaps

    async def crawl(self, start: list[str], cross_origin: str | None) -> None:
        wave: list[tuple[str, str | None]] = [(url, None) for url in dict.fromkeys(start)]
        self.seen.update(url for url, _ in wave)
        while wave:
            self.progress.add_total(len(wave))
            following: list[tuple[str, str | None]] = []
            async with anyio.create_task_group() as group:
                for url, parent in wave:
                    report = DocumentReport(url)
                    self.report.documents.append(report)
                    group.start_soon(self.document, report, parent, cross_origin, following)
            wave = following

    async def document(
        self,
        report: DocumentReport,
        parent: str | None,
        cross_origin: str | None,
        following: list[tuple[str, str | None]],
    ) -> None:
        first = await self.fetcher.fetch(
            report.url, headers={"Accept-Encoding": "gzip"}, redirects=MAX_REDIRECTS
        )
        try:
            self.judge(report, first, parent, cross_origin, following)
            if self.options.http_checks and first.error is None and first.status == 200:
                await check_http(self.fetcher, first, report)
        finally:
            self.progress.document(report)
            self.progress.advance()

    def judge(
        self,
        report: DocumentReport,
        first: Fetched,
        parent: str | None,
        cross_origin: str | None,
        following: list[tuple[str, str | None]],
    ) -> None:
        report.status, report.bytes, report.wire_bytes = (
            first.status,
            len(first.body),
            len(first.raw),
        )
        if first.error is not None:
            report.add("error", "fetch-failed", first.error)
            self.report.failed(first.failure, first.url)
            return
        if first.status in REDIRECTS and first.header("location"):
            report.add(
                "error",
                "http-too-many-redirects",
                f"more than {MAX_REDIRECTS} redirects (the last one to "
                f"{first.header('location')}): not followed further",
            )
            return
        if first.redirected_from:
            statuses = ", ".join(str(status) for status, _ in first.redirected_from)
            if first.url in self.seen:  # listed too: read there, not counted twice
                report.add(
                    "warning",
                    "http-redirect",
                    f"redirected ({statuses}) to {first.url}, which is listed too "
                    "(checked there): list the final URL once",
                )
                return
            report.add(
                "warning",
                "http-redirect",
                f"redirected ({statuses}) to {first.url}: list the final URL",
            )
        if first.status != 200:
            report.add("error", "http-status", f"answers {first.status}, not 200")
            return
        failed = first.header(FAILED_SECTIONS_HEADER.lower())
        if failed:
            report.add(
                "error",
                "section-failed",
                "sections left out because their data source failed: "
                f"{failed_sections_text(failed)} (their pages are missing from this "
                "document; see the server's log)",
            )
        parsed = parse_sitemap(first.body, report.url, report)
        if parsed is None:
            return
        report.kind = parsed.kind
        check_content_type(first, parsed.kind, report)
        if parent is not None and parsed.kind == "sitemapindex":
            report.add(
                "error",
                "index-nested",
                f"an index listed by the index {parent}: indexes do not nest",
            )
        schemas = self.options.schemas
        if schemas is not None and parsed.tree is not None:
            for message in schemas.validate(parsed.tree, MAX_XSD_ERRORS):
                report.add("error", "xsd-invalid", message)
        check_document(
            parsed,
            report,
            fetched_at=first.fetched_at,
            served_at=_date(first.header("date")),
            last_modified=_date(first.header("last-modified")),
            cross_origin=cross_origin,
            location=first.url,
        )
        parsed.tree = None  # the tree is large; entries are all we keep
        if parsed.kind == "sitemapindex":
            self.children.append((report, parsed))
            if parent is None:
                self.follow(report, parsed, (origin_of(first.url), cross_origin), following)
        else:
            self.parsed.append((report.url, parsed))

    def follow(
        self,
        report: DocumentReport,
        parsed: Parsed,
        allowed: tuple[str, str | None],
        following: list[tuple[str, str | None]],
    ) -> None:
        """An index's children to fetch next: once each, on origins it may speak for."""
        for child in parsed.children:
            if child.loc in self.seen or origin_of(child.loc) not in allowed:
                continue  # never fetch from a host the index may not speak for
            if len(self.seen) >= self.options.max_documents:
                self.report.notes.append(
                    f"stopped following indexes after {self.options.max_documents:,} sitemaps"
                )
                break
            self.seen.add(child.loc)
            following.append((child.loc, report.url))

    def site_checks(self, robots: RobotsRules) -> None:
        # Discovery order, not completion order: "first listed in" must not be a race.
        order = {report.url: n for n, report in enumerate(self.report.documents)}
        self.parsed.sort(key=lambda item: order[item[0]])
        documents = self.parsed
        self.report.urls = check_duplicates(documents, self.report)
        check_robots(robots, self.options.user_agent, documents, self.report)
        unlisted = check_hreflang(documents, self.report)
        read = {origin_of(url) for url, _ in documents}
        if here := sum(count for origin, count in unlisted.items() if origin in read):
            self.report.notes.append(
                f"{here:,} hreflang alternates point at URLs no sitemap lists; "
                "their reciprocity was not checked"
            )
        if elsewhere := sorted(origin for origin in unlisted if origin not in read):
            hosts = ", ".join(elsewhere[:5]) + (", ..." if len(elsewhere) > 5 else "")
            self.report.notes.append(
                f"{sum(unlisted[o] for o in elsewhere):,} hreflang alternates point at other "
                f"hosts ({hosts}): allowed, but their reciprocity was not checked; check "
                "those hosts' sitemaps too"
            )

    async def index_lastmods(self) -> None:
        """Each index's lastmods against its children's entries; an index that seems
        behind is read once more first (a child may have changed while the crawl ran)."""
        newest = {
            url: max(stamps)
            for url, parsed in self.parsed
            if (stamps := [e.lastmod for e in parsed.entries if e.lastmod is not None])
        }
        for report, parsed in self.children:
            again: dict[str, datetime | None] = {}
            stale = stale_children(parsed.children, newest)
            if stale:
                fetched = await self.fetcher.fetch(
                    report.url, headers={"Accept-Encoding": "gzip"}, redirects=MAX_REDIRECTS
                )
                read = DocumentReport(report.url)  # (its findings were reported the first time)
                now = (
                    parse_sitemap(fetched.body, report.url, read) if fetched.status == 200 else None
                )
                again = {child.loc: child.lastmod for child in now.children} if now else {}
            check_index_lastmods(stale, report, again)


def _date(value: str | None) -> datetime | None:
    return parse_date(value) if value else None


async def run_check(
    start: str,
    fetcher: Fetcher,
    options: CheckOptions | None = None,
    progress: Progress | None = None,
) -> CheckReport:
    """Crawl from ``start`` (a site, its robots.txt, or one sitemap) and report.

    A site URL (``https://example.com/``) starts at its robots.txt; a robots.txt URL
    likewise; any other URL is taken as a sitemap (robots.txt is still read for its
    rules).
    """
    options = options or CheckOptions()
    progress = progress or Progress()
    report = CheckReport(start)
    parts = urlsplit(start)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"URL must be an absolute http(s) URL, got {start!r}")
    with anyio.move_on_after(options.max_time) as scope:
        await _run(start, parts.path, fetcher, options, progress, report)
    if scope.cancelled_caught:
        report.add(
            "error",
            "check-time-limit",
            f"stopped after --max-time {options.max_time:g} s: the documents and URLs "
            "not reached were not checked",
        )
    report.requests = fetcher.requests
    return report


async def _run(
    start: str,
    path: str,
    fetcher: Fetcher,
    options: CheckOptions,
    progress: Progress,
    report: CheckReport,
) -> None:
    origin = origin_of(start)
    crawl = _Crawl(fetcher, options, report, progress)
    progress.add_total(1)
    robots_url = start if path.endswith("/robots.txt") else origin + "/robots.txt"
    robots, listed = await crawl.robots(robots_url)
    progress.document(report.documents[0])
    progress.advance()
    if path in ("", "/") or path.endswith("/robots.txt"):
        await crawl.crawl(listed or [origin + "/sitemap.xml"], origin)
    else:
        await crawl.crawl([start], None)
    crawl.site_checks(robots)
    await crawl.index_lastmods()
    report.listed = {url: [e.loc for e in parsed.entries] for url, parsed in crawl.parsed}
    report.lastmods = {
        url: [e.lastmod.isoformat() if e.lastmod else None for e in parsed.entries]
        for url, parsed in crawl.parsed
    }
    if options.schemas is None:
        report.notes.append(
            "XSD validation skipped: no schemas (pass --schemas DIR or set SITEMAP_SCHEMAS_DIR); "
            "well-formedness, namespace, <loc> and lastmod format were still checked"
        )
    else:
        missing = (
            f" (missing: {', '.join(options.schemas.missing)})" if options.schemas.missing else ""
        )
        report.notes.append(f"validated against the XSDs in {options.schemas.directory}{missing}")
    if options.check_urls:
        first: dict[str, str] = {}  # each URL once, with the first sitemap listing it
        for url, parsed in crawl.parsed:
            for entry in parsed.entries:
                # never another host (loc-outside); the site's own, or the sitemap's
                if origin_of(entry.loc) in (origin, origin_of(url)):
                    first.setdefault(entry.loc, url)
        pairs = list(first.items())
        if options.max_url_checks is not None and len(pairs) > options.max_url_checks:
            report.notes.append(
                f"fetched the first {options.max_url_checks:,} of {len(pairs):,} listed URLs"
            )
            pairs = pairs[: options.max_url_checks]
        progress.add_total(len(pairs))
        progress.listed_urls(len(pairs))
        await check_listed_urls(fetcher, pairs, report, progress.advance)
