"""The HTML views: routing, content, escaping, validators, headers and the XSL link."""

from __future__ import annotations

import base64
import gzip
import hashlib
import logging
import re
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from typing import Any
from xml.etree.ElementTree import Element

import html5lib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware import (
    ConfigurationError,
    HTMLView,
    HTTPSettings,
    Image,
    NewsArticle,
    Renders,
    Section,
    SitemapConfig,
    SitemapEntry,
    Video,
)
from sitemap_middleware._engine import shared
from sitemap_middleware._engine.core import RequestInfo, SitemapCore
from sitemap_middleware._sansio.html_assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from sitemap_middleware._sansio.html_writer import MONTHS, human_time
from sitemap_middleware._sansio.models import simple_fields
from sitemap_middleware._sansio.values import format_w3c
from sitemap_middleware._sansio.xml import split_tail
from sitemap_middleware.ops import ServedDocument
from tests.harness.core import collect, fetch, header, make_core
from tests.harness.providers import EVIL, CountingProvider, rich_entry

pytestmark = pytest.mark.anyio
NS = "{http://www.w3.org/1999/xhtml}"


def _core(sections: dict[str, Any], **kwargs: Any) -> SitemapCore:
    kwargs.setdefault("html", True)
    kwargs.setdefault("news_max_age", None)  # the fixtures' articles are from 2024
    return make_core(sections, **kwargs)


def parse(body: bytes) -> Element:
    """Parse with html5lib's strict parser: any HTML parse error raises."""
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=True)
    doc: Element = parser.parse(body.decode("utf-8"))
    return doc


def rows(doc: Element) -> list[Element]:
    return list(doc.iter(f"{NS}tbody"))[0].findall(f"{NS}tr")


def text(element: Element) -> str:
    return "".join(element.itertext())


def cells(row: Element) -> list[str]:
    return [text(cell).strip() for cell in row]


def links(element: Element) -> list[str]:
    return [a.get("href", "") for a in element.iter(f"{NS}a")]


# -- routing and configuration ---------------------------------------------------------


async def test_html_views_are_off_by_default() -> None:
    """Without html=..., sitemap.html and page views are the app's paths, not ours."""
    core = _core({"p": ["/a"]}, html=False)
    assert core.route(RequestInfo("GET", "/sitemap.html")) is None
    assert core.route(RequestInfo("GET", "/sitemap-p-1.html")) is None


@pytest.mark.parametrize(
    ("view", "index", "page"),
    [
        (True, "/sitemap.html", "/sitemap-p-1.html"),
        (HTMLView(index_name="urls.html", page_prefix="view-"), "/urls.html", "/view-p-1.html"),
    ],
    ids=["default-names", "custom-names"],
)
async def test_html_view_paths_follow_the_configuration(
    view: bool | HTMLView, index: str, page: str
) -> None:
    """The index view and page views are served under the configured names."""
    core = _core({"p": ["/a"]}, html=view)
    index_reply, index_body = await fetch(core, index)
    assert index_reply.status == 200
    assert links(parse(index_body))[-2:] == [page.lstrip("/"), "sitemap-p-1.xml"]
    page_reply, _ = await fetch(core, page)
    assert page_reply.status == 200
    assert header(page_reply, "Content-Type") == "text/html; charset=utf-8"


@pytest.mark.parametrize(
    "path",
    ["/sitemap.html.gz", "/sitemap-p-1.html.gz", "/sitemap-q-1.html", "/sitemap-p-01.html"],
    ids=["gz-index", "gz-page", "unknown-section", "leading-zero"],
)
async def test_html_paths_that_are_not_views(path: str) -> None:
    """No .html.gz files; an unknown section passes through; a malformed page is a 404."""
    core = _core({"p": ["/a"]})
    target = core.route(RequestInfo("GET", path))
    if target is not None:
        reply, _ = await fetch(core, path)
        assert reply.status == 404


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"html": "yes"}, "html must be True, False or an HTMLView, got 'yes'"),
        (
            {"html": HTMLView(index_name="sitemap-p-1.html")},
            "HTMLView.index_name 'sitemap-p-1.html' is the name of a page view of section 'p'",
        ),
    ],
    ids=["not-a-view", "index-shadows-page"],
)
def test_bad_html_setting_is_a_configuration_error(kwargs: dict[str, Any], message: str) -> None:
    """A wrong html setting fails at configuration time, naming the value."""
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        SitemapConfig(base_url="https://example.com", sections={"p": ["/a"]}, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"index_name": "sitemap.xml"}, "HTMLView.index_name must be a file name ending in .html"),
        ({"index_name": "a/b.html"}, "HTMLView.index_name must be a file name ending in .html"),
        ({"page_prefix": "../"}, "HTMLView.page_prefix must be a file-name prefix or None"),
        ({"title": "two\nlines"}, "HTMLView.title must be a non-empty one-line string"),
        ({"title": " "}, "HTMLView.title must be a non-empty one-line string"),
    ],
)
def test_bad_html_view_values_raise(kwargs: dict[str, Any], message: str) -> None:
    """HTMLView validates its names and title on creation."""
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        HTMLView(**kwargs)


