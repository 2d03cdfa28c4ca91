"""The core end to end, in process: routing, planning, validators, errors."""

from __future__ import annotations

import gzip
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from sitemap_middleware import (
    HTTPSettings,
    Renders,
    Section,
    SitemapEntry,
    TrustedHosts,
)
from sitemap_middleware._sansio.urlset_writer import CHUNK_SIZE
from tests.harness.core import fetch, header, make_core
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.providers import CountingProvider

pytestmark = pytest.mark.anyio


async def test_root_is_urlset_when_everything_fits() -> None:
    """sitemap.xml is a urlset of every section when all entries fit in one file."""
    core = make_core({"a": ["/1", "/2"], "b": ["/3"]})
    reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200
    assert page_urls(check_document(body)) == [f"https://example.com/{i}" for i in (1, 2, 3)]


async def test_root_is_index_when_entries_overflow_one_file() -> None:
    """Past max_urls_per_page, sitemap.xml serves the index; no URL is dropped."""
    provider = CountingProvider(25)
    core = make_core({"products": provider, "pages": ["/"]}, max_urls_per_page=10)
    reply, body = await fetch(core, "/sitemap.xml")
    children = child_urls(check_document(body))
    assert children == [f"https://example.com/sitemap-products-{i}.xml" for i in (1, 2, 3)] + [
        "https://example.com/sitemap-pages-1.xml"
    ]
    assert provider.iterations == 1  # one measuring pass plans the pages, kept per version
    seen = []
    for number in (1, 2, 3):
        _, page = await fetch(core, f"/sitemap-products-{number}.xml")
        seen += page_urls(check_document(page))
    assert seen == [f"https://example.com/products/{i}?ref=a&b={i}" for i in range(25)]
    reply, _ = await fetch(core, "/sitemap-products-4.xml")
    assert reply.status == 404


async def test_index_lists_page_lastmod_from_iteration_when_provider_cannot_count() -> None:
    """Without count() the index is planned by iterating; each child carries its lastmod."""

    def generate() -> Iterator[dict[str, str]]:
        for day in range(1, 6):
            yield {"loc": f"/d/{day}", "lastmod": f"2024-01-0{day}"}

    core = make_core({"days": generate}, max_urls_per_page=2)
    _, body = await fetch(core, "/sitemap_index.xml")
    assert b"<lastmod>2024-01-02T00:00:00+00:00</lastmod>" in body
    assert b"<lastmod>2024-01-05T00:00:00+00:00</lastmod>" in body
    assert len(child_urls(check_document(body))) == 3
    _, page = await fetch(core, "/sitemap-days-3.xml")
    assert page_urls(check_document(page)) == ["https://example.com/d/5"]


async def test_conditional_request_is_answered_without_iterating() -> None:
    """A matching If-None-Match gets a 304 and the provider's entries are never touched."""
    provider = CountingProvider(100)
    core = make_core({"p": provider})
    first, _ = await fetch(core, "/sitemap-p-1.xml", accept_encoding="gzip")
    etag = header(first, "ETag")
    assert etag is not None and etag.endswith('-gzip"')
    before = provider.iterations
    again, body = await fetch(core, "/sitemap-p-1.xml", accept_encoding="gzip", if_none_match=etag)
    assert again.status == 304 and body == b""
    assert provider.iterations == before
    assert header(again, "Content-Type") is None and header(again, "ETag") == etag
    modified = header(first, "Last-Modified")
    assert modified is not None
    again, _ = await fetch(
        core, "/sitemap-p-1.xml", accept_encoding="gzip", if_modified_since=modified
    )
    assert again.status == 304
    # The identity representation has a different tag, so the gzip tag does not match it.
    plain, _ = await fetch(core, "/sitemap-p-1.xml", if_none_match=etag)
    assert plain.status == 200
    assert provider.iterations == before  # the same version: answered from the stored render


async def test_head_answers_headers_without_rendering() -> None:
    """HEAD sends GET's headers and no body; cold, it plans the section (a one-page section:
    its status from the batches the plan read, no second pass); once GET has stored the
    render, it reads nothing."""
    provider = CountingProvider(10)
    core = make_core({"p": provider})
    head, body = await fetch(core, "/sitemap-p-1.xml", method="HEAD")
    assert head.status == 200 and body == b""
    assert provider.iterations == 1  # the plan, kept for the version
    get, _ = await fetch(core, "/sitemap-p-1.xml")
    assert head.headers == get.headers
    assert provider.iterations == 2
    again, _ = await fetch(core, "/sitemap-p-1.xml", method="HEAD")
    assert again.headers == get.headers and provider.iterations == 2


