"""Pure parts of the checker: W3C dates, limits, caps, gzip caps, HTML signals, the CLI."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware._ops.fetch import TooLarge, gunzip
from sitemap_middleware._ops.findings import MAX_PER_CODE, CheckReport, DocumentReport
from sitemap_middleware._ops.rules import (
    Entry,
    Parsed,
    check_document,
    check_hreflang,
    parse_sitemap,
    parse_w3c,
)
from sitemap_middleware._sansio.indexable import header_noindex, page_signals
from sitemap_middleware._sansio.limits import MAX_BYTES

UTC = timezone.utc
NOW = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024-05", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-03", datetime(2024, 5, 3, tzinfo=UTC)),
        ("2024-05-03T10:30+02:00", datetime(2024, 5, 3, 8, 30, tzinfo=UTC)),
        ("2024-05-03T10:30:15.25Z", datetime(2024, 5, 3, 10, 30, 15, 250000, tzinfo=UTC)),
        ("2024-05-03T10:30:15", None),  # a time needs a zone
        ("2024-13-01", None),
        ("2024-05T10:30Z", None),
        ("yesterday", None),
        (" 2024-05-03 ", datetime(2024, 5, 3, tzinfo=UTC)),
    ],
    ids=lambda v: str(v),
)
def test_parse_w3c(text: str, expected: datetime | None) -> None:
    """W3C Datetime: dates and zoned date-times parse to UTC; anything else is None."""
    assert parse_w3c(text) == expected


def test_limits_count_and_bytes() -> None:
    """50,001 URLs or more than 50 MiB uncompressed are errors."""
    report = DocumentReport("https://e.com/s.xml", bytes=MAX_BYTES + 1)
    parsed = Parsed("urlset", entries=[Entry(f"https://e.com/{i}") for i in range(50_001)])
    check_document(
        parsed, report, fetched_at=NOW, served_at=None, last_modified=None, cross_origin=None
    )
    codes = {code for code, _ in report.findings.counts}
    assert codes == {"too-many-urls", "too-large"}


def test_location_rule_uses_the_sitemap_directory() -> None:
    """A sitemap in /a/ may list /a/x but not /b/x, unless robots.txt of that origin listed it."""
    parsed = Parsed("urlset", entries=[Entry("https://e.com/a/x"), Entry("https://e.com/b/x")])
    report = DocumentReport("https://e.com/a/sitemap.xml")
    check_document(
        parsed, report, fetched_at=NOW, served_at=None, last_modified=None, cross_origin=None
    )
    assert [f.url for f in report.findings.kept if f.code == "loc-outside"] == ["https://e.com/b/x"]
    crossed = DocumentReport("https://e.com/a/sitemap.xml")
    check_document(
        parsed,
        crossed,
        fetched_at=NOW,
        served_at=None,
        last_modified=None,
        cross_origin="https://e.com",
    )
    assert not crossed.findings.kept


def _cross_host(site: str) -> tuple[str, Parsed]:
    """One host's document of a section whose languages live on three hosts."""
    hosts = {
        "en": "https://example.com",
        "de": "https://de.example.com",
        "fr": "https://example.fr",
    }
    links = tuple((lang, f"{host}/p") for lang, host in hosts.items())
    return f"{site}/sitemap.xml", Parsed("urlset", entries=[Entry(f"{site}/p", None, None, links)])


def test_alternates_on_other_hosts_are_neither_outside_nor_errors() -> None:
    """The location rule binds <loc> only; alternates across hosts, each host's document
    read, are reciprocal: no finding, nothing unchecked. One host read alone: no finding
    either, the other hosts' alternates counted by origin (check notes them)."""
    documents = [
        _cross_host("https://example.com"),
        _cross_host("https://de.example.com"),
        _cross_host("https://example.fr"),
    ]
    for url, parsed in documents:
        report = DocumentReport(url)
        check_document(
            parsed, report, fetched_at=NOW, served_at=None, last_modified=None, cross_origin=None
        )
        assert not report.findings.kept
    everything = CheckReport("https://example.com/")
    assert not check_hreflang(documents, everything)
    assert not everything.site.kept
    alone = CheckReport("https://example.com/")
    assert check_hreflang(documents[:1], alone) == {
        "https://de.example.com": 1,
        "https://example.fr": 1,
    }
    assert not alone.site.kept


