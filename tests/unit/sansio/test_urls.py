"""The location rule and URL normalisation (sitemap_middleware._sansio.urls)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import InvalidEntryError, SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._sansio.urls import BaseURL, normalize_loc, remove_dot_segments
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, check_locs, page_urls

SHOP = BaseURL.parse("https://example.com/shop")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/a/b/c/./../../g", "/a/g"),  # RFC 3986 §5.2.4's own example
        ("/mid/content=5/../6", "/mid/6"),
        ("/../a", "/a"),
        ("/a/..", "/"),
        ("/a/.", "/a/"),
        ("/a/.hidden", "/a/.hidden"),
        ("/a/..b/c", "/a/..b/c"),
    ],
)
def test_remove_dot_segments(path: str, expected: str) -> None:
    """Dot segments resolve as RFC 3986 says; names that only start with a dot stay."""
    assert remove_dot_segments(path) == expected


@pytest.mark.parametrize(
    "loc",
    [
        "https://example.com/shop/../admin",
        "https://example.com/shop/%2e%2e/admin",
        "https://example.com/shop/.%2E/admin",
        "/../admin",
        "/x/../../admin",
        "https://example.com/shopping",
        "https://example.org/shop/a",
    ],
)
def test_locate_refuses_urls_outside_the_base(loc: str) -> None:
    """The location rule holds after dot segments are resolved, however they are spelled."""
    with pytest.raises(InvalidEntryError, match="is outside https://example.com/shop/"):
        SHOP.locate(normalize_loc(loc))


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ("https://example.com/shop/a/../b", "https://example.com/shop/b"),
        ("/a/./b", "https://example.com/shop/a/b"),
        ("/a/%2E%2E/b?q=/../x", "https://example.com/shop/b?q=/../x"),  # query untouched
        ("https://example.com/shop/", "https://example.com/shop/"),
    ],
)
def test_locate_resolves_dot_segments_inside_the_base(loc: str, expected: str) -> None:
    """Dot segments that stay inside the base resolve to the URL they name."""
    assert SHOP.locate(normalize_loc(loc)) == expected


def test_relative_loc_longer_than_2048_once_joined_is_refused() -> None:
    """A relative loc that grows past 2,048 characters when joined is left out, not written."""
    loc = "/" + "a" * 2040
    assert normalize_loc(loc) == loc
    with pytest.raises(InvalidEntryError, match="longer than 2048"):
        SHOP.locate(loc)


@pytest.mark.anyio
async def test_dot_segments_never_reach_a_sitemap() -> None:
    """Entries naming a path outside the base through '..' are left out of the page."""
    config = SitemapConfig(
        base_url="https://example.com/shop",
        sections={"p": ["https://example.com/shop/../admin", "/ok/../fine", "/../secret"]},
    )
    _, body = await fetch(SitemapCore(config), "/shop/sitemap.xml")
    assert page_urls(check_document(body)) == ["https://example.com/shop/fine"]


segment = st.sampled_from(["a", "b", ".", "..", "%2e", "%2E%2e", ".x"])


@given(st.lists(segment, max_size=8))
def test_located_urls_never_escape_the_base(segments: list[str]) -> None:
    """Whatever dot segments a path holds, a located URL lies under the base and has none left."""
    loc = "/" + "/".join(segments)
    try:
        url = SHOP.locate(normalize_loc(loc))
    except InvalidEntryError:
        return
    assert url.startswith(SHOP.prefix)
    path = url[len("https://example.com") :]
    assert "/./" not in path + "/" and "/../" not in path + "/"


# -- review-core: defects found by the hostile review ---------------------------------


def test_a_mount_path_is_percent_encoded_as_text() -> None:
    """root_path / SCRIPT_NAME are decoded: a literal "%41" in the mount is the three
    characters %, 4, 1 and must be written %2541; "%41" would name /aA/ instead."""
    from sitemap_middleware._sansio.urls import BaseURL

    base = BaseURL.parse("https://example.com")
    assert base.mounted("/a%41").prefix == "https://example.com/a%2541/"


@given(st.text())
def test_quote_unsafe_loses_nothing_and_leaves_only_uri_characters(value: str) -> None:
    """Percent-decoding gives the text back (escapes it held stay as they were), and
    what is written holds only characters RFC 3986 allows in a URI."""
    from urllib.parse import unquote

    from sitemap_middleware._sansio.urls import quote_unsafe

    quoted = quote_unsafe(value)
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        assert quoted == value  # not encodable: left for normalize_loc to refuse by name
        return
    assert unquote(quoted, errors="surrogateescape") == unquote(value, errors="surrogateescape")
    assert re.fullmatch(r"[A-Za-z0-9!#$%&'()*+,\-./:;=?@\[\]_~]*", quoted)
    if "%" not in value:
        assert unquote(quoted, errors="surrogateescape") == value


# --- all_located: the batch check of the location rule agrees with the per-URL path ---

from hypothesis import example, settings  # noqa: E402

from sitemap_middleware._sansio.xml import escape_loc  # noqa: E402

_BASES = [
    SHOP,
    BaseURL.parse("https://example.com"),
    BaseURL.parse("https://example.com/.well-known/x"),
    BaseURL.parse("https://example.com/a&b'c"),
    BaseURL.parse("http://localhost:8000/shop"),
]
#: Pieces of URLs: every kind of character the batch check looks at ("/", ".", "%",
#: "&", "'", line breaks, non-ASCII, what no URL holds), prefixes in and out of a base.
_HEADS = st.sampled_from(
    [
        "https://example.com/shop/",
        "https://example.com/",
        "https://example.com/.well-known/x/",
        "https://example.com/a&b'c/",
        "http://localhost:8000/shop/",
        "https://example.com/shopping",
        "https://Example.com/shop/",
        "/",
        "//",
        "",
    ]
)
_CLEAN_PIECES = [
    "a", "b", "/", ".", "&", "'", "?", "#", "#", "=", "..", "/./", "/../", "x" * 1010
]  # fmt: skip
_DIRTY_PIECES = ["%", "%2e", "%2E", "%23", "%C3%A9", "\n", " ", "é", "<"]


@st.composite
def _loc_batches(draw: st.DrawFn) -> list[object]:
    """Mostly batches of URLs made of characters a canonical URL holds (which the batch
    check takes or refuses on their order alone), sometimes with what none holds."""
    pieces = _CLEAN_PIECES + (_DIRTY_PIECES if draw(st.booleans()) else [])
    heads = draw(st.lists(_HEADS, min_size=1, max_size=2))  # one or two kinds of URL
    url = st.tuples(st.sampled_from(heads), st.lists(st.sampled_from(pieces), max_size=6))
    locs: list[object] = draw(
        st.lists(url.map(lambda t: t[0] + "".join(t[1])) | st.integers(), min_size=1, max_size=5)
    )
    return locs


def _located_each(base: BaseURL, loc: object) -> str | None:
    try:
        return base.locate(normalize_loc(loc))
    except InvalidEntryError:
        return None


@pytest.mark.slow  # a property run over many examples
@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(_BASES), _loc_batches())
@example(SHOP, ["/a", "//a"])
@example(SHOP, ["/a", "b"])
@example(SHOP, ["/a", "https://example.com/shop/b"])
@example(SHOP, ["https://example.com/shop/a", "https://example.com/other"])
@example(SHOP, ["https://example.com/shop/" + "x" * 2030, "https://example.com/shop/a"])
@example(SHOP, ["/" + "x" * 2030, "/a"])
@example(SHOP, ["https://example.com/shop/a", "https://example.com/shop/./a"])
@example(SHOP, ["https://example.com/shop/a.html", "https://example.com/shop/.."])
@example(SHOP, ["/a.b", "/../a"])
@example(BaseURL.parse("https://example.com/a&b'c"), ["/x&y", "/z"])
@example(SHOP, ["/tags/f#/c#", "/p/#a#b"])
@example(SHOP, ["/p/#a", "/p/#a%", "/p/#a b", "/p?q#f#g"])
@example(SHOP, ["https://example.com/shop/f#/c#", "https://example.com/shop/#a#b"])
def test_all_located_gives_what_each_url_gives(base: BaseURL, locs: list[object]) -> None:
    """Whenever the batch check takes a batch, each URL is what the per-URL path makes of
    it (none is left out), and the counts its sizes come from are exact. Whatever either
    path admits is a valid ``<loc>`` (RFC 3986, the XSD's ``tLoc``: at most one "#")."""
    each = [_located_each(base, loc) for loc in locs]
    check_locs([url for url in each if url is not None])
    located = base.all_located(locs)
    if located is None:
        return  # each URL takes the per-URL path
    assert located.urls == each
    check_locs(located.urls)
    assert located.length == sum(map(len, located.urls))
    assert located.ampersands == sum(url.count("&") for url in located.urls)
    assert located.apostrophes == sum(url.count("'") for url in located.urls)
    escaped = sum(len(escape_loc(url)) for url in located.urls)
    assert located.length + 4 * located.ampersands + 5 * located.apostrophes == escaped


@pytest.mark.parametrize(
    "locs",
    [
        ["https://example.com/shop/a", "https://example.com/shop/b?x=1&y='2'"],
        ["https://example.com/shop/file.html", "https://example.com/shop/a.b/c"],
        ["/a", "/b.html?x=1&y=2"],
    ],
)
def test_all_located_takes_the_usual_batches(locs: list[str]) -> None:
    assert SHOP.all_located(locs) is not None


# -- fixurl: "#" in a location --------------------------------------------------------


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ("/p/#a", "/p/#a"),
        ("/p/#a%", "/p/#a%25"),  # a bare "%" is encoded where it stands: in the fragment
        ("/p/#a b", "/p/#a%20b"),
        ("/p/#a#b", "/p/#a%23b"),  # no URI holds a second "#": it is the character
        ("/tags/f#/c#", "/tags/f#/c%23"),
        ("/p#", "/p#"),
        ("/p#a?b c", "/p#a?b%20c"),  # a "?" after the "#" is the fragment's
        ("/p?q=1#f#g", "/p?q=1#f%23g"),
        ("/p?q= 1#f", "/p?q=%201#f"),  # the "#" ends the query, whatever the query holds
        ("/p?q=1#", "/p?q=1#"),
        ("/p?", "/p?"),
        ("/a%23b", "/a%23b"),  # an escaped "#" stays one
    ],
)
def test_only_the_first_hash_delimits_a_fragment(loc: str, expected: str) -> None:
    """The first "#" starts the fragment; every later "#" is written %23; the rest of
    the fragment is encoded as a query is. The same whether the loc is a path or an
    absolute URL, canonical or not, and whether it is located alone or in a batch."""
    url = "https://example.com/shop" + expected
    absolute = "https://example.com/shop" + loc
    for given_loc in (loc, absolute, absolute.replace("example.com", "EXAMPLE.com")):
        assert SHOP.locate(normalize_loc(given_loc)) == url, given_loc
    check_locs([url])
    for batch in ([loc, "/x"], [absolute, "https://example.com/shop/x"]):
        located = SHOP.all_located(batch)
        assert located is None or located.urls[0] == url


