"""The XSL human view, rendered by headless Chromium (Debian's package, installed by .ci/run)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import httpx
import pytest

from sitemap_middleware import Image, SitemapEntry
from tests.harness.core import make_config
from tests.harness.ports import bound_socket
from tests.harness.servers import asgi_app, serve_uvicorn
from tests.integration.cdp import Tab, browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="Chromium is not installed (.ci/run installs Debian's chromium)"
    ),
]
ROWS = 37


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    entries = [
        SitemapEntry(
            f"/item/{i}",
            lastmod=date(2024, 1, 1) + timedelta(days=(i * 7) % 30),
            priority=round((i % 10) / 10, 1),
            images=[Image(f"/img/{i}-{k}.png") for k in range(i % 3)],
        )
        for i in range(ROWS)
    ]
    config = make_config(
        {"items": entries, "more": ["/x", "/y"]}, base_url=base, stylesheet=True, html=True
    )
    with serve_uvicorn(asgi_app(config), sock) as url:
        yield url


def _dump_dom(url: str, tmp_path: Path) -> str:
    assert CHROMIUM is not None
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=3000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout


def _rows(dom: str) -> list[list[str]]:
    body = dom.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_urlset_renders_as_a_table_with_one_row_per_url(site: str, tmp_path: Path) -> None:
    """A person opening a sitemap page sees a table: URL, lastmod, ..., extensions count."""
    dom = _dump_dom(f"{site}/sitemap-items-1.xml", tmp_path)
    rows = _rows(dom)
    assert len(rows) == ROWS
    assert f'<strong id="count">{ROWS}</strong>' in dom
    first = rows[0]
    assert f'<a href="{site}/item/0">' in first[0]
    assert first[1] == '<time datetime="2024-01-01">1 Jan 2024</time>'  # for people
    assert [row[4] for row in rows[:3]] == ["0", "1", "2"]  # images per URL


def test_table_sorts_by_a_column(site: str, tmp_path: Path) -> None:
    """The sort script works in the browser: #sort=1-desc orders rows by lastmod, newest first."""
    rows = _rows(_dump_dom(f"{site}/sitemap-items-1.xml#sort=1-desc", tmp_path))
    dates = [row[1] for row in rows]
    assert dates == sorted(dates, reverse=True) and dates != sorted(dates)


def test_index_links_through_to_its_pages(site: str, tmp_path: Path) -> None:
    """The index view lists each page as a link."""
    dom = _dump_dom(f"{site}/sitemap_index.xml", tmp_path)
    rows = _rows(dom)
    assert len(rows) == 2
    assert (
        f'<a href="{site}/sitemap-items-1.xml">' in dom
        and f'<a href="{site}/sitemap-more-1.xml">' in dom
    )


def test_xsl_view_links_to_the_html_view(site: str, tmp_path: Path) -> None:
    """Browsers that still run XSLT show a link to the HTML view of the same page (which
    works without XSLT); the index links the index view."""
    dom = _dump_dom(f"{site}/sitemap-items-1.xml", tmp_path)
    assert re.search(
        r'<a href="sitemap-items-1.html"[^>]*>Open the HTML view of this page</a>', dom
    )
    dom = _dump_dom(f"{site}/sitemap_index.xml", tmp_path)
    assert re.search(r'<a href="sitemap.html"[^>]*>Open the HTML view</a>', dom)


#: Where the HTML-view link is on screen and what is drawn at its centre.
LINK_ON_SCREEN = """(() => {
  const link = document.getElementById("html-view-link");
  const box = link.getBoundingClientRect();
  const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  const banner = document.querySelector("xslt-warning-banner");
  return {href: link.href, top: box.top, bottom: box.bottom, height: innerHeight,
    shown: top === link || link.contains(top), covered_by: top ? top.tagName : null,
    banner: banner ? banner.getBoundingClientRect().height : 0,
    wide: document.documentElement.scrollWidth};
})()"""


@pytest.mark.parametrize("width, height, mobile", [(1280, 900, False), (390, 844, True)])
def test_xsl_link_to_the_html_view_shows_below_chromiums_banner(
    site: str, tmp_path: Path, artifacts: Path, width: int, height: int, mobile: bool
) -> None:
    """Issue 29: Chromium draws a warning over XSLT pages (a popover fixed at the top); the
    link to the page's own HTML view is on the first screen, drawn, not covered, at
    desktop and phone widths, and the phone page does not scroll sideways. Screenshots
    kept as artifacts."""
    with browser(tmp_path / "profile", log=tmp_path / "chromium.log") as chromium:
        tab = Tab(chromium)
        tab.emulate(width, height, mobile=mobile, scale=2 if mobile else 1)
        for path, view in (
            ("/sitemap-items-1.xml", "/sitemap-items-1.html"),
            ("/sitemap_index.xml", "/sitemap.html"),
        ):
            tab.goto(site + path)
            tab.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            name = f"xsl-{path.strip('/').split('.')[0]}-{'phone' if mobile else 'desktop'}.png"
            tab.screenshot(artifacts / name)
            where = tab.eval(LINK_ON_SCREEN)
            print(path, width, where)  # whether this Chromium drew its banner, and how tall
            assert where["href"] == site + view, where
            assert where["shown"] and where["top"] >= 0 and where["bottom"] <= height, where
            assert where["wide"] <= width, where
            assert httpx.get(where["href"]).status_code == 200
