"""Pure serializers: entries to XML sitemaps, in byte chunks (the index and text
sitemaps: ``index_writer.py``, ``text_writer.py``).

Nothing here does I/O. Writers return strings (a batch of URLs per call) and enforce
the per-file limits as they go; :class:`Chunker` turns the strings into UTF-8 byte
chunks of ``CHUNK_SIZE``, so memory stays flat however many URLs stream through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from operator import add
from typing import Any

from .._exceptions import SitemapLimitError
from .batches import PlainBatch, TailPiece
from .extensions import NewsArticle, Video
from .limits import MAX_NEWS_PER_FILE
from .models import Admitted, SitemapEntry
from .values import format_w3c
from .xml import escape, escape_loc

__all__ = [
    "CHUNK_SIZE",
    "Chunker",
    "LimitedWriter",
    "UrlsetWriter",
    "prolog",
    "urlset_overhead",
]

#: Bytes per emitted chunk: big enough that per-chunk costs (a send, a zlib flush, a
#: chunked-encoding frame) vanish, small enough for a quick first byte.
CHUNK_SIZE = 64 * 1024

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
EXTENSION_NS = {
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
    "xhtml": "http://www.w3.org/1999/xhtml",
}


def prolog(stylesheet_href: str | None) -> str:
    if stylesheet_href is None:
        return XML_DECLARATION
    return f'{XML_DECLARATION}<?xml-stylesheet type="text/xsl" href="{escape(stylesheet_href)}"?>\n'


def urlset_overhead(stylesheet_href: str | None) -> int:
    """Bytes of a urlset besides its ``<url>`` elements, at most (every namespace declared)."""
    attrs = "".join(f' xmlns:{p}="{EXTENSION_NS[p]}"' for p in sorted(EXTENSION_NS))
    head = f'{prolog(stylesheet_href)}<urlset xmlns="{SITEMAP_NS}"{attrs}>\n'
    return len(head.encode("utf-8")) + len(UrlsetWriter.CLOSING)


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


class Chunker:
    """Collects strings and emits UTF-8 byte chunks of at least ``size`` bytes."""

    __slots__ = ("_parts", "_pending", "_size")

    def __init__(self, size: int = CHUNK_SIZE) -> None:
        self._parts: list[str] = []
        self._pending = 0
        self._size = size

    def add(self, text: str) -> bytes | None:
        self._parts.append(text)
        self._pending += len(text)
        if self._pending >= self._size:
            return self.flush()
        return None

    def finish(self, text: str) -> bytes:
        """The last piece and everything still held, as one chunk (never dropped)."""
        self._parts.append(text)
        return self.flush()

    def flush(self) -> bytes:
        data = "".join(self._parts).encode("utf-8")
        self._parts.clear()
        self._pending = 0
        return data


class LimitedWriter:
    """Counts items and UTF-8 bytes, refusing any item that would break a limit."""

    def __init__(self, *, label: str, max_items: int, max_bytes: int, closing: str) -> None:
        self.label = label
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.count = 0
        self.size = 0
        self._closing = len(closing)
        #: Cap mode (key-range pages): stop at the first entry that does not fit, set
        #: ``full``, and let the caller close a complete document of what fits.
        self.cap = False
        self.full = False

    def _account(self, text: str) -> str:
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        if self.count >= self.max_items or self.size + size + self._closing > self.max_bytes:
            self._refuse(size)
        self.count += 1
        self.size += size
        return text

    def _refuse(self, size: int) -> None:
        if self.count >= self.max_items:
            raise SitemapLimitError(
                f"{self.label}: more than {self.max_items:,} URLs in one file; "
                "the page plan and the provider disagree on the number of entries"
            )
        raise SitemapLimitError(
            f"{self.label}: entry {self.count + 1:,} would take the file past "
            f"{self.max_bytes:,} bytes; the entries changed since the page was planned"
        )

    def _start(self, text: str) -> str:
        self.size += len(text.encode("utf-8"))
        return text


#: Length of ``<url><loc></loc></url>`` and its newline: a simple entry is these, its
#: loc and its pre-rendered children, all ASCII.
_URL_TAGS = len("<url><loc></loc></url>\n")
#: A simple entry's element around its "escaped loc</loc>tail".
_URL_OPEN, _URL_CLOSE = "<url><loc>", "</url>\n"
#: The longest namespace declaration an extension element can carry.
_LONGEST_XMLNS = max(len(f' xmlns:{p}="{ns}"') for p, ns in EXTENSION_NS.items())


def _interleave(count: int, pieces: list[TailPiece | Sequence[str]]) -> str:
    """``"".join`` of every entry's pieces in turn: a piece is a column (one text per
    entry) or one text for all. Slice assignment lays the columns side by side in C."""
    merged: list[Any] = []
    for piece in pieces:
        if type(piece) is str and merged and type(merged[-1]) is str:
            merged[-1] += piece
        else:
            merged.append(piece)
    step = len(merged)
    slots: list[str] = [""] * (step * count)
    for offset, piece in enumerate(merged):
        slots[offset::step] = [piece] * count if type(piece) is str else piece
    return "".join(slots)


class UrlsetWriter(LimitedWriter):
    """Writes one ``<urlset>``; extension namespaces are declared only where used.

    The root declares the namespaces that the first entries use; an entry further down
    that needs another declares it on its own element, which keeps streaming possible
    and the document valid.
    """

    CLOSING = "</urlset>\n"

    def __init__(
        self,
        *,
        label: str,
        resolve: Callable[[str], str],
        max_urls: int,
        max_bytes: int,
        stylesheet_href: str | None = None,
        room: int | None = None,
    ) -> None:
        super().__init__(label=label, max_items=max_urls, max_bytes=max_bytes, closing=self.CLOSING)
        self._resolve = resolve
        self._stylesheet_href = stylesheet_href
        self._declared: frozenset[str] = frozenset()
        self._news = 0
        #: Entries larger than ``room`` (what a page leaves them) are left out, as the
        #: planner leaves them out: ``(loc, measured size)`` of each, for the log.
        self._room = room
        self.oversize: list[tuple[str, int]] = []

    def open(self, first: Sequence[SitemapEntry] = ()) -> str:
        used: set[str] = set()
        for entry in first:
            used.update(_namespaces(entry))
        self._declared = frozenset(used)
        attrs = "".join(f' xmlns:{p}="{EXTENSION_NS[p]}"' for p in sorted(used))
        return self._start(f'{prolog(self._stylesheet_href)}<urlset xmlns="{SITEMAP_NS}"{attrs}>\n')

    def urls(self, batch: Iterable[Admitted]) -> str:
        """The ``<url>`` elements of a batch of admitted entries, as one string.

        Each item is ``(absolute loc, pre-rendered simple children, entry when it has
        extensions)``; the writer renders the extensions.
        """
        if type(batch) is PlainBatch:
            pieces = batch.tail_pieces()
            whole = self._whole(batch.locs, batch.loc_size, pieces, batch.tails_size())
            if whole is not None:
                return whole
        elif type(batch) is list and batch:
            locs, tails, extensions = zip(*batch, strict=False)
            if extensions.count(None) == len(batch):
                loc_size = len(escape_loc("".join(locs)))
                whole = self._whole(locs, loc_size, [list(tails)], sum(map(len, tails)))
                if whole is not None:
                    return whole
        # The hot path of the package: per URL, one string build, a byte count and the
        # limit check, with the counters in locals and one call per batch.
        parts: list[str] = []
        count, size = self.count, self.size
        max_items, room = self.max_items, self.max_bytes - self._closing
        for loc, tail, extended in batch:
            if "&" in loc or "'" in loc:
                loc = escape_loc(loc)
            if extended is None:
                text = f"<url><loc>{loc}</loc>{tail}</url>\n"
                length = len(text)  # loc and the simple fields are always ASCII
                if self._room is not None and length > self._room:
                    self.oversize.append((loc, length))
                    continue
            else:
                text = f"<url><loc>{loc}</loc>{tail}{self._extensions(extended)}</url>\n"
                length = len(text) if text.isascii() else len(text.encode("utf-8"))
                if self._room is not None and self._too_big(length, loc, tail, extended):
                    continue
            if count >= max_items or size + length > room or self._news_full(extended):
                self.count, self.size = count, size
                if self.cap:
                    self.full = True
                    break
                if self._news_full(extended):
                    self._count_news()  # raises, naming the news limit
                self._refuse(length)
            if extended is not None and extended.news is not None:
                self._count_news()
            count += 1
            size += length
            parts.append(text)
        self.count, self.size = count, size
        return "".join(parts)

    def _whole(
        self, locs: Sequence[str], loc_size: int, pieces: list[TailPiece], tails_size: int
    ) -> str | None:
        """:meth:`urls` of a batch without extensions that fits whole, or None.

        The same text and counters as the per-URL loop, built a column at a time; a batch
        that reaches a limit, or may hold an entry larger than ``room``, takes the loop
        (which decides).
        """
        count = len(locs)
        size = self.plain_size(count, loc_size, tails_size)
        if self.count + count > self.max_items or self.size + size > self.max_bytes - self._closing:
            return None
        if self._room is not None:
            escaped = 6 if loc_size != sum(map(len, locs)) else 1  # "'" is 6 once escaped
            longest = max(map(len, locs)) * escaped + _URL_TAGS
            longest += sum(len(p) if type(p) is str else max(map(len, p)) for p in pieces)
            if longest > self._room:
                return None
        written = _interleave(count, [_URL_OPEN, locs, "</loc>", *pieces, _URL_CLOSE])
        if loc_size != sum(map(len, locs)):
            written = escape_loc(written)  # only locs can hold "&" or "'"
        self.count += count
        self.size += size
        return written

    @staticmethod
    def plain_size(count: int, loc_size: int, tails_size: int) -> int:
        """``sum()`` of :meth:`plain_sizes` of ``count`` entries, from their escaped locs'
        and their tails' sizes in all (see ``PlainBatch``)."""
        return loc_size + tails_size + _URL_TAGS * count

    def plain_sizes(self, locs: Sequence[str], tail_sizes: Iterable[int]) -> list[int]:
        """:meth:`sizes` of entries without extensions, for a batch at once.

        ``locs`` are admitted URLs (they hold no line break); ``tail_sizes`` the lengths
        of their pre-rendered simple children.
        """
        text = "\n".join(locs)
        lengths: Iterable[int] = map(len, locs)
        if "&" in text or "'" in text:
            lengths = map(len, escape_loc(text).split("\n"))
        return list(map(_URL_TAGS.__add__, map(add, lengths, tail_sizes)))

    def _news_full(self, entry: SitemapEntry | None) -> bool:
        return entry is not None and entry.news is not None and self._news >= MAX_NEWS_PER_FILE

    def close(self) -> str:
        return self.CLOSING

    def sizes(self, batch: Iterable[Admitted]) -> list[int]:
        """The UTF-8 size of each entry's ``<url>`` element, namespaces declared on it.

        What the page planner measures: a written entry is never longer (the writer may
        declare a namespace on the root instead). Nothing is counted against the limits.
        """
        out: list[int] = []
        declared, self._declared = self._declared, frozenset()
        try:
            for loc, tail, extended in batch:
                if "&" in loc or "'" in loc:
                    loc = escape_loc(loc)
                if extended is None:
                    out.append(len(loc) + len(tail) + _URL_TAGS)
                    continue
                text = f"<url><loc>{loc}</loc>{tail}{self._extensions(extended)}</url>\n"
                out.append(len(text) if text.isascii() else len(text.encode("utf-8")))
        finally:
            self._declared = declared
        return out

    def _too_big(self, length: int, loc: str, tail: str, entry: SitemapEntry) -> bool:
        """Whether the planner measured this entry as larger than a page (and left it out)."""
        room = self._room or 0
        elements = len(entry.images) + len(entry.videos) + len(entry.alternates) + 1
        if length + elements * _LONGEST_XMLNS <= room:
            return False  # even with every namespace declared on its elements
        size = self.sizes([(loc, tail, entry)])[0]
        if size <= room:
            return False
        self.oversize.append((loc, size))
        return True

    def _count_news(self) -> None:
        self._news += 1
        if self._news > MAX_NEWS_PER_FILE:
            raise SitemapLimitError(
                f"{self.label}: more than {MAX_NEWS_PER_FILE} news URLs in one file; "
                "the entries changed since the page was planned"
            )

    def _xmlns(self, prefix: str) -> str:
        if prefix in self._declared:
            return ""
        return f' xmlns:{prefix}="{EXTENSION_NS[prefix]}"'

    def _extensions(self, entry: SitemapEntry) -> str:
        parts: list[str] = []
        for image in entry.images:
            parts += (
                f"<image:image{self._xmlns('image')}><image:loc>",
                escape_loc(self._resolve(image.loc)),
                "</image:loc></image:image>",
            )
        for video in entry.videos:
            parts.append(self._video(video))
        if entry.news is not None:
            parts.append(self._news_xml(entry.news))
        for alt in entry.alternates:
            parts += (
                f'<xhtml:link{self._xmlns("xhtml")} rel="alternate" hreflang="',
                escape(alt.hreflang),
                '" href="',
                escape_loc(self._resolve(alt.href)),
                '"/>',
            )
        return "".join(parts)

    def _news_xml(self, news: NewsArticle) -> str:
        return (
            f"<news:news{self._xmlns('news')}><news:publication>"
            f"<news:name>{escape(news.publication_name)}</news:name>"
            f"<news:language>{news.language}</news:language></news:publication>"
            f"<news:publication_date>{format_w3c(news.publication_date)}</news:publication_date>"
            f"<news:title>{escape(news.title)}</news:title></news:news>"
        )

    def _video(self, v: Video) -> str:
        # Element order follows the sequence in Google's sitemap-video/1.1 XSD.
        out = [
            f"<video:video{self._xmlns('video')}>",
            f"<video:thumbnail_loc>{escape_loc(self._resolve(v.thumbnail_loc))}</video:thumbnail_loc>",
            f"<video:title>{escape(v.title)}</video:title>",
            f"<video:description>{escape(v.description)}</video:description>",
        ]
        if v.content_loc is not None:
            out.append(
                f"<video:content_loc>{escape_loc(self._resolve(v.content_loc))}</video:content_loc>"
            )
        if v.player_loc is not None:
            out.append(
                f"<video:player_loc>{escape_loc(self._resolve(v.player_loc))}</video:player_loc>"
            )
        if v.duration is not None:
            out.append(f"<video:duration>{v.duration}</video:duration>")
        if isinstance(v.expiration_date, date | datetime):
            out.append(
                f"<video:expiration_date>{format_w3c(v.expiration_date)}</video:expiration_date>"
            )
        if v.rating is not None:
            out.append(f"<video:rating>{v.rating:.1f}</video:rating>")
        if v.view_count is not None:
            out.append(f"<video:view_count>{v.view_count}</video:view_count>")
        if isinstance(v.publication_date, date | datetime):
            out.append(
                f"<video:publication_date>{format_w3c(v.publication_date)}</video:publication_date>"
            )
        out += (f"<video:tag>{escape(tag)}</video:tag>" for tag in v.tags)
        if v.family_friendly is not None:
            out.append(
                f"<video:family_friendly>{_yes_no(v.family_friendly)}</video:family_friendly>"
            )
        if v.restriction is not None:
            rel, countries = v.restriction
            out.append(
                f'<video:restriction relationship="{rel}">{" ".join(countries)}</video:restriction>'
            )
        if v.requires_subscription is not None:
            out.append(
                f"<video:requires_subscription>{_yes_no(v.requires_subscription)}</video:requires_subscription>"
            )
        if v.uploader is not None:
            info = (
                f' info="{escape_loc(self._resolve(v.uploader_info))}"' if v.uploader_info else ""
            )
            out.append(f"<video:uploader{info}>{escape(v.uploader)}</video:uploader>")
        if v.platform is not None:
            rel, platforms = v.platform
            out.append(
                f'<video:platform relationship="{rel}">{" ".join(platforms)}</video:platform>'
            )
        if v.live is not None:
            out.append(f"<video:live>{_yes_no(v.live)}</video:live>")
        out.append("</video:video>")
        return "".join(out)


def _namespaces(entry: SitemapEntry) -> Iterable[str]:
    if entry.images:
        yield "image"
    if entry.videos:
        yield "video"
    if entry.news is not None:
        yield "news"
    if entry.alternates:
        yield "xhtml"
