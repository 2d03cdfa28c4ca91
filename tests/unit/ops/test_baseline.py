"""`check --baseline`: the regression gate passes an unchanged site and fails on URLs
removed beyond the threshold, a document turned invalid, a vanished section."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from sitemap_middleware._ops.apps import client_for_app
from sitemap_middleware._ops.baseline import (
    Baseline,
    MaxRemoved,
    compare_baseline,
    require_urls,
    section_of,
)
from sitemap_middleware._ops.check import CheckOptions, run_check
from sitemap_middleware._ops.fetch import Fetcher
from sitemap_middleware._ops.findings import CheckReport, github_annotations
from tests.sites.baseline_site import DEFAULT, make_app

BASE = "https://shop.example"


def check(sections: dict[str, Any]) -> CheckReport:
    async def main() -> CheckReport:
        async with client_for_app(make_app(sections)) as client:
            options = CheckOptions(http_checks=False)
            return await run_check(BASE + "/", Fetcher(client, rate=0), options)

    return anyio.run(main)


@pytest.fixture(scope="module")
def baseline() -> Baseline:
    report = check(DEFAULT)
    assert report.ok, report.format_text()
    return Baseline.from_json(Baseline.from_report(report).to_json())


def gate(baseline: Baseline, sections: dict[str, Any], max_removed: str = "5%") -> CheckReport:
    report = check(sections)
    compare_baseline(baseline, report, MaxRemoved.parse(max_removed))
    return report


def test_baseline_records_documents_and_urls(baseline: Baseline) -> None:
    assert len(baseline.urls()) == 22
    assert baseline.documents[f"{BASE}/sitemap-blog-2.xml"].urls == tuple(
        f"{BASE}/blog/{n}" for n in range(10, 20)
    )
    assert baseline.documents[f"{BASE}/sitemap.xml"].kind == "sitemapindex"
    assert section_of(f"{BASE}/sitemap-blog-2.xml") == f"{BASE}/sitemap-blog.xml"


def test_unchanged_site_passes(baseline: Baseline) -> None:
    report = gate(baseline, DEFAULT, "0")
    assert report.ok, report.format_text()
    assert "baseline: 0 URLs removed (0.0% of 22), 0 added (--max-removed 0)" in report.notes


def test_removal_within_the_threshold_passes_beyond_it_fails(baseline: Baseline) -> None:
    fewer = {**DEFAULT, "blog": DEFAULT["blog"][:-2]}  # 2 of 22 removed: 9.1%
    assert gate(baseline, fewer, "10%").ok
    assert gate(baseline, fewer, "2").ok
    report = gate(baseline, fewer, "5%")
    assert not report.ok
    assert report.codes()["baseline-urls-removed"] == 1
    removed = [f.url for f in report.site.kept if f.code == "baseline-url-removed"]
    assert removed == [f"{BASE}/blog/18", f"{BASE}/blog/19"]
    assert not gate(baseline, fewer, "1").ok


def test_a_vanished_section_fails(baseline: Baseline) -> None:
    report = gate(baseline, {"pages": DEFAULT["pages"] + [f"/new/{n}" for n in range(20)]}, "100%")
    assert not report.ok
    vanished = {f.document for f in report.site.kept if f.code == "baseline-section-vanished"}
    assert vanished == {f"{BASE}/sitemap-blog.xml"}


def test_a_site_that_now_fits_one_file_has_no_vanished_section(baseline: Baseline) -> None:
    """Under max_urls_per_page the index becomes the urlset: pages gone, URLs still listed."""
    report = gate(baseline, {**DEFAULT, "blog": DEFAULT["blog"][:5]}, "100%")
    assert "baseline-section-vanished" not in report.codes(), report.format_text()
    assert f"baseline: {BASE}/sitemap-blog.xml is gone, its URLs are listed elsewhere" in (
        report.notes
    )


def test_a_page_gone_from_a_remaining_section_is_a_note(baseline: Baseline) -> None:
    report = gate(baseline, {**DEFAULT, "blog": DEFAULT["blog"][:10]}, "50%")
    assert report.ok, report.format_text()
    assert f"baseline: page {BASE}/sitemap-blog-2.xml is gone (its section remains)" in report.notes


def test_a_document_turned_invalid_fails(baseline: Baseline) -> None:
    future = [{"loc": "/", "lastmod": "2999-01-01"}, "/about"]
    report = gate(baseline, {**DEFAULT, "pages": future})
    assert not report.ok and report.codes()["lastmod-future"] == 2  # the page, the index
    invalid = {f.document for f in report.site.kept if f.code == "baseline-now-invalid"}
    assert invalid == {f"{BASE}/sitemap.xml", f"{BASE}/sitemap-pages-1.xml"}


@pytest.mark.parametrize("text", ["-1", "101%", "five", "5.5"])
def test_max_removed_rejects_nonsense(text: str) -> None:
    with pytest.raises(ValueError, match="count >= 0 or a percentage"):
        MaxRemoved.parse(text)


def test_a_malformed_baseline_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a check baseline"):
        Baseline.from_json('{"format": "something else"}')


_HEAD = '{"format": "sitemap-middleware-baseline", "version": 1, "start": "https://a.example/"'


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,  # RecursionError
        _HEAD + ', "documents": {"u": {"kind": "urlset", "errors": 1e999, "urls": []}}}',
        _HEAD + ', "documents": {"u": {"kind": "urlset", "errors": 0, "urls": "https://a"}}}',
        _HEAD + ', "documents": {"u": {"kind": "urlset", "errors": true, "urls": [1]}}}',
        _HEAD + ', "documents": []}',
        '["format"]',
    ],
)
def test_a_baseline_of_the_wrong_shape_is_a_value_error(text: str) -> None:
    """Never a traceback (RecursionError, OverflowError), never coerced (a string of URLs
    read as one URL per character)."""
    with pytest.raises(ValueError, match="not a check baseline"):
        Baseline.from_json(text)


def _dated(day: str, moved: int = 0, to: str = "") -> dict[str, Any]:
    """The default site with lastmods: every blog post dated ``day``, the first ``moved``
    of them ``to`` instead."""
    blog = [
        {"loc": f"/blog/{n}", "lastmod": to if n < moved else day}
        for n in range(len(DEFAULT["blog"]))
    ]
    return {**DEFAULT, "blog": blog}


def test_lastmods_reset_en_masse_fail_a_few_moved_pass() -> None:
    """A deploy or an import that stamps most URLs with one new lastmod (a file mtime, a
    bulk UPDATE) is caught; a few URLs really edited are not."""
    report = check(_dated("2024-01-01"))
    before = Baseline.from_json(Baseline.from_report(report).to_json())
    assert before.documents[f"{BASE}/sitemap-blog-1.xml"].lastmods[0] == "2024-01-01T00:00:00+00:00"
    few = gate(before, _dated("2024-01-01", 3, "2024-06-01T10:00:00+00:00"), "0")
    assert few.ok, few.format_text()
    reset = gate(before, _dated("2024-01-01", 15, "2024-06-01T10:00:00+00:00"), "0")
    assert not reset.ok
    (finding,) = [f for f in reset.site.kept if f.code == "baseline-lastmods-reset"]
    assert "15 of 20" in finding.message and "2024-06-01T10" in finding.message


def test_named_urls_that_vanish_fail(baseline: Baseline) -> None:
    """--require URL: a URL that must stay listed (the home page, a landing page)."""
    report = check({**DEFAULT, "pages": ["/"]})
    require_urls(report, [f"{BASE}/", f"{BASE}/about"])
    assert not report.ok
    missing = [f.url for f in report.site.kept if f.code == "required-url-missing"]
    assert missing == [f"{BASE}/about"]
    report = check(DEFAULT)
    require_urls(report, [f"{BASE}/about"])
    assert report.ok


def test_github_annotations_name_each_finding() -> None:
    report = check({**DEFAULT, "pages": ["/"]})
    require_urls(report, [f"{BASE}/about"])
    lines = github_annotations(report).splitlines()
    assert "::error title=required-url-missing::https://shop.example/about: " in lines[0]
    assert lines[-1].startswith("::notice title=sitemap check::FAILED")
