"""``parse_sitemap``: read a sitemap back into entries, streaming and bounded.

A urlset, an index, a text sitemap, or an RSS 2.0 / Atom 1.0 feed, gzipped or not, from
bytes, a file, a file object or an iterable of byte chunks. The document is fed to expat
chunk by chunk and only one record (``<url>``, ``<sitemap>``, ``<item>``, ``<entry>``) is
held as a tree at a time. Bounded as ``check`` is: 50 MiB uncompressed (a gzip bomb
stops at the cap), 50,000 URLs (or index children) a file, and no DTD at all (so no
entity expansion, no external entity, no network), as defusedxml refuses them.

Every record becomes a :class:`SitemapEntry`, validated as a provider's would be; one
that fails is left out and reported in :attr:`ParsedSitemap.problems` (``strict=True``:
raised). With ``url=`` (where the document lives) the checker's rules run on it too
(:func:`.rules.check_document`: locations under the sitemap's directory, lastmods), their
findings in ``problems`` as well.
"""

from __future__ import annotations

import codecs
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Literal, Union
from urllib.parse import urljoin, urlsplit
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

from .._exceptions import InvalidEntryError, SitemapLimitError, SitemapParseError
from .._sansio.limits import MAX_BYTES, MAX_INDEX_ENTRIES, MAX_URLS
from .._sansio.models import SitemapEntry
from .._sansio.urlset_writer import SITEMAP_NS
from .findings import DocumentReport, Finding
from .parse_items import ATOM_NS, XML_BASE, feed_entry, index_child, record_loc, urlset_entry
from .rules import Child, Entry, Parsed, check_document, parse_w3c

__all__ = ["ParsedSitemap", "SitemapKind", "parse_sitemap"]

SitemapKind = Literal["urlset", "sitemapindex", "text", "rss", "atom"]
Source = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", IO[bytes], Iterable[bytes]]
CHUNK = 65_536
#: Bytes handed to expat at a time. Expat before 2.6 re-scans an unfinished token (a huge
#: attribute or comment) from its start on every call: big calls keep that re-scanning to
#: a few dozen passes over a 50 MiB document instead of hundreds.
PARSE_BYTES = 4 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_XML_BASE_KEY = XML_BASE[1:]  # as expat names it (namespace}base)
#: root element (Clark notation) -> (kind, the record element, its depth)
_ROOTS: dict[str, tuple[SitemapKind, str, int]] = {
    f"{{{SITEMAP_NS}}}urlset": ("urlset", f"{{{SITEMAP_NS}}}url", 2),
    f"{{{SITEMAP_NS}}}sitemapindex": ("sitemapindex", f"{{{SITEMAP_NS}}}sitemap", 2),
    "rss": ("rss", "item", 3),
    f"{{{ATOM_NS}}}feed": ("atom", f"{{{ATOM_NS}}}entry", 2),
}


@dataclass(frozen=True, slots=True)
class ParsedSitemap:
    """What :func:`parse_sitemap` read.

    ``entries`` are the URLs of a urlset, a text sitemap or a feed; ``sitemaps`` the
    children of an index (location and lastmod). ``problems`` are the records left out
    (and, with ``url=``, the checker's findings), as ``check`` words them.
    """

    kind: SitemapKind
    entries: tuple[SitemapEntry, ...] = ()
    sitemaps: tuple[SitemapEntry, ...] = ()
    problems: tuple[Finding, ...] = field(default=())
    bytes: int = 0


def _chunks(source: Source) -> Iterator[bytes]:
    if isinstance(source, bytes | bytearray | memoryview):
        data = memoryview(source).cast("B")
        for start in range(0, len(data), CHUNK):
            yield bytes(data[start : start + CHUNK])
        return
    if isinstance(source, str | os.PathLike):
        with Path(source).open("rb") as file:
            yield from iter(lambda: file.read(CHUNK), b"")
        return
    read = getattr(source, "read", None)
    if read is not None:
        yield from iter(lambda: read(CHUNK), b"")
        return
    for chunk in source:
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise TypeError(f"a sitemap source yields bytes, got {type(chunk).__name__}")
        yield bytes(chunk)


class _Limit:
    """The document's bytes handed on so far (``total``): past MAX_BYTES, an error."""

    def __init__(self) -> None:
        self.total = 0

    def __call__(self, data: bytes) -> bytes:
        self.total += len(data)
        if self.total > MAX_BYTES:
            raise SitemapLimitError(
                f"more than {MAX_BYTES:,} bytes uncompressed; the limit is {MAX_BYTES:,} "
                "(sitemaps.org)"
            )
        return data