def test_findings_are_capped_per_code_but_counted() -> None:
    """A million bad URLs keep 20 examples per code and count the rest."""
    report = CheckReport("https://e.com/")
    for i in range(MAX_PER_CODE + 5):
        report.add("warning", "duplicate-url", "again", url=f"https://e.com/{i}")
    assert len(report.site.kept) == MAX_PER_CODE and report.count("warning") == MAX_PER_CODE + 5
    assert report.as_dict()["omitted"] == {"duplicate-url": 5}
    assert "... and 5 more duplicate-url" in report.format_text()
    assert report.ok


def test_hostile_xml_is_not_expanded() -> None:
    """Entities are never expanded and DTDs never fetched (billion laughs, XXE)."""
    body = (
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">'
        b'<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&b;&x;</loc></url></urlset>'
    )
    report = DocumentReport("https://e.com/s.xml")
    parsed = parse_sitemap(body, report.url, report)
    assert parsed is not None
    assert all("root:" not in e.loc and "aaaa" not in e.loc for e in parsed.entries)


def test_gunzip_caps_decompressed_size() -> None:
    """A gzip bomb stops at the cap; a truncated stream is a zlib error."""
    bomb = gzip.compress(b"\0" * 1_000_000)
    with pytest.raises(TooLarge):
        gunzip(bomb, 1000)
    assert gunzip(bomb, 2_000_000) == b"\0" * 1_000_000
    with pytest.raises(zlib.error):
        gunzip(bomb[:-20], 2_000_000)


@pytest.mark.parametrize(
    ("html", "noindex", "canonical"),
    [
        ('<meta name="robots" content="noindex">', True, None),
        ('<meta name="robots" content="none">', True, None),
        ('<META NAME="GoogleBot" CONTENT="NoIndex, follow">', True, None),
        ('<meta name="robots" content="index, follow">', False, None),
        ('<link rel="canonical" href="/a"><link rel="canonical" href="/b">', False, "/a"),
        ('<link rel="alternate canonical" href=" /c ">', False, "/c"),
    ],
)
def test_page_signals(html: str, noindex: bool, canonical: str | None) -> None:
    """Robots meta (robots or googlebot, any case) and the first canonical link."""
    assert page_signals(f"<html><head>{html}</head></html>") == (noindex, canonical)


@pytest.mark.parametrize(
    ("value", "noindex"),
    [
        ("noindex", True),
        ("googlebot: noindex", True),
        ("none", True),
        ("nofollow", False),
        (None, False),
    ],
)
def test_x_robots_tag(value: str | None, noindex: bool) -> None:
    """X-Robots-Tag noindex, with or without a user agent, or 'none'."""
    assert header_noindex(value) is noindex


def test_cli_in_process_with_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    """main() runs check --app in-process; the rich progress bar draws on a terminal."""
    from sitemap_middleware.__main__ import main
    from sitemap_middleware._ops.terminal import DocumentLines, Paint

    with pytest.raises(SystemExit) as exited:
        main(
            [
                "check",
                "--app",
                "tests.sites.checked_sites:selfcheck_wsgi",
                "--json",
                "--no-http-checks",
            ]
        )
    assert exited.value.code == 1
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["urls_checked"] == 7
    stream = io.StringIO()
    bar = DocumentLines(stream, "https://example.com/", Paint(False), bar=True)
    with bar:
        bar.add_total(3)
        bar.advance()
    assert bar.bar.tasks[0].completed == 1 and bar.bar.tasks[0].total == 3
    with pytest.raises(SystemExit) as exited:
        main(["check"])
    assert exited.value.code == 2
    assert "give a URL to check, or --app MODULE:APP" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["export", "--app", "tests.sites.checked_sites", "/tmp/x"])
    assert exited.value.code == 2
    assert "must look like 'module:app'" in capsys.readouterr().err


_LETTERS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


def _mixed_case(draw: Any, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.upper() if flip else c for c, flip in zip(text, flips, strict=True))


@st.composite
def _same_site_locs(draw: Any) -> tuple[str, str, str]:
    """(sitemap URL, a loc under its directory, the loc's path); schemes and hosts re-cased."""
    scheme = draw(st.sampled_from(["http", "https"]))
    host = draw(_LETTERS) + ".example"
    directory = "/" + "/".join(draw(st.lists(_LETTERS, max_size=2)))
    directory = directory.rstrip("/") + "/"
    path = directory + draw(_LETTERS)
    loc = f"{_mixed_case(draw, scheme)}://{_mixed_case(draw, host)}{path}"
    sitemap = f"{_mixed_case(draw, scheme)}://{_mixed_case(draw, host)}{directory}sitemap.xml"
    return sitemap, loc, path