async def test_head_status_matches_get() -> None:
    """HEAD answers the status GET would (404 for an empty page, 503 for a failing provider),
    and error replies to HEAD carry no body."""

    def broken() -> list[str]:
        raise RuntimeError("database down")

    def invalid() -> list[str]:
        return ["not a url"]

    core = make_core({"bad": broken, "empty": invalid, "good": ["/a"]})
    for path, status in [
        ("/sitemap-bad-1.xml", 503),
        ("/sitemap-empty-1.xml", 404),
        ("/sitemap-good-2.xml", 404),
        ("/sitemap-good-1.xml", 200),
    ]:
        get, _ = await fetch(core, path)
        head, body = await fetch(core, path, method="HEAD")
        assert (get.status, head.status, body) == (status, status, b""), path
        assert header(head, "Content-Length") == header(get, "Content-Length")
    reply, body = await fetch(core, "/sitemap.xml", method="POST")
    assert reply.status == 405 and body


async def test_if_none_match_star_on_a_missing_page_is_404() -> None:
    """If-None-Match: * matches only a representation that exists (RFC 9110 §13.1.2)."""

    def invalid() -> list[str]:
        return ["not a url"]

    core = make_core({"p": CountingProvider(3), "q": invalid})
    reply, _ = await fetch(core, "/sitemap-q-1.xml", if_none_match="*")
    assert reply.status == 404
    reply, _ = await fetch(core, "/sitemap-p-1.xml", if_none_match="*")
    assert reply.status == 304


async def test_host_then_method_for_every_document() -> None:
    """A bad Host is 400 before a bad method is 405, for robots.txt and sitemaps alike."""
    core = make_core({"p": ["/a"]}, hosts=TrustedHosts(hosts=["example.com"]))
    for path in ("/robots.txt", "/sitemap.xml", "/sitemap-p-1.xml"):
        reply, _ = await fetch(core, path, method="POST", host="evil.example")
        assert reply.status == 400, path
        reply, _ = await fetch(core, path, method="POST", host="example.com")
        assert reply.status == 405, path
        assert header(reply, "Allow") == "GET, HEAD"


async def test_gzip_body_decompresses_to_identity_body() -> None:
    """gzip is negotiated; its body decompresses to exactly the identity body."""
    core = make_core({"p": CountingProvider(3000)})
    plain, identity = await fetch(core, "/sitemap-p-1.xml")
    zipped, compressed = await fetch(
        core, "/sitemap-p-1.xml", accept_encoding="gzip;q=1, identity;q=0.5"
    )
    assert (
        header(zipped, "Content-Encoding") == "gzip" and header(plain, "Content-Encoding") is None
    )
    assert header(zipped, "Vary") == header(plain, "Vary") == "Accept-Encoding"
    assert gzip.decompress(compressed) == identity
    check_document(identity)
    gz_file, data = await fetch(core, "/sitemap-p-1.xml.gz")
    assert header(gz_file, "Content-Type") == "application/gzip"
    assert header(gz_file, "Content-Encoding") is None and header(gz_file, "Vary") is None
    assert gzip.decompress(data) == identity


async def test_method_not_allowed_and_not_acceptable() -> None:
    """Other methods get 405 with Allow; refusing every coding gets 406."""
    core = make_core({"p": ["/"]})
    reply, _ = await fetch(core, "/sitemap.xml", method="POST")
    assert reply.status == 405 and header(reply, "Allow") == "GET, HEAD"
    reply, _ = await fetch(core, "/robots.txt", method="DELETE")
    assert reply.status == 405
    reply, _ = await fetch(core, "/sitemap.xml", accept_encoding="identity;q=0, gzip;q=0")
    assert reply.status == 406


async def test_empty_section_is_not_listed_and_its_page_is_404() -> None:
    """An empty section has no pages: the index omits it and its page 1 is 404."""
    core = make_core({"news": [], "pages": ["/", "/a"]}, max_urls_per_page=1)
    _, body = await fetch(core, "/sitemap_index.xml")
    assert child_urls(check_document(body)) == [
        "https://example.com/sitemap-pages-1.xml",
        "https://example.com/sitemap-pages-2.xml",
    ]
    reply, _ = await fetch(core, "/sitemap-news-1.xml")
    assert reply.status == 404
    empty = make_core({"news": []})
    reply, _ = await fetch(empty, "/sitemap.xml")
    assert reply.status == 404