def _unpacked(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The document's bytes, gzip undone when it is gzip, never past MAX_BYTES."""
    counted = _Limit()
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= 2:
            break
    if head[:2] != _GZIP_MAGIC:
        if head:
            yield counted(head)
        for chunk in chunks:
            yield counted(chunk)
        return
    yield from _gunzipped(_prepend(head, chunks), counted)


def _gunzipped(chunks: Iterator[bytes], counted: _Limit) -> Iterator[bytes]:
    """A gzip file's members, inflated, never past MAX_BYTES."""
    # A gzip file may hold several members, read one after the other (RFC 1952 2.2, as
    # ``cat a.gz b.gz`` makes); what follows the last one and is no member is ignored.
    inflate: Any = None  # between members
    data = b""
    try:
        for chunk in chunks:
            data += chunk
            while data:
                if inflate is None:
                    if len(data) < 2 or data[:2] != _GZIP_MAGIC:
                        break
                    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
                # At most one byte past the limit: a gzip bomb never expands in memory.
                yield counted(inflate.decompress(data, MAX_BYTES + 1 - counted.total))
                if inflate.unconsumed_tail:
                    counted(b"\0" * (MAX_BYTES + 1 - counted.total))  # raises: over the limit
                data = b""
                if inflate.eof:
                    data, inflate = inflate.unused_data, None
            if inflate is None and len(data) >= 2:
                return  # trailing bytes that are no gzip member
    except zlib.error as exc:
        raise SitemapParseError(f"broken gzip: {exc}") from None
    if inflate is not None:
        raise SitemapParseError("broken gzip: truncated stream")


def _coalesced(chunks: Iterable[bytes], size: int) -> Iterator[bytes]:
    """The chunks joined into pieces of at least ``size`` bytes (the last one shorter)."""
    parts: list[bytes] = []
    held = 0
    for chunk in chunks:
        parts.append(chunk)
        held += len(chunk)
        if held >= size:
            yield b"".join(parts)
            parts, held = [], 0
    if parts:
        yield b"".join(parts)


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


class _Reader:
    """Collects records into entries (or problems), with the file limits."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.kind: SitemapKind | None = None
        self.entries: list[SitemapEntry] = []
        self.raw: list[Entry | Child] = []  # what the checker's rules read
        self.problems: list[Finding] = []
        self.records = 0

    def count(self) -> None:
        self.records += 1
        limit = MAX_INDEX_ENTRIES if self.kind == "sitemapindex" else MAX_URLS
        if self.records > limit:
            what = "sitemaps" if self.kind == "sitemapindex" else "URLs"
            raise SitemapLimitError(f"more than {limit:,} {what}; the limit is {limit:,} per file")

    def problem(self, code: str, message: str, loc: str | None, line: int | None) -> None:
        where = f" (line {line})" if line else ""
        if self.strict:
            raise SitemapParseError(f"{message}{where}", line=line)
        self.problems.append(Finding("error", code, message + where, url=loc or None))

    def add(self, record: Element | str, line: int | None) -> None:
        assert self.kind is not None
        self.count()
        loc = record if isinstance(record, str) else record_loc(self.kind, record)
        if not loc:
            self.problem("loc-missing", "a record has no location", None, line)
            return
        parts = urlsplit(loc)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            self.problem("loc-invalid", "not an absolute http(s) URL", loc, line)
            return
        try:
            if isinstance(record, str):
                entry = SitemapEntry(loc)
            elif self.kind == "urlset":
                entry = urlset_entry(record, loc)
            elif self.kind == "sitemapindex":
                entry = index_child(record, loc)
            else:
                entry = feed_entry(self.kind, record, loc)
        except InvalidEntryError as exc:
            self.problem("entry-invalid", str(exc), loc, line)
            return
        self.entries.append(entry)
        self.raw.append(_raw(self.kind, record, loc, entry))


def _raw(kind: SitemapKind, record: Element | str, loc: str, entry: SitemapEntry) -> Entry | Child:
    text = None if isinstance(record, str) else record.findtext(f"{{{SITEMAP_NS}}}lastmod")
    stamp = parse_w3c(text) if text else None
    if kind == "sitemapindex":
        return Child(loc, stamp)
    pairs = tuple((a.hreflang, a.href) for a in entry.alternates)
    return Entry(loc, stamp, text, pairs)


def _root(tag: str, line: int) -> tuple[SitemapKind, str, int]:
    """What a root element makes the document (its records' tag and depth), or why not."""
    root = _ROOTS.get(tag)
    if root is None:
        local = tag.rpartition("}")[2]
        space = tag[1:].partition("}")[0] if "}" in tag else None
        expected = "<urlset>, <sitemapindex>, <rss> or <feed>"
        if local in ("urlset", "sitemapindex"):
            why = f"root element is in namespace {space!r}, not {SITEMAP_NS!r}"
        else:
            why = f"root element is <{local}>, not {expected}"
        raise SitemapParseError(why, line=line)
    return root


def _parse_xml(data: Iterator[bytes], reader: _Reader, url: str | None) -> None:
    builder: TreeBuilder | None = None
    depth = 0
    #: The xml:base in scope at each open element (a feed's relative links resolve
    #: against it, RFC 4287 section 2), starting from the document's own URL.
    bases = [url or ""]
    record_tag, record_depth, record_line = "", 0, 0
    parser = expat.ParserCreate(namespace_separator="}")

    def refuse(*_: object) -> None:
        raise SitemapParseError(
            "DTDs and entity declarations are refused (no expansion, no external entity)",
            line=parser.CurrentLineNumber,
        )

    def start(name: str, attrs: dict[str, str]) -> None:
        nonlocal depth, builder, record_tag, record_depth, record_line
        tag = "{" + name if "}" in name else name
        depth += 1
        base = bases[-1]
        if _XML_BASE_KEY in attrs:
            base = urljoin(base, attrs[_XML_BASE_KEY])
        bases.append(base)
        if depth == 1:
            reader.kind, record_tag, record_depth = _root(tag, parser.CurrentLineNumber)
        elif builder is not None:
            builder.start(tag, {("{" + k if "}" in k else k): v for k, v in attrs.items()})
        elif depth == record_depth and tag == record_tag:
            builder = TreeBuilder()
            builder.start(tag, {XML_BASE: base} if base else {})
            record_line = parser.CurrentLineNumber

    def end(name: str) -> None:
        nonlocal depth, builder
        tag = "{" + name if "}" in name else name
        depth -= 1
        bases.pop()
        if builder is None:
            return
        builder.end(tag)
        if depth == record_depth - 1:
            record = builder.close()
            builder = None
            reader.add(record, record_line)

    def text(data: str) -> None:
        if builder is not None:
            builder.data(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse  # type: ignore[assignment]
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        for chunk in _coalesced(data, PARSE_BYTES):
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise SitemapParseError(f"not well-formed XML: {exc}", line=exc.lineno) from None


def _parse_text(first: bytes, data: Iterator[bytes], reader: _Reader) -> None:
    reader.kind = "text"
    decode = codecs.getincrementaldecoder("utf-8-sig")()
    line_number = 0
    pending: list[str] = []  # the line not ended yet, in parts (never copied per chunk)

    def lines(text: str) -> None:
        nonlocal line_number
        for line in text.splitlines():
            line_number += 1
            if line.strip():
                reader.add(line.strip(), line_number)

    try:
        for chunk in _prepend(first, data):
            text, newline, rest = decode.decode(chunk).rpartition("\n")
            if newline:
                lines("".join(pending) + text)
                pending.clear()
            pending.append(rest)
        lines("".join(pending) + decode.decode(b"", True))
    except UnicodeDecodeError as exc:
        raise SitemapParseError(f"text sitemap is not UTF-8: {exc}") from None


def parse_sitemap(source: Source, *, url: str | None = None, strict: bool = False) -> ParsedSitemap:
    """Read a sitemap (urlset, index, text, RSS 2.0 or Atom 1.0; gzipped or not).

    :param source: bytes, a path (``str`` or ``Path``), a binary file object, or an
        iterable of byte chunks (read as they come).
    :param url: where the document lives: the checker's rules (location rule, lastmods)
        then run on it, their findings in ``problems``.
    :param strict: raise :class:`SitemapParseError` on the first invalid record instead of
        leaving it out.
    :raises SitemapParseError: not well-formed, a DTD or entity declaration, an unknown
        root element, broken gzip, a text sitemap that is not UTF-8.
    :raises SitemapLimitError: over 50 MiB uncompressed, or over 50,000 URLs (or children).
    """
    reader = _Reader(strict)
    data = _unpacked(_chunks(source))
    first = b""
    for chunk in data:
        first += chunk
        if first.lstrip():
            break
    size = _Counted(_prepend(first, data))
    if first.lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"<":
        _parse_xml(iter(size), reader, url)
    else:
        _parse_text(b"", iter(size), reader)
    assert reader.kind is not None
    problems = reader.problems
    if url is not None:
        report = DocumentReport(url, kind=reader.kind)
        report.bytes = size.total
        kind = "sitemapindex" if reader.kind == "sitemapindex" else "urlset"
        raw = Parsed(kind)
        if reader.kind == "sitemapindex":
            raw.children = [r for r in reader.raw if isinstance(r, Child)]
        else:
            raw.entries = [r for r in reader.raw if isinstance(r, Entry)]
        now = datetime.now(timezone.utc)
        check_document(
            raw, report, fetched_at=now, served_at=None, last_modified=None, cross_origin=None
        )
        problems = problems + report.findings.kept
    index = reader.kind == "sitemapindex"
    entries = tuple(reader.entries)
    return ParsedSitemap(
        reader.kind,
        entries=() if index else entries,
        sitemaps=entries if index else (),
        problems=tuple(problems),
        bytes=size.total,
    )


class _Counted:
    """Passes chunks on, counting their bytes."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks
        self.total = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.total += len(chunk)
            yield chunk
