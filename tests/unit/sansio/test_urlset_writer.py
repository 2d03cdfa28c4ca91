"""Pure serializers: escaping, chunking, limits, namespaces, robots.txt."""

from __future__ import annotations

from datetime import date

import pytest
from lxml import etree

from sitemap_middleware import (
    Alternate,
    Image,
    NewsArticle,
    SitemapEntry,
    SitemapLimitError,
    Video,
)
from sitemap_middleware._sansio.index_writer import IndexWriter
from sitemap_middleware._sansio.models import entry_parts
from sitemap_middleware._sansio.text_writer import TextWriter
from sitemap_middleware._sansio.urlset_writer import (
    CHUNK_SIZE,
    Chunker,
    UrlsetWriter,
)
from sitemap_middleware._sansio.xml import escape_loc
from tests.harness.documents import check_document, page_urls, require_schemas


def _writer(**kwargs: object) -> UrlsetWriter:
    options: dict[str, object] = {
        "label": "test",
        "resolve": lambda u: "https://example.com" + u if u.startswith("/") else u,
        "max_urls": 50_000,
        "max_bytes": 52_428_800,
    }
    options.update(kwargs)
    return UrlsetWriter(**options)  # type: ignore[arg-type]


def _url(writer: UrlsetWriter | TextWriter, entry: SitemapEntry) -> str:
    """Render ``entry`` as the stream does: through entry_parts, relative locs joined."""
    loc, tail, extended = entry_parts(entry)
    return writer.urls([("https://example.com" + loc if loc[0] == "/" else loc, tail, extended)])


def _document(entries: list[SitemapEntry], **kwargs: object) -> bytes:
    writer = _writer(**kwargs)
    parts = [writer.open(entries[:1])]
    parts += [_url(writer, e) for e in entries]
    parts.append(writer.close())
    return "".join(parts).encode()


def test_render_escapes_ampersand_and_apostrophe_in_loc() -> None:
    """A query string's & and a path's ' are escaped in <loc>; the crawler reads them back."""
    entry = SitemapEntry("https://example.com/it's?a=1&b=2")
    body = _document([entry])
    assert b"<loc>https://example.com/it&apos;s?a=1&amp;b=2</loc>" in body
    assert page_urls(check_document(body)) == ["https://example.com/it's?a=1&b=2"]


def test_render_writes_optional_fields_only_when_given() -> None:
    """lastmod is never invented: an entry without one is written without one."""
    body = _document(
        [
            SitemapEntry("/a"),
            SitemapEntry("/b", lastmod=date(2024, 5, 1), changefreq="weekly", priority=1),
        ]
    )
    text = body.decode()
    assert "<url><loc>https://example.com/a</loc></url>" in text
    assert (
        "<lastmod>2024-05-01</lastmod><changefreq>weekly</changefreq><priority>1</priority>" in text
    )
    check_document(body)


def test_render_declares_namespaces_only_when_used() -> None:
    """Extension namespaces appear on the root only if the first entries use them."""
    plain = _document([SitemapEntry("/a")]).decode()
    assert "xmlns:image" not in plain and "xmlns:video" not in plain
    with_image = _document([SitemapEntry("/a", images=[Image("/i.png")])]).decode()
    assert (
        'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
        in with_image.splitlines()[1]
    )
    check_document(with_image.encode())


def test_render_declares_late_namespace_on_the_element() -> None:
    """An extension first used after the root is written declares its namespace locally."""
    entries = [
        SitemapEntry("/a"),
        SitemapEntry("/b", alternates=[Alternate("de", "/de/b"), Alternate("x-default", "/b")]),
        SitemapEntry(
            "/c",
            news=NewsArticle(
                publication_name="N & Co",
                language="en",
                publication_date="2024-05-01",
                title="T <1>",
            ),
            videos=[Video(thumbnail_loc="/t.jpg", title="V", description="D", player_loc="/p")],
        ),
    ]
    body = _document(entries)
    text = body.decode()
    assert (
        '<xhtml:link xmlns:xhtml="http://www.w3.org/1999/xhtml" rel="alternate" hreflang="de"'
        in text
    )
    assert "<news:name>N &amp; Co</news:name>" in text
    assert "<news:title>T &lt;1&gt;</news:title>" in text
    parsed = check_document(body)
    assert [p.news_story.title if p.news_story else None for p in parsed.all_pages()] == [
        None,
        None,
        "T <1>",
    ]