# -- content -------------------------------------------------------------------------------


async def test_index_view_lists_every_page_with_count_lastmod_and_links() -> None:
    """One row per sitemap page: its view, planned URL count, lastmod and XML file."""

    def dated() -> Iterator[dict[str, str]]:
        for day in range(1, 6):
            yield {"loc": f"/d/{day}", "lastmod": f"2024-01-0{day}"}

    core = _core({"products": CountingProvider(25), "days": dated}, max_urls_per_page=10)
    reply, body = await fetch(core, "/sitemap.html")
    doc = parse(body)
    table = rows(doc)
    assert [cells(row)[:2] for row in table] == [
        ["products, page 1", "10"],
        ["products, page 2", "10"],
        ["products, page 3", "5"],
        ["days, page 1", "5"],
    ]
    assert links(table[3]) == ["sitemap-days-1.html", "sitemap-days-1.xml"]
    assert cells(table[3])[2] == "5 Jan 2024 00:00 UTC"
    time = table[3].find(f".//{NS}time")
    assert time is not None and time.get("datetime") == "2024-01-05T00:00:00+00:00"
    assert "4 sitemap files list 30 URLs" in text(doc)


async def test_page_view_shows_fields_and_extensions_readably() -> None:
    """A row per URL: the URL as a link, lastmod, changefreq, priority, extensions."""
    core = _core({"p": [rich_entry(), "/plain", {"loc": "/dict", "priority": 0.2}]})
    _, body = await fetch(core, "/sitemap-p-1.html")
    doc = parse(body)
    first, plain, mapping = rows(doc)
    url, lastmod, changefreq, priority, extensions = cells(first)
    assert url == "https://example.com/rich/x?a=1&b='2'"
    assert links(first)[0] == url  # the href decodes to the exact URL
    assert (lastmod, changefreq, priority) == ("4 Mar 2024 05:06 UTC", "weekly", "0.7")
    details = first.find(f".//{NS}summary")  # the extensions, on demand
    assert details is not None
    summary = text(details)
    assert summary == "2 images, 1 video, news, 2 alternates"
    for part in (
        "image https://example.com/img/1.png",
        "image https://cdn.example.net/2.png",
        "Duration3:05 (185 s)",
        "Countriesallow DE FR",
        "hreflang de https://example.com/de/rich",
        "hreflang x-default https://example.com/rich",
        "news " + EVIL,
        "published 4 Mar 2024",
    ):
        assert part in extensions, part
    assert cells(plain) == ["https://example.com/plain", "", "", "", ""]  # nothing to unfold
    assert cells(mapping)[4] == "Details"  # its priority, on a phone
    assert cells(mapping)[3] == "0.2"
    assert "3 URLs in this file." in text(doc)


async def test_page_view_folds_many_images_into_details() -> None:
    """Beyond a handful, an entry's images sit in a <details> element with their count."""
    entry = SitemapEntry("/gallery", images=[f"/g/{i}.png" for i in range(12)])
    _, body = await fetch(_core({"p": [entry]}), "/sitemap-p-1.html")
    outer, inner = list(parse(body).iter(f"{NS}summary"))
    assert (text(outer), text(inner)) == ("12 images", "image 12 images")


