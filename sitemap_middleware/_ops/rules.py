"""Pure checks of fetched sitemaps: parse, limits, location rule, lastmod honesty, hreflang.

No I/O: documents come in as bytes with the facts of their fetch, findings go out into
a :class:`DocumentReport` or the :class:`CheckReport`. What is an error and what a
warning follows sitemaps.org (errors: the file is invalid or a crawler drops entries)
and Google's guidance (warnings: it works, but Google ignores or distrusts it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlsplit

from .._sansio.limits import MAX_BYTES, MAX_URL_LENGTH, MAX_URLS
from .._sansio.robots_rules import RobotsRules
from .findings import CheckReport, DocumentReport

__all__ = [
    "Child",
    "Entry",
    "Parsed",
    "check_document",
    "check_hreflang",
    "check_robots",
    "origin_of",
    "parse_sitemap",
]

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"
#: A lastmod this far past our clock is "in the future" (allows for clock skew).
FUTURE_TOLERANCE = timedelta(minutes=5)
#: W3C Datetime (the profile sitemaps.org requires): a date, or a date-time with a zone.
W3C_DATETIME = re.compile(
    r"(?P<date>\d{4}(?:-\d{2}(?:-\d{2})?)?)"
    r"(?:T(?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(?P<tz>Z|[+-]\d{2}:\d{2}))?"
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``<url>`` (or a text sitemap's line)."""

    loc: str
    lastmod: datetime | None = None
    lastmod_text: str | None = None
    alternates: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Child:
    """One ``<sitemap>`` of an index."""

    loc: str
    lastmod: datetime | None = None


@dataclass(slots=True)
class Parsed:
    """A parsed sitemap: ``urlset``, ``sitemapindex`` or ``text``."""

    kind: str
    entries: list[Entry] = field(default_factory=list)
    children: list[Child] = field(default_factory=list)
    tree: Any = None  # the lxml root, for XSD validation


def parse_w3c(text: str) -> datetime | None:
    """A W3C datetime as an aware UTC datetime (a date is its midnight UTC); None if bad."""
    found = W3C_DATETIME.fullmatch(text.strip())
    if found is None:
        return None
    date = found["date"]
    parts = [int(p) for p in date.split("-")] + [1, 1]
    try:
        if found["time"] is None:
            return datetime(parts[0], parts[1], parts[2], tzinfo=timezone.utc)
        tz = found["tz"].replace("Z", "+00:00")
        stamp = datetime.fromisoformat(f"{date}T{found['time']}{tz}")
    except ValueError:
        return None
    if len(date) != 10:
        return None  # a time needs a full date
    return stamp.astimezone(timezone.utc)


def parse_sitemap(body: bytes, url: str, report: DocumentReport) -> Parsed | None:
    """Parse XML (or a text sitemap); malformed input is an error finding, never a raise."""
    from lxml import etree

    from .feed_rules import is_feed, parse_feed

    head = body.lstrip()[:1]
    if head != b"<":
        return _parse_text(body, report)
    # No DTDs, no entities, no network: a hostile sitemap cannot make us fetch or expand.
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True
    )
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as exc:
        report.add("error", "xml-malformed", f"not well-formed XML: {exc}")
        return None
    name = etree.QName(root)
    if is_feed(name.localname, name.namespace):
        return parse_feed(root, report, url)
    if name.localname not in ("urlset", "sitemapindex"):
        report.add(
            "error",
            "xml-root",
            f"root element is <{name.localname}>, not <urlset> or <sitemapindex>",
        )
        return None
    if name.namespace != SITEMAP_NS:
        report.add(
            "error",
            "xml-namespace",
            f"root element is in namespace {name.namespace!r}, not {SITEMAP_NS!r}",
        )
        return None
    parsed = Parsed(name.localname, tree=root)
    ns = {"s": SITEMAP_NS, "x": XHTML_NS}
    item_tag = "s:url" if parsed.kind == "urlset" else "s:sitemap"
    for item in root.iterfind(item_tag, ns):
        loc = (item.findtext("s:loc", None, ns) or "").strip()
        if not loc:
            report.add(
                "error", "loc-missing", f"a <{item_tag[2:]}> has no <loc> (line {item.sourceline})"
            )
            continue
        lastmod_text = item.findtext("s:lastmod", None, ns)
        lastmod = None
        if lastmod_text is not None:
            lastmod = parse_w3c(lastmod_text)
            if lastmod is None:
                report.add(
                    "error",
                    "lastmod-invalid",
                    f"lastmod {lastmod_text!r} is not a W3C datetime",
                    loc,
                )
        if parsed.kind == "sitemapindex":
            parsed.children.append(Child(loc, lastmod))
            continue
        alternates = tuple(
            (link.get("hreflang", ""), (link.get("href") or "").strip())
            for link in item.iterfind("x:link", ns)
            if link.get("rel") == "alternate"
        )
        parsed.entries.append(Entry(loc, lastmod, lastmod_text, alternates))
    return parsed


