"""`parse_sitemap`: what the middleware renders reads back as the same entries; hostile
documents (bombs, DTDs, over the limits) are refused with the named errors."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware import (
    Alternate,
    Image,
    NewsArticle,
    SitemapConfig,
    SitemapEntry,
    SitemapLimitError,
    Video,
)
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.ops import SitemapParseError, parse_sitemap
from sitemap_middleware.providers import StaticProvider
from tests.harness.core import fetch

BASE = "https://example.com"
URLSET = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'

_WORD = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 &<>'\"é-]{0,18}[A-Za-z0-9]", fullmatch=True)
_PATH = st.from_regex(r"/[a-z0-9]{1,8}(/[a-z0-9é ]{1,8})?", fullmatch=True)
_STAMP = st.one_of(
    st.dates(date(2000, 1, 1), date(2025, 1, 1)),
    st.builds(
        lambda d, h: datetime(d.year, d.month, d.day, tzinfo=timezone(timedelta(hours=h))),
        st.dates(date(2000, 1, 1), date(2025, 1, 1)),
        st.integers(-11, 12),
    ),
    st.datetimes(datetime(2000, 1, 1), datetime(2025, 1, 1), timezones=st.just(timezone.utc)).map(
        lambda d: d.replace(microsecond=0)
    ),
)
_VIDEO = st.builds(
    Video,
    thumbnail_loc=_PATH.map(lambda p: BASE + p + ".jpg"),
    title=_WORD,
    description=_WORD,
    content_loc=_PATH.map(lambda p: BASE + p + ".mp4"),
    player_loc=st.none() | _PATH.map(lambda p: BASE + p),
    duration=st.none() | st.integers(1, 28800),
    rating=st.none() | st.integers(0, 50).map(lambda n: n / 10),
    view_count=st.none() | st.integers(0, 10**9),
    publication_date=st.none() | _STAMP,
    tags=st.lists(_WORD, max_size=3).map(tuple),
    family_friendly=st.none() | st.booleans(),
    restriction=st.none() | st.just(("allow", ("DE", "FR"))),
    platform=st.none() | st.just(("deny", ("tv",))),
    live=st.none() | st.booleans(),
)
_NEWS = st.builds(
    NewsArticle,
    publication_name=_WORD,
    language=st.sampled_from(["en", "de", "zh-cn"]),
    publication_date=_STAMP,
    title=_WORD,
)


@st.composite
def _entries(draw: st.DrawFn) -> list[SitemapEntry]:
    paths = draw(st.lists(_PATH, min_size=1, max_size=6, unique=True))
    out = []
    for path in paths:
        out.append(
            SitemapEntry(
                BASE + path,
                lastmod=draw(st.none() | _STAMP),
                changefreq=draw(st.none() | st.sampled_from(["daily", "never"])),
                priority=draw(st.none() | st.integers(0, 10).map(lambda n: n / 10)),
                images=draw(st.lists(_PATH.map(lambda p: Image(BASE + p)), max_size=2)),
                videos=draw(st.lists(_VIDEO, max_size=1)),
                news=draw(st.none() | _NEWS),
                alternates=draw(
                    st.just([])
                    | st.just([Alternate("en", BASE + path), Alternate("de", BASE + "/de")])
                ),
            )
        )
    return out


def _render(entries: list[SitemapEntry], path: str = "/sitemap.xml", **kw: Any) -> bytes:
    config = SitemapConfig(base_url=BASE, sections={"pages": StaticProvider(entries)}, **kw)

    async def get() -> bytes:
        reply, body = await fetch(SitemapCore(config), path)
        assert reply.status == 200, body
        return body

    return anyio.run(get)


@pytest.mark.slow  # a property run over many examples
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_entries())
def test_parse_reads_back_what_the_middleware_renders(entries: list[SitemapEntry]) -> None:
    """entries -> rendered by the library -> parsed -> the same entries, extensions too."""
    body = _render(entries)
    parsed = parse_sitemap(body, url=BASE + "/sitemap.xml")
    assert parsed.kind == "urlset"
    assert [p for p in parsed.problems if p.severity == "error"] == []
    assert list(parsed.entries) == entries
    # gzipped, and fed a few bytes at a time: the same
    chunks = iter([gzip.compress(body)[i : i + 7] for i in range(0, len(body), 7)])
    assert parse_sitemap(gzip.compress(body)).entries == parsed.entries
    assert parse_sitemap(chunks).entries == parsed.entries


def test_parse_reads_an_index_and_a_text_sitemap() -> None:
    entries = [SitemapEntry(f"{BASE}/p{n}", lastmod="2024-05-01") for n in range(25)]
    index = parse_sitemap(_render(entries, "/sitemap.xml", max_urls_per_page=10))
    assert index.kind == "sitemapindex" and index.entries == ()
    assert [s.loc for s in index.sitemaps] == [f"{BASE}/sitemap-pages-{n}.xml" for n in (1, 2, 3)]
    text = _render(entries, "/sitemap.txt", text_sitemaps=True)
    parsed = parse_sitemap(text)
    assert parsed.kind == "text"
    assert [e.loc for e in parsed.entries] == [e.loc for e in entries]


def test_parse_reads_rss_and_atom_feeds(tmp_path: Path) -> None:
    rss = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><title>a</title><link>https://example.com/a</link>
<pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>
<item><link> https://example.com/b </link></item></channel></rss>"""
    parsed = parse_sitemap(rss)
    assert parsed.kind == "rss"
    assert parsed.entries == (
        SitemapEntry(
            "https://example.com/a", lastmod=datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
        ),
        SitemapEntry("https://example.com/b"),
    )
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<entry><link rel="edit" href="https://example.com/edit"/><link href="https://example.com/c"/>
<updated>2024-05-01T10:00:00Z</updated></entry></feed>"""
    (tmp_path / "feed.atom").write_bytes(atom)
    parsed = parse_sitemap(tmp_path / "feed.atom")
    assert parsed.kind == "atom"
    assert parsed.entries == (
        SitemapEntry("https://example.com/c", lastmod="2024-05-01T10:00:00Z"),
    )


def test_parse_leaves_out_invalid_records_or_raises_when_strict() -> None:
    body = (
        f"{URLSET}<url><loc>https://example.com/ok</loc></url>"
        "<url><loc>https://example.com/bad</loc><priority>7</priority></url>"
        "<url><loc>/relative</loc></url><url></url></urlset>"
    ).encode()
    parsed = parse_sitemap(body)
    assert [e.loc for e in parsed.entries] == ["https://example.com/ok"]
    assert [p.code for p in parsed.problems] == ["entry-invalid", "loc-invalid", "loc-missing"]
    with pytest.raises(SitemapParseError, match="priority") as caught:
        parse_sitemap(body, strict=True)
    assert caught.value.line == 1


def test_parse_with_url_applies_the_checkers_rules() -> None:
    body = (
        f"{URLSET}<url><loc>https://example.com/shop/a</loc></url>"
        "<url><loc>https://example.com/elsewhere</loc></url></urlset>"
    ).encode()
    parsed = parse_sitemap(body, url="https://example.com/shop/sitemap.xml")
    assert [(p.code, p.url) for p in parsed.problems] == [
        ("loc-outside", "https://example.com/elsewhere")
    ]


@pytest.mark.parametrize(
    "body",
    [
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
        + URLSET.encode()
        + b"<url><loc>https://example.com/&b;</loc></url></urlset>",
        b'<?xml version="1.0"?><!DOCTYPE urlset SYSTEM "http://evil.example/x.dtd">'
        + URLSET.encode()
        + b"</urlset>",
        b'<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        + URLSET.encode()
        + b"<url><loc>&x;</loc></url></urlset>",
    ],
    ids=["billion-laughs", "external-dtd", "external-entity"],
)
def test_parse_refuses_dtds_and_entities(body: bytes) -> None:
    with pytest.raises(SitemapParseError, match="DTDs and entity declarations are refused"):
        parse_sitemap(body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (URLSET.encode() + b"<url><loc>https://example.com/</loc>", "not well-formed"),
        (b"<html><body/></html>", "root element is <html>"),
        (b'<urlset xmlns="urn:other"/>', "namespace 'urn:other'"),
        (gzip.compress(URLSET.encode() + b"</urlset>", mtime=0)[:-9], "broken gzip"),
        (b"https://example.com/\xff\n", "not UTF-8"),
    ],
)
def test_parse_malformed_input_is_a_parse_error(body: bytes, message: str) -> None:
    with pytest.raises(SitemapParseError, match=message):
        parse_sitemap(body)
    assert issubclass(SitemapParseError, ValueError)


def _bomb() -> Iterator[bytes]:
    """A gzip stream of 60 MiB of spaces, compressed to ~60 KiB, in chunks."""
    pack = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    yield pack.compress(URLSET.encode())
    block = b" " * 1_048_576
    for _ in range(60):
        yield pack.compress(block)
    yield pack.compress(b"</urlset>") + pack.flush()


def test_parse_refuses_a_gzip_bomb_at_the_limit() -> None:
    with pytest.raises(SitemapLimitError, match="52,428,800 bytes"):
        parse_sitemap(_bomb())


@pytest.mark.slow
def test_parse_refuses_over_50000_urls() -> None:
    def urls(n: int) -> Iterator[bytes]:
        yield URLSET.encode()
        for i in range(n):
            yield f"<url><loc>https://example.com/{i}</loc></url>".encode()
        yield b"</urlset>"

    assert len(parse_sitemap(urls(50_000)).entries) == 50_000
    with pytest.raises(SitemapLimitError, match="more than 50,000 URLs"):
        parse_sitemap(urls(50_001))
    lines = b"".join(b"https://example.com/%d\n" % i for i in range(50_001))
    with pytest.raises(SitemapLimitError, match="more than 50,000 URLs"):
        parse_sitemap(lines)


def test_parse_resolves_feed_links_against_xml_base_and_the_documents_url() -> None:
    """RFC 4287 section 2: relative links resolve against xml:base (of the feed, the
    entry, the link), else the document's URL; before, every entry was 'not absolute'."""
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://example.com/blog/">
<entry><link href="first"/><updated>2024-05-01T10:00:00Z</updated></entry>
<entry xml:base="/news/"><link href="second"/></entry>
<entry><link xml:base="https://example.com/x/" href="third"/></entry></feed>"""
    parsed = parse_sitemap(atom)
    assert parsed.problems == ()
    assert [e.loc for e in parsed.entries] == [
        "https://example.com/blog/first",
        "https://example.com/news/second",
        "https://example.com/x/third",
    ]
    relative = b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="/a"/></entry></feed>'
    parsed = parse_sitemap(relative, url="https://example.com/feed.atom")
    assert [e.loc for e in parsed.entries] == ["https://example.com/a"]


def test_parse_takes_an_atom_entrys_own_link_not_its_sources() -> None:
    """An entry's <source> holds the links of the feed it came from (RFC 4287 4.2.11)."""
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom"><entry>
<source><link href="https://other.example/"/></source>
<link href="https://example.com/post"/></entry></feed>"""
    assert [e.loc for e in parse_sitemap(atom).entries] == ["https://example.com/post"]


def test_parse_reads_every_member_of_a_gzip_file() -> None:
    """``cat a.gz b.gz`` is one gzip file (RFC 1952 2.2): before, the second member was
    silently dropped; trailing bytes that are no member are still ignored."""
    body = gzip.compress(b"https://example.com/a\n") + gzip.compress(b"https://example.com/b\n")
    expected = ["https://example.com/a", "https://example.com/b"]
    assert [e.loc for e in parse_sitemap(body).entries] == expected
    chunks = [bytes([byte]) for byte in body + b"\0\0\0"]  # members split anywhere
    assert [e.loc for e in parse_sitemap(chunks).entries] == expected
    with pytest.raises(SitemapParseError, match="truncated"):
        parse_sitemap(body[:-3])


@pytest.mark.slow  # 40 MiB documents
def test_parse_is_linear_in_a_huge_line_or_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 40 MiB text line or attribute: the text reader joined its pending line again
    per 64 KiB chunk, and expat 2.5 re-scans an unfinished token on every call (each took
    over 10 s). Held without a clock: expat is handed the document in PARSE_BYTES pieces,
    not one call per 64 KiB chunk (640 re-scans of a growing token)."""
    from sitemap_middleware._ops import parse

    size = 40 * 1024 * 1024
    problems = parse_sitemap(b"https://example.com/" + b"a" * size).problems
    assert [p.code for p in problems] == ["entry-invalid"]
    calls: list[int] = []
    coalesced = parse._coalesced

    def counted(data: Any, least: int) -> Iterator[bytes]:
        for piece in coalesced(data, least):
            calls.append(len(piece))
            yield piece

    monkeypatch.setattr(parse, "_coalesced", counted)
    attribute = (
        f'{URLSET}<url a="'.encode()
        + b"x" * size
        + b'"><loc>https://example.com/</loc></url></urlset>'
    )
    assert len(parse_sitemap(attribute).entries) == 1
    assert len(calls) <= size // parse.PARSE_BYTES + 2
