"""Pure HTML views of sitemaps for people: the index view and the page view, in chunks.

This module alone owns the views' markup and its HTML escaping: every value written goes
through :func:`escape`, so entry text such as ``<script>`` stays text. (What the views
load and may run, and the policy that enforces it, is :mod:`.html_assets`'s.)

Writers have the XML writers' shape (``open``/``urls``/``close`` return strings), so the
engine streams them the same way, with the same flat memory.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime, timezone

from .._html_settings import HTMLView
from .extensions import NewsArticle, Video
from .html_assets import SCRIPT, STYLE
from .models import Admitted, SitemapEntry
from .values import format_w3c
from .xml import split_tail

__all__ = ["FOLD_IMAGES", "MONTHS", "IndexView", "UrlsetView", "escape", "human_time"]

#: Above this many images in one entry, they fold into a <details> element.
FOLD_IMAGES = 5


def escape(text: str) -> str:
    """Escape ``& < > " '`` for HTML text and double-quoted attributes."""
    return html.escape(text, quote=True)


def _document_start(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="robots" content="noindex">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    )


def _nav(links: Sequence[tuple[str, str, str]]) -> str:
    items = []
    for href, text, rel in links:
        rel_attr = f' rel="{rel}"' if rel else ""
        items.append(f'<li><a href="{escape(href)}"{rel_attr}>{escape(text)}</a></li>')
    return f'<nav aria-label="Sitemap views"><ul>{"".join(items)}</ul></nav>\n'


def _table_start(table_id: str, caption: str, columns: Sequence[tuple[str, str]]) -> str:
    heads = []
    for label, kind in columns:
        # data-type tells view.js how to sort; text is the default.
        attrs = "" if kind == "text" else f' data-type="{kind}"'
        attrs += ' class="num"' if kind == "number" else ""
        heads.append(f'<th scope="col"{attrs}>{escape(label)}</th>')
    return (
        f'<main>\n<div class="scroll" role="region" aria-labelledby="{table_id}-caption" '
        f'tabindex="0">\n<table id="{table_id}" data-sortable>\n'
        f'<caption id="{table_id}-caption">{escape(caption)}</caption>\n'
        f"<thead><tr>{''.join(heads)}</tr></thead>\n<tbody>\n"
    )