async def test_page_views_link_to_neighbours_index_and_xml() -> None:
    """Page 2 of 3 links to the index view, pages 1 and 3 and its XML file."""
    core = _core({"p": CountingProvider(25)}, max_urls_per_page=10)
    _, body = await fetch(core, "/sitemap-p-2.html")
    nav = list(parse(body).iter(f"{NS}nav"))[0]
    assert links(nav) == ["sitemap.html", "sitemap-p-1.html", "sitemap-p-3.html", "sitemap-p-2.xml"]
    reply, _ = await fetch(core, "/sitemap-p-4.html")
    assert reply.status == 404


@pytest.mark.parametrize(
    "field",
    ["video.title", "video.description", "video.tags", "video.uploader", "news.title", "news.name"],
)
async def test_entry_text_cannot_inject_markup(field: str) -> None:
    """Entry text with <script> and quotes is shown as text: no element, no attribute."""
    _, body = await fetch(_core({"p": [rich_entry()]}), "/sitemap-p-1.html")
    doc = parse(body)
    scripts = list(doc.iter(f"{NS}script"))
    assert len(scripts) == 1 and scripts[0].text == SCRIPT  # ours, nothing else
    assert not list(doc.iter(f"{NS}b"))
    expected = {"video.title": EVIL[:100], "video.tags": EVIL[:50]}.get(field, EVIL)
    assert expected in text(rows(doc)[0])
    assert b"<script>alert" not in body


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("<>&\"'"),
        min_size=1,
        max_size=80,
    ).filter(str.strip)
)
def test_any_text_round_trips_through_the_page_view(title: str) -> None:
    """Whatever a news title holds, the parsed view shows exactly that text, less the
    Unicode noncharacters no document carries (an HTML parser rejects U+4FFFE)."""
    import anyio

    from sitemap_middleware._sansio.values import _XML_FORBIDDEN

    title = title if _XML_FORBIDDEN.sub("", title).strip() else title + "x"

    entry = SitemapEntry(
        "/n",
        news=NewsArticle(
            publication_name="P", language="en", publication_date="2024-01-01", title=title
        ),
    )

    async def render() -> bytes:
        return (await fetch(_core({"p": [entry]}), "/sitemap-p-1.html"))[1]

    doc = parse(anyio.run(render))
    shown = _XML_FORBIDDEN.sub("", title)
    assert f"news {shown} \u2014 P (en)" in text(rows(doc)[0])


@given(
    lastmod=st.none() | st.dates().map(str) | st.datetimes(timezones=st.timezones()),
    changefreq=st.none() | st.sampled_from(["always", "hourly", "daily", "never"]),
    priority=st.none() | st.floats(0, 1),
)
def test_split_tail_inverts_the_tail_simple_fields_writes(
    lastmod: object, changefreq: object, priority: object
) -> None:
    """The view reads back exactly the texts the XML writes for the three fields."""
    *_, tail = simple_fields("https://example.com/", lastmod, changefreq, priority)
    found = re.findall(r"<(lastmod|changefreq|priority)>([^<]*)<", tail)
    expected = dict(found)
    assert split_tail(tail) == (
        expected.get("lastmod", ""),
        expected.get("changefreq", ""),
        expected.get("priority", ""),
    )


def test_split_tail_refuses_foreign_text() -> None:
    """Anything but a tail simple_fields wrote is a programming error, said so."""
    with pytest.raises(ValueError, match="not a tail written by simple_fields"):
        split_tail("<loc>x</loc>")


async def test_index_view_names_failing_sections_and_is_not_cached() -> None:
    """A failing section is left out, named in an alert, and the view is no-store."""

    async def broken() -> AsyncIterator[str]:
        raise RuntimeError("database down")
        yield "/never"  # pragma: no cover

    core = _core({"ok": ["/a"], "broken": broken})
    reply, body = await fetch(core, "/sitemap.html")
    assert reply.status == 200 and header(reply, "Cache-Control") == "no-store"
    assert header(reply, "ETag") is None
    doc = parse(body)
    assert len(rows(doc)) == 1
    assert "Left out because their data source failed: broken." in text(doc)


# -- HTTP: headers, validators, gzip, HEAD, 304 --------------------------------------------


