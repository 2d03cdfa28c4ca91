"""Property-based tests: hostile entries and hostile requests never break a response."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
import idna
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from werkzeug.http import parse_date

from sitemap_middleware import InvalidEntryError, SitemapConfig, SitemapError, TrustedHosts
from sitemap_middleware._caches.store import body_matches, describe_render
from sitemap_middleware._engine.core import READ_HEADERS, RequestInfo, SitemapCore
from sitemap_middleware._sansio.models import coerce_entry, entry_parts, simple_fields
from sitemap_middleware._sansio.urls import normalize_loc
from sitemap_middleware._sansio.values import _W3C as W3C
from sitemap_middleware._sansio.values import aware, date_value_and_text, parse_w3c
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import collect, make_core
from tests.harness.documents import check_document

SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
nasty_text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec=None, categories=None), max_size=40),
    st.sampled_from(
        [
            "]]>",
            "\x00",
            "\ud800",
            "a&b<c>'\"",
            "\x0b",
            "\ufffe",
            "é" * 3000,
            "https://example.com/" + "x" * 2100,
        ]
    ),
)
locs = st.one_of(
    nasty_text,
    nasty_text.map(lambda s: "/" + s),
    nasty_text.map(lambda s: "https://example.com/" + s),
    st.sampled_from(
        [
            "https://example.com/ok",
            "https://other.example/x",
            "/über?q=ß&x=1",
            "https://example.com/%zz",
            "https://example.com/a%20b",
            "https://EXAMPLE.com/x",
            "https://example.com:443/x",
            "/%zz",
        ]
    ),
)
lastmods = st.one_of(
    st.none(),
    nasty_text,
    st.datetimes(),
    st.dates(),
    st.integers(),
    st.sampled_from(
        [
            "2024-13-01",
            "2024-02-30T00:00:00+00:00",
            "2024-01-01T10:20:00Z",
            "2024-01-01T10:20+01:00",
        ]
    ),
)
priorities = st.one_of(st.none(), st.floats(allow_nan=True), st.integers(-5, 10), nasty_text)
items = st.one_of(
    locs,
    st.fixed_dictionaries(
        {"loc": locs},
        optional={
            "lastmod": lastmods,
            "priority": priorities,
            "changefreq": st.one_of(nasty_text, st.sampled_from(["daily", "never"])),
            "images": st.lists(st.fixed_dictionaries({"loc": locs}), max_size=2),
            "news": st.fixed_dictionaries(
                {
                    "publication_name": nasty_text,
                    "language": st.sampled_from(["en", "xx", "EN"]),
                    "publication_date": lastmods,
                    "title": nasty_text,
                }
            ),
            "alternates": st.lists(
                st.fixed_dictionaries({"hreflang": nasty_text, "href": locs}), max_size=2
            ),
        },
    ),
    st.integers(),
)


def _serve(values: list[Any], strict: bool) -> tuple[int, bytes]:
    core = make_core({"p": lambda: values}, strict=strict)

    async def run() -> tuple[int, bytes]:
        request = RequestInfo("GET", "/sitemap-p-1.xml", {})
        target = core.route(request)
        assert target is not None
        reply = await core.respond(target, request)
        return reply.status, await collect(reply)

    return anyio.run(run)


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence our logger for one example, then restore it (other tests read its records)."""
    logger = logging.getLogger("sitemap_middleware")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


@SETTINGS
@given(st.lists(items, max_size=12))
def test_hostile_entries_give_a_valid_document_or_a_clear_error(values: list[Any]) -> None:
    """Lenient mode: a valid document without the bad entries (or 404 when none is left)."""
    with _quiet():
        status, body = _serve(values, strict=False)
    assert status in (200, 404)
    if status == 200:
        check_document(body)


def _parts_or_error(build: Any) -> tuple[str, str] | str:
    try:
        loc, tail, _ = build()
    except InvalidEntryError as exc:
        return exc.field
    return loc, tail


@SETTINGS
@given(items)
def test_plain_fast_path_agrees_with_building_an_entry(item: Any) -> None:
    """URL strings and plain dicts skip building a SitemapEntry; the outcome is the same."""
    fast = _parts_or_error(lambda: entry_parts(item))
    slow = _parts_or_error(lambda: entry_parts(coerce_entry(item)))
    assert fast == slow


def _mutate(text: str, noise: dict[int, str]) -> str:
    return "".join(noise.get(i, ch) for i, ch in enumerate(text))


utc_offsets = st.sampled_from([timezone.utc, timezone(timedelta(hours=-5, minutes=-30))])
w3c_texts = st.one_of(
    st.dates().map(str),
    st.datetimes(timezones=utc_offsets).map(lambda d: d.isoformat(timespec="seconds")),
    st.datetimes().map(lambda d: d.isoformat(timespec="seconds") + "Z"),
)
#: Valid W3C datetimes with up to two characters replaced by anything.
w3c_like = st.builds(
    _mutate, w3c_texts, st.dictionaries(st.integers(0, 24), st.characters(), max_size=2)
)