def _document_end(summary: str) -> str:
    return (
        f"</tbody>\n</table>\n</div>\n{summary}</main>\n"
        "<footer><p>A view for people. Crawlers read the XML sitemaps; this page is "
        "not indexed.</p></footer>\n"
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def human_time(text: str) -> tuple[str, str]:
    """(day, clock) as people read a W3C date: ``("27 Nov 2026", "14:03 UTC")``; the
    clock is ``""`` for a plain date. Times are shown in UTC, to the minute (the exact
    value stays in ``<time datetime>``); anything unparsed is shown as it is."""
    try:
        if "T" not in text:
            day = date.fromisoformat(text)
            return f"{day.day} {MONTHS[day.month - 1]} {day.year}", ""
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text, ""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    clock = f"{moment.hour:02d}:{moment.minute:02d}{' UTC' if moment.tzinfo else ''}"
    return f"{moment.day} {MONTHS[moment.month - 1]} {moment.year}", clock


def _time(value: date | datetime | str) -> str:
    text = value if isinstance(value, str) else format_w3c(value)
    day, clock = human_time(text)
    # The clock in its own span: the phone layout may leave it out of a one-line row.
    clock = f' <span class="clock">{escape(clock)}</span>' if clock else ""
    return f'<time datetime="{escape(text)}">{escape(day)}{clock}</time>'


def _link(url: str, origin: str = "") -> str:
    """``url`` as a link; its ``origin`` (the page's own) in a span that narrow screens
    hide, so a phone shows the path that tells URLs apart."""
    text = escape(url)
    # Entry URLs are normalised http(s) URLs; anything else is shown, never linked.
    if not url.startswith(("https://", "http://")):
        return text
    if origin and url.startswith(origin) and url[len(origin) : len(origin) + 1] == "/":
        path = escape(url[len(origin) :])
        return f'<a href="{text}"><span class="origin">{escape(origin)}</span>{path}</a>'
    return f'<a href="{text}">{text}</a>'


def _origin(url: str) -> str:
    """``https://example.com`` of ``https://example.com/shop/``."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if rest else ""


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


class IndexView:
    """The index view: one row per sitemap page, linking to its view and its XML."""

    def __init__(
        self, *, view: HTMLView, site: str, sitemap_name: str, index_name: str, page_prefix: str
    ) -> None:
        self._view = view
        self._site = site
        self._sitemap_name = sitemap_name
        self._index_name = index_name
        self._page_prefix = page_prefix

    def open(self, *, files: int, urls: int, failed: Sequence[str] = (), externals: int = 0) -> str:
        title = f"{self._view.title} of {self._site}"
        alert = ""
        if failed:
            names = ", ".join(escape(name) for name in failed)
            alert = (
                '<p class="alert" role="alert">Left out because their data source failed: '
                f"{names}. Reload later.</p>\n"
            )
        files_text = f"{files:,} sitemap file{'s' if files != 1 else ''}"
        urls_text = f"{urls:,} URL{'s' if urls != 1 else ''}"
        if externals:
            urls_text += f"; {externals:,} more served elsewhere"
        return (
            _document_start(title)
            + "<header>\n"
            + _nav(
                [
                    (self._sitemap_name, f"{self._sitemap_name} (what crawlers read)", ""),
                    (self._index_name, f"{self._index_name} (XML index)", ""),
                ]
            )
            + f"<h1>{escape(title)}</h1>\n"
            + f'<p class="note">{files_text} list {urls_text}. '
            + "Open one to see its URLs.</p>\n"
            + alert
            + "</header>\n"
            + _table_start(
                "sitemaps",
                "Sitemap files",
                [
                    ("Sitemap", "text"),
                    ("URLs", "number"),
                    ("Last modified", "date"),
                    ("XML file", "text"),
                ],
            )
        )

    def sitemap(
        self, *, section: str, page: int, count: int, lastmod: date | None, xml_name: str
    ) -> str:
        """One row: the page's view (row header), URL count, lastmod and XML file."""
        view = escape(self._view.page_name(self._page_prefix, section, page))
        xml = escape(xml_name)
        modified = _time(lastmod) if lastmod is not None else ""
        return (
            f'<tr><th scope="row"><a href="{view}">{escape(section)}, page {page}</a></th>'
            f'<td class="num">{count:,}</td><td>{modified}</td>'
            f'<td class="url"><a href="{xml}">{xml}</a></td></tr>\n'
        )

    def external(self, loc: str) -> str:
        """A sitemap served elsewhere (``external_sitemaps``): its XML, nothing known."""
        return (
            '<tr><th scope="row">served elsewhere</th><td class="num"></td><td></td>'
            f'<td class="url">{_link(loc)}</td></tr>\n'
        )

    def close(self, quarantined: Sequence[tuple[str, Sequence[tuple[str, str]]]] = ()) -> str:
        """The end; ``quarantined``: each section's URLs the guard found no indexable page
        at, with what they answered (``Guard``)."""
        return _document_end(_quarantine(quarantined))


def _quarantine(sections: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> str:
    parts = []
    for section, urls in sections:
        if not urls:
            continue
        items = "".join(f"<li>{_link(url)}: {escape(said)}</li>\n" for url, said in urls)
        count = f"{len(urls):,} URL{'s' if len(urls) != 1 else ''}"
        parts.append(
            f'<section class="note"><h2>{escape(section)}: {count} quarantined by the guard'
            f"</h2>\n<ul>\n{items}</ul>\n</section>\n"
        )
    return "".join(parts)


class UrlsetView:
    """The page view: one row per URL with its fields and extensions in readable form."""

    def __init__(
        self,
        *,
        view: HTMLView,
        site: str,
        resolve: Callable[[str], str],
        section: str,
        page: int,
        xml_name: str,
        index_view: str,
        previous_view: str | None = None,
        next_view: str | None = None,
    ) -> None:
        self._view = view
        self._site = site
        self._resolve = resolve
        self._section = section
        self._page = page
        self._xml_name = xml_name
        self._index_view = index_view
        self._previous = previous_view
        self._next = next_view
        self._origin = _origin(resolve("/"))
        self.count = 0
        self.label = xml_name
        #: A view holds what its planned page holds: never cut short by a budget.
        self.full = False

    def open(self, first: Sequence[SitemapEntry] = ()) -> str:
        heading = f"{self._section}, page {self._page}"
        links = [(self._index_view, "All sitemap files", "")]
        if self._previous is not None:
            links.append((self._previous, "Previous page", "prev"))
        if self._next is not None:
            links.append((self._next, "Next page", "next"))
        links.append((self._xml_name, f"{self._xml_name} (XML)", ""))
        return (
            _document_start(f"{heading} \u2013 {self._view.title} of {self._site}")
            + "<header>\n"
            + _nav(links)
            + f"<h1>{escape(heading)}</h1>\n"
            + f'<p class="note">The URLs of {escape(self._xml_name)} on '
            + f"{escape(self._site)}, as crawlers read them.</p>\n</header>\n"
            + _table_start(
                "urls",
                f"URLs in {self._xml_name}",
                [
                    ("URL", "text"),
                    ("Last modified", "date"),
                    ("Change frequency", "text"),
                    ("Priority", "number"),
                    ("Extensions", "text"),
                ],
            )
        )

    def urls(self, batch: Iterable[Admitted]) -> str:
        """The rows of a batch of admitted entries, as one string."""
        parts: list[str] = []
        for loc, tail, extended in batch:
            lastmod, changefreq, priority = split_tail(tail)
            parts.append(
                f'<tr><th scope="row" class="url">{_link(loc, self._origin)}</th>'
                f"<td>{_time(lastmod) if lastmod else ''}</td>"
                f"<td>{escape(changefreq)}</td>"
                f'<td class="num">{escape(priority)}</td>'
                f'<td class="ext">{self._details(extended, bool(tail))}</td></tr>\n'
            )
        self.count += len(parts)
        return "".join(parts)

    def _details(self, extended: SitemapEntry | None, fields: bool) -> str:
        """The row's details on demand: its extensions, summarised in one line (a narrow
        screen also shows the row's other cells when it is open). A row with fields but
        no extension gets an empty one, for narrow screens only."""
        if extended is None:
            return '<details class="plain"><summary>Details</summary></details>' if fields else ""
        entry = extended
        counted = [
            _plural(len(entry.images), "image") if entry.images else "",
            _plural(len(entry.videos), "video") if entry.videos else "",
            "news" if entry.news is not None else "",
            _plural(len(entry.alternates), "alternate") if entry.alternates else "",
        ]
        summary = ", ".join(part for part in counted if part) or "Details"
        return f"<details><summary>{summary}</summary>{self._extensions(entry)}</details>"

    def close(self) -> str:
        count = self.count
        summary = (
            f'<p class="note" id="summary"><span id="count">{count:,}</span> '
            f"URL{'s' if count != 1 else ''} in this file.</p>\n"
        )
        return _document_end(summary)

    def _extensions(self, entry: SitemapEntry) -> str:
        items: list[str] = []
        images = [self._resolve(image.loc) for image in entry.images]
        if 0 < len(images) <= FOLD_IMAGES:
            items += (f'<li><span class="kind">image</span> {_link(url)}</li>' for url in images)
        elif images:
            inner = "".join(f"<li>{_link(url)}</li>" for url in images)
            items.append(
                f'<li><details><summary><span class="kind">image</span> {len(images):,} '
                f'images</summary><ul class="ext-list">{inner}</ul></details></li>'
            )
        items += (self._video(video) for video in entry.videos)
        if entry.news is not None:
            items.append(_news(entry.news))
        items += (
            f'<li><span class="kind">hreflang {escape(alt.hreflang)}</span> '
            f"{_link(self._resolve(alt.href))}</li>"
            for alt in entry.alternates
        )
        return f'<ul class="ext-list">{"".join(items)}</ul>'

    def _video(self, v: Video) -> str:
        fields: list[tuple[str, str]] = [("Description", escape(v.description))]
        for label, url in (
            ("Content", v.content_loc),
            ("Player", v.player_loc),
            ("Thumbnail", v.thumbnail_loc),
        ):
            if url is not None:
                fields.append((label, _link(self._resolve(url))))
        if v.duration is not None:
            minutes, seconds = divmod(v.duration, 60)
            fields.append(("Duration", f"{minutes}:{seconds:02d} ({v.duration} s)"))
        for label, when in (("Published", v.publication_date), ("Expires", v.expiration_date)):
            if isinstance(when, date | datetime):
                fields.append((label, _time(when)))
        if v.rating is not None:
            fields.append(("Rating", f"{v.rating:.1f} of 5"))
        if v.view_count is not None:
            fields.append(("Views", f"{v.view_count:,}"))
        if v.tags:
            fields.append(("Tags", escape(", ".join(v.tags))))
        for label, flag in (
            ("Family friendly", v.family_friendly),
            ("Requires subscription", v.requires_subscription),
            ("Live", v.live),
        ):
            if flag is not None:
                fields.append((label, "yes" if flag else "no"))
        for label, pair in (("Countries", v.restriction), ("Platforms", v.platform)):
            if pair is not None:
                fields.append((label, escape(f"{pair[0]} {' '.join(pair[1])}")))
        if v.uploader is not None:
            uploader = escape(v.uploader)
            if v.uploader_info is not None:
                uploader += f" ({_link(self._resolve(v.uploader_info))})"
            fields.append(("Uploader", uploader))
        rows = "".join(f"<dt>{label}</dt><dd>{value}</dd>" for label, value in fields)
        return (
            f'<li><details><summary><span class="kind">video</span> {escape(v.title)}'
            f"</summary><dl>{rows}</dl></details></li>"
        )


def _news(news: NewsArticle) -> str:
    return (
        f'<li><span class="kind">news</span> {escape(news.title)} \u2014 '
        f"{escape(news.publication_name)} ({escape(news.language)}), published "
        f"{_time(news.publication_date)}</li>"
    )