def test_render_enforces_url_limit() -> None:
    """Writing more URLs than the limit raises instead of producing an oversized file."""
    writer = _writer(max_urls=2)
    writer.open()
    _url(writer, SitemapEntry("/a"))
    _url(writer, SitemapEntry("/b"))
    with pytest.raises(SitemapLimitError, match="more than 2 URLs"):
        _url(writer, SitemapEntry("/c"))


def test_render_enforces_byte_limit_counting_utf8_bytes() -> None:
    """Bytes are counted as UTF-8 as they are written; the entry that would overflow raises."""
    writer = _writer(max_bytes=400)
    size = len(writer.open().encode())
    entry = SitemapEntry(
        "/a",
        news=NewsArticle(
            publication_name="ü" * 50, language="en", publication_date="2024-01-01", title="t"
        ),
    )
    with pytest.raises(SitemapLimitError, match="past 400 bytes"):
        for _ in range(10):
            size += len(_url(writer, entry).encode())
    assert size + len(writer.close()) <= 400


def test_render_limits_news_per_file() -> None:
    """More than 1,000 news URLs in one file is refused."""
    writer = _writer()
    news = NewsArticle(
        publication_name="N", language="en", publication_date="2024-01-01", title="t"
    )
    entry = SitemapEntry("/a", news=news)
    for _ in range(1000):
        _url(writer, entry)
    with pytest.raises(SitemapLimitError, match="news"):
        _url(writer, entry)


def test_chunker_emits_large_chunks() -> None:
    """Chunks are at least CHUNK_SIZE bytes, except the final flush."""
    chunker = Chunker()
    out = [c for c in (chunker.add("x" * 1000) for _ in range(200)) if c]
    out.append(chunker.flush())
    assert all(len(c) >= CHUNK_SIZE for c in out[:-1])
    assert sum(map(len, out)) == 200_000


def test_index_writer_and_text_writer() -> None:
    """The index lists children with optional lastmod; text sitemaps are one URL a line."""
    index = IndexWriter(max_bytes=52_428_800)
    body = (
        index.open() + index.sitemap("https://example.com/s-1.xml", None) + index.close()
    ).encode()
    check_document(body)
    text = TextWriter(label="t", max_urls=1, max_bytes=1000)
    assert _url(text, SitemapEntry("/a")) == "https://example.com/a\n"
    with pytest.raises(SitemapLimitError):
        _url(text, SitemapEntry("/a"))


@pytest.mark.parametrize(
    "inner",
    [
        "<url><loc>https://example.com/a</loc><priority>7</priority></url>",
        "<url><loc>https://example.com/a</loc><changefreq>sometimes</changefreq></url>",
        "<url><lastmod>2024-01-01</lastmod></url>",
        "<url><loc>https://example.com/a</loc><video:video><video:thumbnail_loc>"
        "https://example.com/t.jpg</video:thumbnail_loc><video:title>t</video:title>"
        "<video:description>d</video:description><video:duration>99999</video:duration>"
        "</video:video></url>",
        "",  # the XSD wants at least one <url>
    ],
)
def test_the_xsd_check_rejects_invalid_documents(inner: str) -> None:
    """check_document (used on every document the tests produce) can fail: it refuses these."""
    require_schemas()
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">' + inner + "</urlset>"
    ).encode()
    with pytest.raises(etree.DocumentInvalid):
        check_document(body)


@pytest.mark.anyio
async def test_urlset_is_whole_when_its_closing_tag_completes_a_chunk() -> None:
    """The closing tag completing a 64 KiB chunk made add() return that chunk, which was
    dropped: a 200 with an empty body. Found by the HTML-view work (issue #14)."""
    from sitemap_middleware import SitemapConfig
    from sitemap_middleware._engine.core import SitemapCore
    from tests.harness.core import fetch

    def page(pad: int) -> list[str]:
        return [f"/{'x' * 120}/{i}" for i in range(390)] + ["/last" + "y" * pad]

    async def body(pad: int) -> bytes:
        config = SitemapConfig(base_url="https://example.com", sections={"p": page(pad)})
        reply, data = await fetch(SitemapCore(config), "/sitemap-p-1.xml")
        assert reply.status == 200
        return data

    plain = len(await body(0))
    assert plain < CHUNK_SIZE  # one chunk: everything is flushed at the end
    # Pad the last URL so that the page minus its closing tag sits just under a chunk.
    pad = CHUNK_SIZE - plain + len("</urlset>\n") - 1
    data = await body(pad)
    assert data.endswith(b"</urlset>\n") and len(data) == plain + pad