def _lastmod(text: object) -> tuple[object, str]:
    """lastmod through the hot path (simple_fields): its value and its written text."""
    _, value, _, _, tail = simple_fields("/", lastmod=text)
    return value, tail.removeprefix("<lastmod>").removesuffix("</lastmod>")


@SETTINGS
@given(st.one_of(w3c_like, nasty_text))
def test_canonical_date_shortcut_accepts_only_w3c_datetimes(text: str) -> None:
    """The shape-based shortcut for dates never lets through what the W3C pattern refuses."""
    try:
        value, out = _lastmod(text)
    except InvalidEntryError:
        return
    assert W3C.fullmatch(out)
    assert parse_w3c("lastmod", out) == value


@SETTINGS
@given(w3c_texts)
def test_canonical_dates_are_kept_as_written(text: str) -> None:
    """A date already in the form we write is kept verbatim, not re-formatted."""
    value, out = _lastmod(text)
    assert out == text
    assert value == parse_w3c("lastmod", text)


@SETTINGS
@given(locs, st.one_of(lastmods, w3c_like))
@example("https://example.com/%zz", None)
@example("https://EXAMPLE.com:443/x", "2024-01-01T10:20:00Z")
@example("/a", "2024-02-30T00:00:00+00:00")
@example("/a", "2024-01-01T10:20+01:00")
def test_inline_shortcuts_agree_with_the_general_path(loc: Any, lastmod: Any) -> None:
    """simple_fields' inline URL and date checks decide exactly as normalize_loc and
    date_value_and_text do."""
    general = _parts_or_error(
        lambda: (
            normalize_loc(loc),
            "" if lastmod is None else date_value_and_text("lastmod", lastmod)[1],
            None,
        )
    )
    try:
        got_loc, _, _, _, tail = simple_fields(loc, lastmod)
    except InvalidEntryError as exc:
        assert general == exc.field
        return
    assert general == (got_loc, tail.removeprefix("<lastmod>").removesuffix("</lastmod>"))


@SETTINGS
@given(st.lists(items, max_size=12))
def test_hostile_entries_in_strict_mode_raise_package_errors(values: list[Any]) -> None:
    """Strict mode: a valid document, a 500 before headers, or an InvalidEntryError mid-stream."""
    try:
        with _quiet():
            status, body = _serve(values, strict=True)
    except SitemapError as exc:
        assert isinstance(exc, InvalidEntryError)
        return
    assert status in (200, 404, 500)
    if status == 200:
        check_document(body)


methods = st.one_of(
    st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"]),
    st.text(max_size=10),
)
header_values = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=255), max_size=60)
paths = st.one_of(
    st.sampled_from(
        [
            "/robots.txt",
            "/sitemap.xml",
            "/sitemap_index.xml",
            "/sitemap.xml.gz",
            "/sitemap.txt",
            "/sitemap.xsl",
        ]
    ),
    st.tuples(
        st.sampled_from(["p", "q", "", "p-", "../p"]),
        st.one_of(st.integers(-(10**30), 10**30).map(str), st.text(max_size=8)),
        st.sampled_from([".xml", ".xml.gz", ".txt", ".gz", ""]),
    ).map(lambda t: f"/sitemap-{t[0]}-{t[1]}{t[2]}"),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=255), max_size=50).map(
        lambda s: "/" + s
    ),
)


@SETTINGS
@given(
    path=paths,
    method=methods,
    headers=st.dictionaries(
        st.sampled_from(READ_HEADERS),
        header_values,
    ),
    trusted=st.booleans(),
)
def test_hostile_requests_never_fail(
    path: str, method: str, headers: dict[str, str], trusted: bool
) -> None:
    """Arbitrary paths, methods and header values get a deliberate status, never an exception."""
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": ["/a", "/b"], "q": [f"/q/{i}" for i in range(30)]},
        max_urls_per_page=10,
        text_sitemaps=True,
        stylesheet=True,
        hosts=TrustedHosts(hosts=["example.com"], forwarded="forwarded") if trusted else None,
    )
    core = SitemapCore(config)

    async def run() -> None:
        request = RequestInfo(method.upper(), path, headers)
        target = core.route(request)
        if target is None:
            return
        reply = await core.respond(target, request)
        assert reply.status in (200, 304, 400, 404, 405, 406)
        body = await collect(reply)
        assert b"Traceback" not in body
        if reply.status == 200 and body.startswith(b"<?xml") and b"xsl:stylesheet" not in body:
            check_document(body)

    anyio.run(run)