def _csp_source(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


@pytest.mark.parametrize("path", ["/sitemap.html", "/sitemap-p-1.html"])
async def test_views_carry_a_strict_csp_matching_their_inline_code(path: str) -> None:
    """CSP allows exactly the inline style and script sent (by hash), nothing external."""
    reply, body = await fetch(_core({"p": ["/a"]}, http=HTTPSettings(x_robots_tag=None)), path)
    csp = header(reply, "Content-Security-Policy")
    assert csp == CONTENT_SECURITY_POLICY
    doc = parse(body)
    (style,) = list(doc.iter(f"{NS}style"))
    (script,) = list(doc.iter(f"{NS}script"))
    assert style.text == STYLE and script.text == SCRIPT
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["style-src"] == _csp_source(STYLE)
    assert directives["script-src"] == _csp_source(SCRIPT)
    assert directives["frame-ancestors"] == "'none'"
    assert not re.search(r"https?:|'unsafe-|\*", csp)
    # No external assets: no src or stylesheet links, and no inline style attributes
    # (the CSP would block them).
    assert not [e for e in doc.iter() if e.get("src") or e.get("style") is not None]
    assert not list(doc.iter(f"{NS}link"))
    # noindex twice, even though this config leaves X-Robots-Tag off the XML.
    assert header(reply, "X-Robots-Tag") == "noindex"
    meta = {m.get("name"): m.get("content") for m in doc.iter(f"{NS}meta")}
    assert meta["robots"] == "noindex"
    assert meta["viewport"] == "width=device-width, initial-scale=1"
    assert header(reply, "X-Frame-Options") == "DENY"
    assert header(reply, "Cross-Origin-Resource-Policy") == "same-origin"
    assert header(reply, "Access-Control-Allow-Origin") is None


async def test_view_table_is_accessible_markup() -> None:
    """A real table: caption, column headers with scope, row headers; a labelled region."""
    _, body = await fetch(_core({"p": ["/a", "/b"]}), "/sitemap-p-1.html")
    doc = parse(body)
    assert list(doc.iter(f"{NS}html"))[0].get("lang") == "en"
    (table,) = list(doc.iter(f"{NS}table"))
    (caption,) = list(table.iter(f"{NS}caption"))
    assert text(caption) == "URLs in sitemap-p-1.xml"
    heads = list(next(table.iter(f"{NS}thead")).iter(f"{NS}th"))
    assert [h.get("scope") for h in heads] == ["col"] * 5
    assert all(row[0].tag == f"{NS}th" and row[0].get("scope") == "row" for row in rows(doc))
    region = [e for e in doc.iter() if e.get("role") == "region"][0]
    assert region.get("aria-labelledby") == caption.get("id")


async def test_view_etags_differ_from_xml_and_answer_304() -> None:
    """Views have their own strong ETags per encoding, and If-None-Match gets a 304."""
    core = _core({"p": CountingProvider(30)})
    xml, _ = await fetch(core, "/sitemap-p-1.xml")
    view, _ = await fetch(core, "/sitemap-p-1.html")
    zipped, zipped_body = await fetch(core, "/sitemap-p-1.html", accept_encoding="gzip")
    tags = {header(r, "ETag") for r in (xml, view, zipped)}
    assert None not in tags and len(tags) == 3
    assert header(zipped, "Content-Encoding") == "gzip"
    assert gzip.decompress(zipped_body).startswith(b"<!DOCTYPE html>")
    etag = header(view, "ETag")
    assert etag is not None
    again, body = await fetch(core, "/sitemap-p-1.html", if_none_match=etag)
    assert again.status == 304 and body == b"" and header(again, "Content-Type") is None
    index, _ = await fetch(core, "/sitemap.html")
    index_etag = header(index, "ETag")
    assert index_etag is not None
    again, _ = await fetch(core, "/sitemap.html", if_none_match=index_etag)
    assert again.status == 304


async def test_view_etag_changes_with_the_view_settings() -> None:
    """A different title is a different representation: a different ETag."""
    one, _ = await fetch(_core({"p": CountingProvider(3)}), "/sitemap-p-1.html")
    other, _ = await fetch(
        _core({"p": CountingProvider(3)}, html=HTMLView(title="URLs")), "/sitemap-p-1.html"
    )
    assert header(one, "ETag") != header(other, "ETag")


async def test_head_of_a_view_has_get_headers_and_no_body() -> None:
    """HEAD answers with GET's status and headers and no body; past the end it is a 404."""
    core = _core({"p": CountingProvider(30)})
    get, _ = await fetch(core, "/sitemap-p-1.html")
    reply, body = await fetch(core, "/sitemap-p-1.html", method="HEAD")
    assert reply.status == 200 and body == b"" and reply.body is None
    assert reply.headers == get.headers
    missing, _ = await fetch(core, "/sitemap-p-2.html", method="HEAD")
    assert missing.status == 404


async def test_unversioned_views_get_etags_from_their_bytes() -> None:
    """Renders(etag="content") gives views of unversioned providers an ETag too."""
    core = _core({"p": lambda: ["/a", "/b"]}, renders=Renders(etag="content"))
    reply, body = await fetch(core, "/sitemap-p-1.html")
    etag = header(reply, "ETag")
    assert etag is not None and header(reply, "Content-Security-Policy")
    again, _ = await fetch(core, "/sitemap-p-1.html", if_none_match=etag)
    assert again.status == 304
    xml, _ = await fetch(core, "/sitemap-p-1.xml")
    assert header(xml, "ETag") not in (None, etag)
    assert len(rows(parse(body))) == 2


@pytest.mark.slow
async def test_view_of_a_big_page_streams_in_chunks_with_flat_memory() -> None:
    """50,000 rows stream as many chunks; traced memory stays far below the body size."""
    # Stored renders buffer up to Renders.max_bytes by design; the smallest isolates streaming.
    core = _core({"p": CountingProvider(50_000)}, renders=Renders(max_bytes=1024))
    reply = await core.respond(
        core.route(RequestInfo("GET", "/sitemap-p-1.html")),  # type: ignore[arg-type]
        RequestInfo("GET", "/sitemap-p-1.html"),
    )
    assert reply.body is not None
    size = chunks = 0
    tracemalloc.start()
    try:
        async for chunk in reply.body:
            size += len(chunk)
            chunks += 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size > 10_000_000 and chunks > 100
    assert peak < size / 5  # the body is never held whole


async def test_xml_documents_are_unchanged_by_the_html_views(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Switching the views on changes no XML byte or header (ETags included). The clock
    stands still: each core stamps Last-Modified when it first sees a version, and two
    cores' first looks could straddle a second (a CI failure)."""
    monkeypatch.setattr(shared, "wall_clock", lambda: 1_790_000_000.0)
    sections: dict[str, Any] = {"p": CountingProvider(30), "q": Section(["/x"], max_urls=5)}
    off = _core(sections, html=False, stylesheet=False)
    on = _core(sections, html=True, stylesheet=False)
    for path in ("/sitemap.xml", "/sitemap_index.xml", "/sitemap-p-1.xml", "/robots.txt"):
        for encoding in ("identity", "gzip"):
            a, body_a = await fetch(off, path, accept_encoding=encoding)
            b, body_b = await fetch(on, path, accept_encoding=encoding)
            assert (a.status, a.headers, body_a) == (b.status, b.headers, body_b), path


async def test_stylesheet_links_to_the_html_view_only_when_it_is_on() -> None:
    """The built-in XSL gains a link to the index view when the views are on."""
    _, with_view = await fetch(_core({"p": ["/a"]}, stylesheet=True), "/sitemap.xsl")
    _, without = await fetch(_core({"p": ["/a"]}, stylesheet=True, html=False), "/sitemap.xsl")
    assert b'<a href="sitemap.html" id="html-view-link"' in with_view
    assert b'data-xml-prefix="sitemap-" data-view-prefix="sitemap-">Open the HTML view</a>' in (
        with_view
    )
    assert b"HTML view</a>" not in without
    custom = _core(
        {"p": ["/a"]},
        stylesheet=True,
        page_prefix="map-",
        html=HTMLView(index_name="human.html", page_prefix="view-"),
    )
    _, body = await fetch(custom, "/sitemap.xsl")
    assert b'<a href="human.html" id="html-view-link" data-xml-prefix="map-"' in body
    assert b'data-view-prefix="view-"' in body


async def test_view_body_is_complete_html_in_one_collect() -> None:
    """The streamed chunks concatenate into one well-formed document ending in </html>."""
    core = _core({"p": CountingProvider(1200)})
    reply = await core.respond(
        core.route(RequestInfo("GET", "/sitemap-p-1.html")),  # type: ignore[arg-type]
        RequestInfo("GET", "/sitemap-p-1.html"),
    )
    body = await collect(reply)
    assert body.rstrip().endswith(b"</html>") and len(rows(parse(body))) == 1200


async def test_every_video_field_is_shown() -> None:
    """All optional video fields appear, labelled, in the video's details."""
    video = Video(
        thumbnail_loc="/t.jpg",
        title="Full",
        description="All fields",
        player_loc="https://player.example.net/v?id=1&x=2",
        duration=3600,
        expiration_date="2030-01-01",
        rating=4.25,
        view_count=1234567,
        publication_date="2024-06-01T10:00:00+02:00",
        requires_subscription=False,
        live=True,
        platform=("deny", ("tv",)),
        uploader="Ann",
    )
    _, body = await fetch(_core({"p": [SitemapEntry("/v", videos=[video])]}), "/sitemap-p-1.html")
    details = text(list(parse(body).iter(f"{NS}dl"))[0])
    for part in (
        "Playerhttps://player.example.net/v?id=1&x=2",
        "Duration60:00 (3600 s)",
        "Published1 Jun 2024 08:00 UTC",
        "Expires1 Jan 2030",
        "Rating4.2 of 5",
        "Views1,234,567",
        "Requires subscriptionno",
        "Liveyes",
        "Platformsdeny tv",
        "UploaderAnn",
    ):
        assert part in details, part


async def test_counts_and_dates_are_formatted_for_people() -> None:
    """Issue 29: counts with thousands separators, dates as "4 Mar 2024 05:06 UTC"
    (any offset shown in UTC), the exact value kept in <time datetime>."""
    entries = [{"loc": f"/n/{i}", "lastmod": "2024-03-04T07:06:07+02:00"} for i in range(1_500)]
    core = _core({"p": entries})
    _, body = await fetch(core, "/sitemap.html")
    doc = parse(body)
    (row,) = rows(doc)
    assert cells(row)[1:3] == ["1,500", "4 Mar 2024 05:06 UTC"]
    assert "1 sitemap file list 1,500 URLs" in text(doc)
    _, body = await fetch(core, "/sitemap-p-1.html")
    doc = parse(body)
    time_ = rows(doc)[0].find(f".//{NS}time")
    assert time_ is not None and time_.get("datetime") == "2024-03-04T07:06:07+02:00"  # as sent
    assert text(time_) == "4 Mar 2024 05:06 UTC"
    assert "1,500 URLs in this file." in text(doc)


@given(
    st.datetimes(timezones=st.timezones() | st.just(timezone.utc))
    | st.dates().map(lambda d: datetime(d.year, d.month, d.day))
)
def test_human_time_reads_any_w3c_value_in_utc(moment: datetime) -> None:
    """Whatever the offset, the day and minute shown are the UTC ones; a plain date is
    shown as a date, without a clock."""
    if moment.tzinfo is None:  # a plain date
        day = moment.date()
        assert human_time(format_w3c(day)) == (f"{day.day} {MONTHS[day.month - 1]} {day.year}", "")
        return
    utc = moment.astimezone(timezone.utc)
    shown = human_time(format_w3c(moment))
    assert shown == (
        f"{utc.day} {MONTHS[utc.month - 1]} {utc.year}",
        f"{utc.hour:02d}:{utc.minute:02d} UTC",
    )


def test_human_time_shows_what_it_cannot_read_as_it_is() -> None:
    assert human_time("2024-05") == ("2024-05", "")
    assert human_time("2024-05-06T07:08Z") == ("6 May 2024", "07:08 UTC")


async def test_page_view_shows_paths_apart_from_the_site_origin() -> None:
    """The row's link names its URL whole (its text is the URL); the site's origin sits in
    a span a phone hides, so the path that tells URLs apart shows. URLs elsewhere (a CDN
    image) keep their origin in plain text."""
    entry = SitemapEntry("/tea", images=[Image("https://cdn.example.net/t.png")])
    core = _core({"p": [entry]})
    request = RequestInfo("GET", "/shop/sitemap-p-1.html", {}, root_path="/shop")
    target = core.route(request)
    assert target is not None
    doc = parse(await collect(await core.respond(target, request)))
    row = rows(doc)[0]
    link = row.find(f".//{NS}th/{NS}a")
    assert link is not None and text(link) == link.get("href") == "https://example.com/shop/tea"
    origin = link.find(f"{NS}span")
    assert origin is not None and origin.get("class") == "origin"
    assert text(origin) == "https://example.com"
    image = [a for a in row.iter(f"{NS}a") if "cdn" in a.get("href", "")][0]
    assert not list(image.iter(f"{NS}span"))


def test_only_http_urls_become_links() -> None:
    """A URL of another scheme (never admitted, but defended anyway) is shown as text."""
    from sitemap_middleware._sansio.html_writer import _link

    assert _link("javascript:alert('x')") == "javascript:alert(&#x27;x&#x27;)"
    assert _link("https://e.com/?a=1&b=2") == (
        '<a href="https://e.com/?a=1&amp;b=2">https://e.com/?a=1&amp;b=2</a>'
    )


async def test_index_view_of_many_pages_streams_in_chunks() -> None:
    """An index view of 2,000 pages arrives as several chunks and lists every page."""
    core = _core({"p": CountingProvider(2000)}, max_urls_per_page=1)
    request = RequestInfo("GET", "/sitemap.html")
    reply = await core.respond(core.route(request), request)  # type: ignore[arg-type]
    assert reply.body is not None
    chunks = [chunk async for chunk in reply.body]
    assert len(chunks) > 3
    assert len(rows(parse(b"".join(chunks)))) == 2000


async def test_index_view_lists_external_sitemaps() -> None:
    """Sitemaps served elsewhere appear in the index view as in the XML index."""
    core = _core(
        {"p": ["/a"]}, external_sitemaps=["/shop/sitemap.xml", "https://cdn.example.net/s.xml"]
    )
    _, body = await fetch(core, "/sitemap.html")
    doc = parse(body)
    table = rows(doc)
    assert [cells(row)[0] for row in table] == ["p, page 1", "served elsewhere", "served elsewhere"]
    assert links(table[1]) == ["https://example.com/shop/sitemap.xml"]
    assert links(table[2]) == ["https://cdn.example.net/s.xml"]
    assert "1 sitemap file list 1 URL; 2 more served elsewhere" in text(doc)


async def test_views_under_a_mount_answer_below_it_with_relative_links() -> None:
    """Under root_path /shop the views answer at /shop/… and name the mounted site."""
    core = _core({"p": ["/tea"]})
    request = RequestInfo("GET", "/shop/sitemap-p-1.html", {}, root_path="/shop")
    target = core.route(request)
    assert target is not None and target.format == "html"
    body = await collect(await core.respond(target, request))
    doc = parse(body)
    assert links(rows(doc)[0]) == ["https://example.com/shop/tea"]
    nav = list(doc.iter(f"{NS}nav"))[0]
    assert links(nav) == ["sitemap.html", "sitemap-p-1.xml"]  # relative: stay in /shop/
    assert "The URLs of sitemap-p-1.xml on example.com/shop" in text(doc)


async def test_views_served_from_stored_renders_keep_their_headers() -> None:
    """A repeat request (answered from the stored render) carries the CSP and noindex too."""
    core = _core({"p": CountingProvider(5)})
    first, body = await fetch(core, "/sitemap-p-1.html")
    again, body_again = await fetch(core, "/sitemap-p-1.html")
    assert body_again == body
    for name in ("Content-Security-Policy", "X-Robots-Tag", "X-Frame-Options"):
        assert header(again, name) == header(first, name) is not None, name


async def test_each_tenant_has_its_own_views() -> None:
    """With Tenants, a site with html=True serves its views; a site without passes them on."""
    from sitemap_middleware import Tenants
    from sitemap_middleware._engine.tenants import TenantCores

    with_views = SitemapConfig(base_url="https://a.example", sections={"p": ["/x"]}, html=True)
    without = SitemapConfig(base_url="https://b.example", sections={"p": ["/y"]})
    cores = TenantCores(Tenants(sites={"a.example": with_views, "b.example": without}))
    a = RequestInfo("GET", "/sitemap-p-1.html", {"host": "a.example"})
    b = RequestInfo("GET", "/sitemap-p-1.html", {"host": "b.example"})
    target = cores.route(a)
    assert target is not None and target.format == "html" and cores.route(b) is None
    body = await collect(await cores.respond(target, a))
    assert links(rows(parse(body))[0]) == ["https://a.example/x"]


# -- the views under main's engine: observers, plan memo, shared render stores ----------


class _Recorder:
    def __init__(self) -> None:
        self.events: list[ServedDocument] = []

    def document_served(self, event: ServedDocument) -> None:
        self.events.append(event)


async def test_each_view_is_one_observed_document_counting_its_rows(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A view is one log record and one observer call: html_* kind, its rows, its bytes."""
    caplog.set_level(logging.INFO, logger="sitemap_middleware")
    recorder = _Recorder()
    core = _core({"p": CountingProvider(25)}, max_urls_per_page=10, observers=[recorder])
    _, page = await fetch(core, "/sitemap-p-2.html", accept_encoding="gzip")
    _, index = await fetch(core, "/sitemap.html")
    reply, _ = await fetch(core, "/sitemap.html", method="HEAD")
    etag = header(reply, "ETag")
    assert etag is not None
    await fetch(core, "/sitemap.html", if_none_match=etag)
    seen = [(e.document, e.kind, e.section, e.page, e.status, e.urls) for e in recorder.events]
    assert seen == [
        ("sitemap-p-2.html", "html_page", "p", 2, 200, 10),
        ("sitemap.html", "html_index", None, None, 200, 3),
        ("sitemap.html", "html_index", None, None, 200, 0),  # HEAD
        ("sitemap.html", "html_index", None, None, 304, 0),
    ]
    assert len(rows(parse(gzip.decompress(page)))) == 10 and len(rows(parse(index))) == 3
    assert recorder.events[0].encoding == "gzip" and recorder.events[0].bytes == len(page)
    records = [r for r in caplog.records if hasattr(r, "sitemap")]
    assert len(records) == 4
    assert "sitemap-p-2.html 200: 10 urls" in records[0].getMessage()


def test_metrics_count_view_requests_but_not_their_rows_as_urls_written() -> None:
    """Prometheus counts a view as a document; its rows are not URLs written for crawlers."""
    from prometheus_client import CollectorRegistry

    from sitemap_middleware.ops import PrometheusObserver

    registry = CollectorRegistry()
    metrics = PrometheusObserver(registry=registry)
    event = ServedDocument(200, "GET", "sitemap-p-1.html", "html_page", "p", 1, urls=7, bytes=9)
    metrics.document_served(event)
    served = registry.get_sample_value(
        "sitemap_documents_served_total", {"kind": "html_page", "status": "200", "cache": "none"}
    )
    assert served == 1
    assert registry.get_sample_value("sitemap_urls_written_total", {"section": "p"}) is None


async def test_index_view_and_xml_index_share_one_planning_pass() -> None:
    """The index view starts from the XML index's kept plans: no second planning pass."""
    provider = CountingProvider(25)
    core = _core({"p": provider}, max_urls_per_page=10)
    await fetch(core, "/sitemap.xml")
    _, body = await fetch(core, "/sitemap.html")
    await fetch(core, "/sitemap.html", method="HEAD")
    assert core._documents.plans.passes == 1
    assert len(rows(parse(body))) == 3


@pytest.mark.parametrize("shared", ["content_etags", "renders_store"])
async def test_deployments_sharing_a_store_keep_their_own_views(shared: str) -> None:
    """Two view titles over one shared render store never serve each other's page."""
    from sitemap_middleware.stores import MemoryRenderStore

    store = MemoryRenderStore()

    def core(title: str) -> SitemapCore:
        if shared == "content_etags":  # unversioned: ETags from the rendered bytes
            extra: dict[str, Any] = {"renders": Renders(etag="content", store=store)}
            provider: Any = lambda: ["/a", "/b"]  # noqa: E731
        else:
            extra = {"renders": Renders(store=store, ttl=60)}  # stored renders answer
            provider = CountingProvider(3)
        return _core({"p": provider}, html=HTMLView(title=title), **extra)

    for path in ("/sitemap-p-1.html", "/sitemap.html"):
        _, first = await fetch(core("Sitemaps"), path)
        _, second = await fetch(core("Our URLs"), path)
        assert b"Sitemaps of example.com" in first and b"Our URLs of example.com" in second