# --- batches without extensions: written at once, exactly as URL by URL ---

from typing import Any  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PLAIN_ITEM = st.tuples(
    st.sampled_from(
        ["https://example.com/a", "https://example.com/p?x=1&y='2'", "https://example.com/é"]
    ),
    st.sampled_from(["", "<lastmod>2024-05-01</lastmod>", "<changefreq>daily</changefreq>"]),
    st.just(None),
)
_EXTENDED = SitemapEntry("https://example.com/x", images=["https://example.com/i.png"])


def _outcome(writer: UrlsetWriter, batches: list[Any], as_list: bool) -> Any:
    out = []
    for batch in batches:
        try:
            out.append(writer.urls(batch if as_list else iter(batch)))
        except SitemapLimitError as exc:
            out.append(str(exc))
            break
    return out, writer.count, writer.size, writer.full, writer.oversize


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(_PLAIN_ITEM | st.just(("https://example.com/x", "", _EXTENDED)), max_size=5),
        max_size=4,
    ),
    st.integers(1, 12),
    st.integers(150, 900),
    st.sampled_from([None, 60, 10_000]),
    st.booleans(),
)
def test_plain_batches_are_written_as_url_by_url(
    batches: list[Any], max_urls: int, max_bytes: int, room: int | None, cap: bool
) -> None:
    results = []
    for as_list in (True, False):  # a list may take the batch path; an iterator never does
        writer = _writer(max_urls=max_urls, max_bytes=max_bytes, room=room)
        writer.cap = cap
        writer.open()
        results.append(_outcome(writer, batches, as_list))
    assert results[0] == results[1]


def test_plain_sizes_are_the_measured_sizes() -> None:
    writer = _writer()
    batch = [
        ("https://example.com/p?x=1&y='2'", "<lastmod>2024-05-01</lastmod>", None),
        ("https://example.com/a", "", None),
    ]
    locs, tails = [loc for loc, _, _ in batch], [tail for _, tail, _ in batch]
    assert writer.plain_sizes(locs, map(len, tails)) == writer.sizes(batch)
    assert writer.plain_sizes(locs, map(len, tails)) == [len(writer.urls([item])) for item in batch]
    loc_size = sum(len(escape_loc(loc)) for loc in locs)
    assert writer.plain_size(len(locs), loc_size, sum(map(len, tails))) == sum(writer.sizes(batch))


_PLAIN_ROWS: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {
        "loc": st.sampled_from(
            ["https://example.com/a", "https://example.com/p?x=1&y='2'", "https://example.com/b"]
        )
    },
    optional={
        "lastmod": st.sampled_from(["2024-05-01", "2024-05-01T10:20:30+02:00"]),
        "changefreq": st.sampled_from(["daily", "never"]),
        "priority": st.sampled_from([0.5, 1.0]),
    },
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(_PLAIN_ROWS, min_size=1, max_size=6).map(lambda rows: [rows[0]] * len(rows))
        | st.lists(_PLAIN_ROWS, min_size=1, max_size=6).map(
            lambda rows: [SitemapEntry(**row) for row in rows]
        ),
        max_size=4,
    ),
    st.integers(1, 12),
    st.integers(150, 900),
    st.sampled_from([None, 60, 10_000]),
    st.booleans(),
)
def test_batches_admitted_whole_are_written_as_url_by_url(
    batches: list[Any], max_urls: int, max_bytes: int, room: int | None, cap: bool
) -> None:
    """A batch admitted at once (columns, no tuple per URL) is written exactly as its
    URLs one by one: the same text, counts, refusals and the same page left full."""
    from sitemap_middleware._sansio.batches import plain_batch
    from sitemap_middleware._sansio.urls import BaseURL

    base = BaseURL.parse("https://example.com")
    plain = [plain_batch(raw, base) for raw in batches]
    assert all(batch is not None for batch in plain)
    results = []
    for whole in (True, False):
        writer = _writer(max_urls=max_urls, max_bytes=max_bytes, room=room)
        writer.cap = cap
        writer.open()
        given_ = [batch if whole else iter(list(batch)) for batch in plain]  # type: ignore[arg-type]
        results.append(_outcome(writer, given_, True))
    assert results[0] == results[1]