async def test_invalid_entries_are_skipped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    """Bad entries from a provider are left out with a warning naming them; the file stays valid."""

    async def entries() -> AsyncIterator[Any]:
        yield "/ok"
        yield {"loc": "/bad-priority", "priority": 7}
        yield "https://other.example/elsewhere"
        yield {"loc": "/bad-date", "lastmod": "yesterday"}
        yield "/ok2"

    core = make_core({"p": entries})
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        _, body = await fetch(core, "/sitemap-p-1.xml")
    assert page_urls(check_document(body)) == ["https://example.com/ok", "https://example.com/ok2"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("invalid priority 7" in m for m in messages)
    assert any("https://other.example/elsewhere" in m and "outside" in m for m in messages)
    assert any("invalid lastmod 'yesterday'" in m for m in messages)


async def test_strict_mode_raises_instead(caplog: pytest.LogCaptureFixture) -> None:
    """In strict mode an invalid entry gives a 500, found while planning, before any byte."""
    core = make_core({"p": [{"loc": "/a", "priority": 0.1}]}, strict=True)
    assert (await fetch(core, "/sitemap-p-1.xml"))[0].status == 200

    async def late_bad() -> AsyncIterator[Any]:
        for i in range(600):
            yield f"/ok/{i}"
        yield {"loc": "/x", "priority": 7}

    strict = make_core({"p": late_bad, "q": lambda: [{"loc": "/x", "priority": 9}]}, strict=True)
    reply, _ = await fetch(strict, "/sitemap-q-1.xml")
    assert reply.status == 500
    with caplog.at_level(logging.ERROR, logger="sitemap_middleware"):
        reply, _ = await fetch(strict, "/sitemap-p-1.xml")
    assert reply.status == 500
    assert any("invalid priority 7" in r.getMessage() for r in caplog.records)


async def test_failing_section_gets_503_while_others_serve(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A provider failing before its first entry gives 503 + Retry-After; others keep serving."""

    async def broken() -> AsyncIterator[str]:
        raise ConnectionError("db down")
        yield "/never"  # pragma: no cover

    core = make_core({"bad": broken, "good": ["/a"]}, http=HTTPSettings(retry_after=30))
    with caplog.at_level(logging.ERROR, logger="sitemap_middleware"):
        reply, body = await fetch(core, "/sitemap-bad-1.xml")
    assert reply.status == 503 and header(reply, "Retry-After") == "30"
    assert b"<urlset" not in body
    assert any("db down" in r.getMessage() for r in caplog.records)
    reply, body = await fetch(core, "/sitemap-good-1.xml")
    assert reply.status == 200 and page_urls(check_document(body)) == ["https://example.com/a"]
    reply, body = await fetch(core, "/sitemap_index.xml")
    assert child_urls(check_document(body)) == ["https://example.com/sitemap-good-1.xml"]
    assert header(reply, "Cache-Control") == "no-store" and header(reply, "ETag") is None
    reply, body = await fetch(core, "/sitemap.xml")  # not everything is known: the index
    assert child_urls(check_document(body)) == ["https://example.com/sitemap-good-1.xml"]
    assert (await fetch(core, "/robots.txt"))[0].status == 200


async def test_mid_stream_failure_aborts_without_closing_tag(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """After headers, a provider failure raises out of the body: no closing tag after a gap."""
    provider = CountingProvider(5000, fail_after=2000, healthy_passes=1)
    core = make_core({"p": provider}, max_urls_per_page=4000)  # two pages: the render reads again
    from tests.harness.core import RequestInfo

    request = RequestInfo("GET", "/sitemap-p-1.xml", {})
    target = core.route(request)
    assert target is not None
    reply = await core.respond(target, request)
    assert reply.status == 200 and reply.body is not None
    received = b""
    from sitemap_middleware import ProviderError

    with (
        caplog.at_level(logging.ERROR, logger="sitemap_middleware"),
        pytest.raises(ProviderError, match="database went away"),
    ):
        async for chunk in reply.body:
            received += chunk
    assert b"</urlset>" not in received
    assert provider.closed == 2  # the planning pass, then the aborted page
    assert any("aborting" in r.getMessage() for r in caplog.records)


async def test_hanging_provider_is_cut_off_by_timeout() -> None:
    """A provider that hangs before its first entry gets a 503 after provider_timeout."""
    core = make_core({"p": CountingProvider(10, hang_after=0)}, provider_timeout=0.2)
    reply, _ = await fetch(core, "/sitemap-p-1.xml")
    assert reply.status == 503


async def test_forged_host_never_reaches_urls() -> None:
    """Host and X-Forwarded-* headers never change URLs unless opted in."""
    core = make_core({"p": ["/a"]})
    _, body = await fetch(
        core,
        "/sitemap.xml",
        host="evil.example",
        x_forwarded_host="evil.example",
        x_forwarded_proto="http",
    )
    assert b"evil" not in body
    _, robots = await fetch(core, "/robots.txt", host="evil.example")
    assert b"evil" not in robots and b"https://example.com/sitemap.xml" in robots


async def test_news_section_pages_hold_at_most_1000() -> None:
    """Section(max_urls=1000) caps a news section's pages below the global limit."""
    entries = [SitemapEntry(f"/n/{i}") for i in range(1500)]
    core = make_core({"news": Section(entries, max_urls=1000)})
    _, body = await fetch(core, "/sitemap.xml")
    assert len(child_urls(check_document(body))) == 2


async def test_content_etags_give_etag_for_unversioned_providers() -> None:
    """Renders(etag="content") gives an ETag (and 304s) to providers that report nothing."""
    calls = []

    def entries() -> list[str]:
        calls.append(1)
        return ["/a", "/b"]

    core = make_core({"p": entries}, renders=Renders(etag="content"))
    first, body = await fetch(core, "/sitemap-p-1.xml")
    etag = header(first, "ETag")
    assert etag is not None
    again, _ = await fetch(core, "/sitemap-p-1.xml", if_none_match=etag)
    assert again.status == 304
    # One pass: the plan (its render replays what planning read, a one-page section);
    # the second request came from the stored render.
    assert len(calls) == 1
    plain = make_core({"p": entries})
    reply, _ = await fetch(plain, "/sitemap-p-1.xml")
    assert header(reply, "ETag") is None


async def test_content_etags_stream_without_validators_past_their_bound() -> None:
    """A page larger than Renders.max_bytes streams whole, without an ETag from its bytes."""
    core = make_core(
        {"p": lambda: [f"/x/{i}" for i in range(3000)]},
        renders=Renders(etag="content", max_bytes=70_000),
    )
    reply, body = await fetch(core, "/sitemap-p-1.xml")
    assert header(reply, "ETag") is None
    assert len(page_urls(check_document(body))) == 3000


async def test_stylesheet_and_text_sitemaps() -> None:
    """The XSL view is served and referenced; text sitemaps list one URL a line."""
    core = make_core({"p": ["/a", "/b"]}, stylesheet=True, text_sitemaps=True)
    _, body = await fetch(core, "/sitemap.xml")
    assert b'<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>' in body
    check_document(body)
    reply, xsl = await fetch(core, "/sitemap.xsl")
    assert header(reply, "Content-Type") == "text/xsl; charset=utf-8" and b"xsl:stylesheet" in xsl
    reply, text = await fetch(core, "/sitemap.txt")
    assert text == b"https://example.com/a\nhttps://example.com/b\n"
    assert header(reply, "Content-Type") == "text/plain; charset=utf-8"
    _, text = await fetch(core, "/sitemap-p-1.txt")
    assert text.splitlines() == [b"https://example.com/a", b"https://example.com/b"]


async def test_etag_depends_on_configuration_and_data() -> None:
    """Same data and configuration give the same ETag; changing either changes it."""
    tag = header((await fetch(make_core({"p": CountingProvider(5)}), "/sitemap.xml"))[0], "ETag")
    assert tag == header(
        (await fetch(make_core({"p": CountingProvider(5)}), "/sitemap.xml"))[0], "ETag"
    )
    assert tag != header(
        (await fetch(make_core({"p": CountingProvider(6)}), "/sitemap.xml"))[0], "ETag"
    )
    assert tag != header(
        (await fetch(make_core({"p": CountingProvider(5)}, stylesheet=True), "/sitemap.xml"))[0],
        "ETag",
    )


async def test_provider_hanging_mid_stream_is_cut_off() -> None:
    """A provider that stalls after the first batch is cut off by the timeout: the stream aborts."""
    from sitemap_middleware import ProviderTimeoutError

    provider = CountingProvider(3000, hang_after=1500, healthy_passes=1)
    # Two pages: the render reads again (a one-page section's render writes the plan's read).
    core = make_core({"p": provider}, provider_timeout=0.2, max_urls_per_page=2000)
    from tests.harness.core import RequestInfo

    request = RequestInfo("GET", "/sitemap-p-1.xml", {})
    target = core.route(request)
    assert target is not None
    reply = await core.respond(target, request)
    assert reply.status == 200 and reply.body is not None
    with pytest.raises(ProviderTimeoutError, match="no answer within 0.2 s"):
        async for _ in reply.body:
            pass
    assert provider.closed == 2  # the planning pass, then the cut-off page


async def test_crawler_reads_image_and_news_data_back() -> None:
    """ultimate-sitemap-parser reads the image and news extensions we write."""
    from sitemap_middleware import Image, NewsArticle

    entry = SitemapEntry(
        "/a",
        images=[Image("/i.png"), Image("https://cdn.example.net/j.png")],
        news=NewsArticle(
            publication_name="Times",
            language="en",
            publication_date="2024-05-01",
            title="Hello & bye",
        ),
    )
    _, body = await fetch(make_core({"p": [entry]}, news_max_age=None), "/sitemap.xml")
    (page,) = check_document(body).all_pages()
    assert page.images is not None and page.news_story is not None
    assert [image.loc for image in page.images] == [
        "https://example.com/i.png",
        "https://cdn.example.net/j.png",
    ]
    assert page.news_story.title == "Hello & bye" and page.news_story.publication_name == "Times"


# -- review-core: defects found by the hostile review ---------------------------------


async def test_if_modified_since_on_a_missing_page_is_404() -> None:
    """A page GET answers 404 must not be 304 to If-Modified-Since (as for If-None-Match: *)."""
    from datetime import datetime, timezone

    from sitemap_middleware.providers import ProviderVersion

    class Versioned:  # no count(): a past-the-end page is found empty when opened
        async def entries(self) -> AsyncIterator[str]:
            yield "/x"

        async def version(self) -> ProviderVersion:
            return ProviderVersion(last_modified=datetime(2024, 1, 1, tzinfo=timezone.utc))

    core = make_core({"v": Versioned()})
    get, _ = await fetch(core, "/sitemap-v-7.xml")
    assert get.status == 404
    reply, _ = await fetch(
        core, "/sitemap-v-7.xml", if_modified_since="Mon, 01 Jan 2035 00:00:00 GMT"
    )
    assert reply.status == 404


async def test_head_closes_the_provider_before_answering() -> None:
    """HEAD reads the first batch; the provider's iterator is closed then, not at GC."""
    closed: list[bool] = []

    async def pages() -> AsyncIterator[str]:
        try:
            for number in range(2000):
                yield f"/p/{number}"
        finally:
            closed.append(True)

    core = make_core({"g": pages})
    reply, _ = await fetch(core, "/sitemap-g-1.xml", method="HEAD")
    assert reply.status == 200
    assert closed == [True]  # the planning pass (its first batch is what HEAD read)
    reply, _ = await fetch(core, "/sitemap-g-1.xml", method="HEAD")  # the plan is kept
    assert reply.status == 200
    assert closed == [True, True]  # HEAD's own first batch, closed


async def test_methods_are_case_sensitive() -> None:
    """RFC 9110 §9.1: "get" is not GET; it gets a 405 like any other unknown method."""
    core = make_core({"p": ["/a"]})
    reply, _ = await fetch(core, "/sitemap.xml", method="get")
    assert reply.status == 405


async def test_urlset_is_whole_when_its_end_lands_next_to_a_chunk_boundary() -> None:
    """However close to a 64 KiB chunk boundary the closing tag falls, no byte is lost.

    (Bug: the chunk that ``</urlset>`` completed was dropped and only the final, empty
    flush was sent: a 200 with an empty body.)
    """
    base = [f"/items/{i:05d}" for i in range(1190)]

    async def body_for(pad: int) -> bytes:
        entries = [*base, "/last/" + "x" * pad]
        reply, body = await fetch(make_core({"p": entries}), "/sitemap-p-1.xml")
        assert reply.status == 200
        assert len(page_urls(check_document(body))) == len(entries), pad
        return body

    start = len(await body_for(0))
    closing = len(b"</urlset>\n")
    assert start < CHUNK_SIZE - closing
    for pad in range(CHUNK_SIZE - start - 2, CHUNK_SIZE - start + closing + 2):
        assert len(await body_for(pad)) == start + pad


@pytest.mark.parametrize("last", [1, 10, 5000])
async def test_text_body_sends_every_byte_when_the_last_piece_completes_a_chunk(last: int) -> None:
    """A document written piece by piece (the index views) arrives whole at any length."""
    from sitemap_middleware._engine.bodies import text_body

    pieces = ["a" * (CHUNK_SIZE - 3), "b" * last]
    chunks = [chunk async for chunk in text_body(pieces)]
    assert b"".join(chunks) == "".join(pieces).encode() and b"" not in chunks