@pytest.mark.anyio
async def test_hash_locations_are_served_xsd_valid() -> None:
    """Through the core, from entries, dicts and URL strings (each kind alone, so the batch
    path is tried too, and mixed): every "#" after the first is %23, nothing is lost."""
    from sitemap_middleware import SitemapEntry

    locs = ["/tags/f#/c#", "/p/#a#b", "/p/#a", "/p/#a%", "/p/#a b", "/q?x=1#f#g"]
    expected = [
        "https://example.com/shop/tags/f#/c%23",
        "https://example.com/shop/p/#a%23b",
        "https://example.com/shop/p/#a",
        "https://example.com/shop/p/#a%25",
        "https://example.com/shop/p/#a%20b",
        "https://example.com/shop/q?x=1#f%23g",
    ]
    absolute = ["https://example.com/shop" + loc for loc in locs]
    sections: dict[str, Any] = {
        "strings": locs,
        "absolute": absolute,
        "dicts": [{"loc": loc, "priority": 0.5} for loc in locs],
        "entries": [SitemapEntry(loc) for loc in absolute],
        "mixed": [locs[0], {"loc": locs[1]}, SitemapEntry(locs[2]), *locs[3:]],
    }
    core = make_core(sections, base_url="https://example.com/shop")
    for name in sections:
        reply, body = await fetch(core, f"/shop/sitemap-{name}-1.xml")
        assert reply.status == 200, (name, body)
        assert page_urls(check_document(body)) == expected, name


@pytest.mark.parametrize(
    ("spellings", "expected"),
    [
        (["/caf%c3%a9", "/caf%C3%A9", "/café"], "/caf%C3%A9"),  # hex digits' case
        (["/~x", "/%7ex", "/%7Ex"], "/~x"),  # an unreserved character, escaped
        (["/%61b", "/ab"], "/ab"),
        (["/a?q=%2d%5F", "/a?q=-_"], "/a?q=-_"),
        (["/%2Fa", "/%2fa"], "/%2Fa"),  # a reserved character stays escaped
    ],
)
def test_spellings_of_one_url_are_one_loc(spellings: list[str], expected: str) -> None:
    """RFC 3986 §6.2.2: escapes' hex digits are case-insensitive and an escaped
    unreserved character is the character. Two spellings of one URL were two locs, so
    dedupe=True listed the URL twice (and the guard and the ledger kept it twice)."""
    for spelling in spellings:
        for loc in (spelling, "https://example.com/shop" + spelling):
            assert SHOP.locate(normalize_loc(loc)) == "https://example.com/shop" + expected, loc