def _parse_text(body: bytes, report: DocumentReport) -> Parsed | None:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.add("error", "text-encoding", f"text sitemap is not UTF-8: {exc}")
        return None
    lines = [line.strip() for line in text.splitlines()]
    return Parsed("text", entries=[Entry(line) for line in lines if line])


def _directory(url: str) -> str:
    """The path of the directory holding ``url`` (``/shop/`` for ``/shop/sitemap.xml``)."""
    return urlsplit(url).path.rsplit("/", 1)[0] + "/"


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` with scheme and host lower-cased (RFC 3986 6.2.2.1).

    Schemes and hosts compare case-insensitively; paths do not (they stay as they are
    everywhere else in the checker).
    """
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def check_document(
    parsed: Parsed,
    report: DocumentReport,
    *,
    fetched_at: datetime,
    served_at: datetime | None,
    last_modified: datetime | None,
    cross_origin: str | None,
    location: str | None = None,
) -> None:
    """Limits, locations and lastmods of one parsed document (findings into ``report``).

    :param fetched_at: our clock when the request was sent.
    :param served_at: the response's ``Date`` (the server's clock), if any.
    :param last_modified: the response's ``Last-Modified``, if any.
    :param cross_origin: the origin whose robots.txt listed this sitemap (it may then list
        that origin's URLs too: sitemaps.org cross-submits), or None.
    :param location: where the document was read from after redirects (the location rule
        applies there); ``report.url`` by default.
    """
    items: Sequence[Entry | Child] = (
        parsed.entries if parsed.kind != "sitemapindex" else parsed.children
    )
    report.entries = len(items)
    what = "sitemaps" if parsed.kind == "sitemapindex" else "URLs"
    if len(items) > MAX_URLS:
        report.add(
            "error", "too-many-urls", f"{len(items):,} {what}; the limit is {MAX_URLS:,} per file"
        )
    if report.bytes > MAX_BYTES:
        report.add(
            "error", "too-large", f"{report.bytes:,} bytes uncompressed; the limit is {MAX_BYTES:,}"
        )
    if not items:
        report.add("warning", "empty", f"no {what} listed")
    directory = _directory(location or report.url)
    origin = origin_of(location or report.url)
    for item in items:
        _check_loc(item.loc, report, directory, origin, cross_origin, parsed.kind == "sitemapindex")
    _check_lastmods(parsed, items, report, fetched_at, served_at, last_modified)


def _check_loc(
    loc: str,
    report: DocumentReport,
    directory: str,
    origin: str,
    cross_origin: str | None,
    index: bool,
) -> None:
    parts = urlsplit(loc)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        report.add("error", "loc-invalid", "not an absolute http(s) URL", loc)
        return
    if len(loc) > MAX_URL_LENGTH:
        report.add(
            "error", "loc-invalid", f"{len(loc):,} characters; the limit is {MAX_URL_LENGTH:,}", loc
        )
    if not loc.isascii() or " " in loc:
        report.add(
            "error", "loc-not-escaped", "non-ASCII or space: percent-encode it (RFC 3986)", loc
        )
    if index:
        if origin_of(loc) != origin and origin_of(loc) != cross_origin:
            report.add("error", "loc-outside", f"an index may list only sitemaps on {origin}", loc)
        return
    if origin_of(loc) == origin and (parts.path or "/").startswith(directory):
        return
    if cross_origin is not None and origin_of(loc) == cross_origin:
        return  # cross-submit: the URL's own robots.txt points at this sitemap
    report.add(
        "error",
        "loc-outside",
        f"outside {origin}{directory}: a sitemap may list only URLs under its own directory",
        loc,
    )


def _check_lastmods(
    parsed: Parsed,
    items: Sequence[Entry | Child],
    report: DocumentReport,
    fetched_at: datetime,
    served_at: datetime | None,
    last_modified: datetime | None,
) -> None:
    # An index's changes sitemap repeats its newest page's lastmod by design.
    stamps = [i.lastmod for i in items if i.lastmod is not None and not is_changes_sitemap(i.loc)]
    if len(stamps) >= 2 and len(set(stamps)) == 1:
        report.add(
            "warning",
            "lastmod-identical",
            f"all {len(stamps):,} lastmods are {stamps[0].isoformat()}: Google ignores lastmod "
            "that is not the real modification time (generation time?)",
        )
    for item in items:
        if item.lastmod is None:
            continue
        if item.lastmod > fetched_at + FUTURE_TOLERANCE:
            report.add(
                "error",
                "lastmod-future",
                f"lastmod {item.lastmod.isoformat()} is in the future",
                item.loc,
            )
        elif served_at is not None and item.lastmod > served_at + FUTURE_TOLERANCE:
            report.add(
                "warning",
                "lastmod-after-response",
                f"lastmod {item.lastmod.isoformat()} is newer than the response's Date "
                f"{served_at.isoformat()}",
                item.loc,
            )
        elif last_modified is not None and item.lastmod > last_modified + timedelta(seconds=1):
            report.add(
                "warning",
                "lastmod-after-document",
                f"lastmod {item.lastmod.isoformat()} is newer than the document's Last-Modified "
                f"{last_modified.isoformat()}",
                item.loc,
            )


def stale_children(
    children: Iterable[Child], newest: dict[str, datetime]
) -> list[tuple[str, datetime, datetime]]:
    """``(loc, index lastmod, newest inside)`` of each child holding an entry newer than
    the index's ``<lastmod>`` for it."""
    return [
        (child.loc, child.lastmod, inside)
        for child in children
        if child.lastmod is not None
        and (inside := newest.get(child.loc)) is not None
        and inside > child.lastmod
    ]


def check_index_lastmods(
    stale: Iterable[tuple[str, datetime, datetime]],
    report: DocumentReport,
    again: dict[str, datetime | None] | None = None,
) -> None:
    """An index's ``<lastmod>`` must not be older than the newest lastmod in that child
    (``stale``: :func:`stale_children`). ``again``: the index's lastmods read once more
    after its children (a child may have changed while the crawl ran): stale only where
    the index still says older."""
    for loc, said, inside in stale:
        still = (again or {}).get(loc, said)
        if still is not None and inside > still:
            report.add(
                "warning",
                "index-lastmod-stale",
                f"index says {said.isoformat()}, the sitemap holds a URL modified "
                f"{inside.isoformat()}",
                loc,
            )


def is_changes_sitemap(url: str) -> bool:
    """A changes sitemap (``SitemapConfig(changes=...)``): its file name ends with
    ``changes.xml`` (or ``changes.xml.gz``)."""
    return urlsplit(url).path.removesuffix(".gz").endswith("changes.xml")


def check_duplicates(documents: Iterable[tuple[str, Parsed]], report: CheckReport) -> int:
    """URLs listed more than once, within or across sitemaps; returns the URL count."""
    seen: dict[str, str] = {}
    total = 0
    for url, parsed in documents:
        if parsed.kind == "feed" or is_changes_sitemap(url):
            continue  # feeds and the changes sitemap repeat sitemap URLs by design
        for entry in parsed.entries:
            total += 1
            first = seen.setdefault(entry.loc, url)
            if first is not url:
                report.add(
                    "warning",
                    "duplicate-url",
                    f"listed again (first in {first})",
                    document=url,
                    url=entry.loc,
                )
    return total


def check_robots(
    robots: RobotsRules,
    user_agent: str,
    documents: Iterable[tuple[str, Parsed]],
    report: CheckReport,
) -> None:
    """Listed URLs (and sitemaps) that robots.txt forbids ``user_agent`` to crawl
    (RFC 9309 matching: :mod:`.robots_rules`)."""
    for url, parsed in documents:
        if not robots.allowed(url):
            report.add(
                "error",
                "robots-disallowed",
                f"robots.txt disallows this sitemap for {user_agent}",
                url=url,
            )
        for entry in parsed.entries:
            if not robots.allowed(entry.loc):
                report.add(
                    "error",
                    "robots-disallowed",
                    f"listed, but robots.txt disallows it for {user_agent}",
                    document=url,
                    url=entry.loc,
                )


def check_hreflang(documents: Sequence[tuple[str, Parsed]], report: CheckReport) -> Counter[str]:
    """Alternates must be reciprocal and include the page itself (Google's hreflang rules).

    Alternates may name other hosts (the location rule binds ``<loc>`` only). Returns, per
    origin, how many alternates point at URLs no sitemap read lists: their reciprocity
    cannot be checked (on another host, its sitemaps were not read).
    """
    alternates: dict[str, tuple[str, set[str]]] = {}
    for url, parsed in documents:
        for entry in parsed.entries:
            if entry.alternates:
                alternates[entry.loc] = (url, {href for _, href in entry.alternates})
    listed = {entry.loc for _, parsed in documents for entry in parsed.entries}
    unlisted: Counter[str] = Counter()
    for loc, (document, hrefs) in alternates.items():
        if loc not in hrefs:
            report.add(
                "warning",
                "hreflang-no-self",
                "its alternates do not include the page itself",
                document=document,
                url=loc,
            )
        for href in sorted(hrefs - {loc}):
            if href in alternates:
                if loc not in alternates[href][1]:
                    report.add(
                        "error",
                        "hreflang-not-reciprocal",
                        f"names {href} as an alternate, which does not name it back",
                        document=document,
                        url=loc,
                    )
            elif href in listed:
                report.add(
                    "error",
                    "hreflang-not-reciprocal",
                    f"names {href} as an alternate, which lists no alternates at all",
                    document=document,
                    url=loc,
                )
            else:
                unlisted[origin_of(href)] += 1
    return unlisted