def _outside(sitemap: str, loc: str) -> bool:
    report = DocumentReport(sitemap)
    parsed = Parsed("urlset", entries=[Entry(loc)])
    check_document(
        parsed, report, fetched_at=NOW, served_at=None, last_modified=None, cross_origin=None
    )
    return "loc-outside" in {f.code for f in report.findings.kept}


@given(_same_site_locs())
def test_scheme_and_host_compare_case_insensitively(case: tuple[str, str, str]) -> None:
    """RFC 3986 6.2.2.1: HTTP://Example.COM/x is under http://example.com/ (no loc-outside)."""
    sitemap, loc, _ = case
    assert not _outside(sitemap, loc)


@given(_same_site_locs())
def test_paths_stay_case_sensitive(case: tuple[str, str, str]) -> None:
    """/Shop/x is not under /shop/: the directory rule compares paths exactly."""
    sitemap, loc, path = case
    if path.count("/") < 2:
        return  # the root directory holds every path
    upper = loc[: len(loc) - len(path)] + path.upper()
    assert _outside(sitemap, upper)


def test_upper_case_scheme_in_a_loc_is_not_outside() -> None:
    """The reviewer's case: HTTP://example.com/x in http://example.com/sitemap.xml."""
    assert not _outside("http://example.com/sitemap.xml", "HTTP://example.com/x")
    assert not _outside("HTTPS://EXAMPLE.com/shop/sitemap.xml", "https://example.COM/shop/x")
    assert _outside("http://example.com/shop/sitemap.xml", "http://example.com/SHOP/x")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-urls", "-1"], "argument --max-urls: must be an integer >= 1, got '-1'"),
        (["--max-urls", "0"], "argument --max-urls: must be an integer >= 1, got '0'"),
        (["--max-urls", "x"], "argument --max-urls: must be an integer >= 1, got 'x'"),
        (["--timeout", "0"], "argument --timeout: must be a number of seconds > 0, got '0'"),
        (["--timeout", "-3"], "argument --timeout: must be a number of seconds > 0, got '-3'"),
        (["--timeout", "nan"], "argument --timeout: must be a number of seconds > 0, got 'nan'"),
        (["--timeout", "inf"], "argument --timeout: must be a number of seconds > 0, got 'inf'"),
        (["--concurrency", "0"], "argument --concurrency: must be an integer >= 1, got '0'"),
        (["--max-documents", "-2"], "argument --max-documents: must be an integer >= 1"),
        (["--rate", "-1"], "argument --rate: must be a number of requests a second >= 0"),
    ],
)
def test_check_refuses_bad_numbers_as_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse's usage error (exit 2) with a message naming the option and the value."""
    from sitemap_middleware.__main__ import build_parser

    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["check", "https://example.com/", *argv])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("usage: sitemap-middleware check") and message in error


def test_check_accepts_good_numbers() -> None:
    from sitemap_middleware.__main__ import build_parser

    args = build_parser().parse_args(
        ["check", "https://example.com/", "--max-urls", "3", "--timeout", "0.3", "--rate", "0"]
    )
    assert (args.max_urls, args.timeout, args.rate) == (3, 0.3, 0.0)


def test_a_feeds_relative_links_resolve_against_xml_base_and_the_feeds_url() -> None:
    """check reads feed links as parse_sitemap does: xml:base (feed, entry, link), else
    the feed's own URL; only an entry's own <link>, never its <source>'s."""
    body = b"""<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://e.com/blog/">
<entry><source><link href="https://other.example/"/></source><link href="post1"/>
<updated>2024-01-01T00:00:00Z</updated></entry>
<entry xml:base="https://e.com/news/"><link href="post2"/></entry>
</feed>"""
    rss = b"""<rss version="2.0"><channel><item><link>/post3</link></item></channel></rss>"""
    report = DocumentReport("https://e.com/feed.atom")
    parsed = parse_sitemap(body, "https://e.com/feed.atom", report)
    assert parsed is not None and report.findings.count("error") == 0
    assert [e.loc for e in parsed.entries] == [
        "https://e.com/blog/post1",
        "https://e.com/news/post2",
    ]
    parsed = parse_sitemap(rss, "https://e.com/feed.rss", report)
    assert parsed is not None and [e.loc for e in parsed.entries] == ["https://e.com/post3"]