@pytest.mark.parametrize(
    "raw_path", [b"/sitemap-p-1.xml\xff", b"/sitemap-\xc3\x28-1.xml", b"/%ff%fe"]
)
def test_non_utf8_paths_through_asgi(raw_path: bytes) -> None:
    """Non-UTF-8 paths (servers decode them as latin-1) are passed on or 404, never 500."""
    from sitemap_middleware import ASGISitemapMiddleware

    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(message)

    middleware = ASGISitemapMiddleware(
        app, config=SitemapConfig(base_url="https://example.com", sections={"p": ["/a"]})
    )
    scope: dict[str, Any] = {
        "type": "http",
        "method": "GET",
        "path": raw_path.decode("latin-1"),
        "raw_path": raw_path,
        "headers": [],
        "query_string": b"page=-1&page=\xff",
    }
    anyio.run(middleware, scope, receive, send)
    assert sent[0]["status"] in (200, 404)


# -- issue 12: hostile environments ---------------------------------------------------------

zones = st.one_of(
    st.none(),
    st.timedeltas(
        min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59)
    ).map(lambda offset: timezone(timedelta(minutes=offset // timedelta(minutes=1)))),
)
# From 1900: HTTP dates of earlier years parse back ambiguously ("0068" reads as 2068).
any_datetimes = st.builds(
    lambda d, z: d.replace(tzinfo=z), st.datetimes(min_value=datetime(1900, 1, 2)), zones
)


@SETTINGS
@given(st.lists(any_datetimes, min_size=1, max_size=4))
@example([datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-1)))])
@example([datetime(1900, 1, 2, 0, 0, tzinfo=timezone(timedelta(hours=1))), datetime(2024, 5, 1)])
def test_any_provider_versions_give_validators(values: list[datetime]) -> None:
    """Naive, aware, year 1 or year 9999 in any zone: one index, validators, never a crash."""
    sections = {
        f"s{i}": _Versioned(ProviderVersion(token="t", last_modified=value))
        for i, value in enumerate(values)
    }
    core = make_core(sections)

    async def run() -> Any:
        request = RequestInfo("GET", "/sitemap_index.xml")
        target = core.route(request)
        assert target is not None
        reply = await core.respond(target, request)
        return reply.status, dict(reply.headers), await collect(reply)

    status, headers, _ = anyio.run(run)
    assert status == 200
    sent = parse_date(headers["Last-Modified"])
    newest = max(aware(v) for v in values)
    # The newest version, in whole seconds; a future one is the time of the reply.
    assert sent is not None and sent <= datetime.now(timezone.utc)
    assert sent >= newest.replace(microsecond=0) or sent.year == datetime.now().year


class _Versioned:
    def __init__(self, version: ProviderVersion) -> None:
        self._version = version

    async def entries(self) -> Any:
        yield "/a"

    async def version(self) -> ProviderVersion:
        return self._version


hostnames = st.one_of(
    st.text(alphabet="abcßäöüéλд-0123456789.", min_size=1, max_size=20).map(lambda s: s + "ß.de"),
    st.sampled_from(["faß.de", "Straße.example", "ΑΒΓ.gr", "ß..de", "-ß-.de", "ß\u200d.de"]),
)


@SETTINGS
@given(hostnames)
def test_hosts_are_encoded_as_browsers_do(host: str) -> None:
    """A non-ASCII host is its UTS 46 (IDNA 2008) form, or a clear InvalidEntryError."""
    try:
        expected = idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError:
        expected = None
    try:
        loc = normalize_loc(f"https://{host}/x")
    except InvalidEntryError as exc:
        assert exc.field == "loc"
        return
    assert expected is not None and loc == f"https://{expected}/x"


@SETTINGS
@given(st.binary(max_size=300), st.data())
def test_stored_bodies_survive_no_damage(body: bytes, data: st.DataObject) -> None:
    """Any truncation or flipped byte of a stored body (or its gzip body) reads as a miss,
    never as content: what every store checks a body against its meta with."""
    tag = "0123456789abcdef" * 2
    meta, raw, gzip = describe_render(tag, "application/xml", None, 0.0, [body], 1)
    assert gzip is not None
    assert body_matches(meta, raw) and body_matches(meta, gzip, gzip=True)
    for stored, zipped in ((raw, False), (gzip, True)):
        if not stored:
            continue  # an empty body: nothing to cut or flip
        cut = data.draw(st.integers(0, len(stored) - 1))
        assert not body_matches(meta, stored[:cut], gzip=zipped)
        position = data.draw(st.integers(0, len(stored) - 1))
        flip = data.draw(st.integers(1, 255))
        damaged = stored[:position] + bytes([stored[position] ^ flip]) + stored[position + 1 :]
        assert not body_matches(meta, damaged, gzip=zipped)
