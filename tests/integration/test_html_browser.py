"""The HTML views in a real browser: headless Chromium with XSLT switched off.

Driven over the DevTools protocol (tests/integration/cdp.py): row counts against the XML,
links, sorting by mouse and keyboard, filtering, the no-JavaScript view, injection, the
CSP, and screenshots at desktop and phone widths kept as artifacts (their folder is
printed in the test summary; ``SITEMAP_ARTIFACTS_DIR`` chooses it).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from sitemap_middleware import Image, NewsArticle, Section, SitemapEntry, Video
from tests.harness.core import make_config
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.ports import bound_socket, free_port
from tests.harness.servers import asgi_app, serve_uvicorn
from tests.integration.cdp import CHROMIUM, NO_XSLT, Browser, Tab, browser
from tests.integration.demo_site import wait_for_guard, wait_for_ready
from tests.integration.validator import JAVA, VNU, vnu_messages

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="Chromium is not installed (scripts/test installs Debian's)"
    ),
]
ROOT = Path(__file__).resolve().parents[2]
ROWS = 37
#: Would run if any of it reached the page as markup.
ATTACK = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
PHONE = (390, 844)
DESKTOP = (1280, 900)
DEMO_PRODUCTS = 1_200
DEMO_URLS_PER_PAGE = 500


def _entries() -> list[SitemapEntry]:
    entries = [
        SitemapEntry(
            f"/item/{i}",
            lastmod=date(2024, 1, 1) + timedelta(days=(i * 7) % 30),
            changefreq=("daily", "weekly", "monthly")[i % 3],
            priority=round((i % 10) / 10, 1),
            images=[Image(f"/img/{i}-{k}.png") for k in range(i % 3)],
        )
        for i in range(ROWS - 1)
    ]
    entries.append(
        SitemapEntry(
            "/item/attack?q=<script>&x='1'",
            videos=[
                Video(
                    thumbnail_loc="/t.jpg",
                    title=ATTACK[:100],
                    description=ATTACK,
                    content_loc="/v.mp4",
                    duration=75,
                )
            ],
            news=NewsArticle(
                publication_name="The Times",
                language="en",
                publication_date="2024-01-02",
                title=ATTACK,
            ),
        )
    )
    return entries


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sections = {
        "items": _entries(),
        "more": ["/x", "/y"],
        "paged": Section([f"/p/{i}" for i in range(25)], max_urls=10),
    }
    config = make_config(sections, base_url=base, stylesheet=True, html=True, news_max_age=None)
    with serve_uvicorn(asgi_app(config), sock) as url:
        yield url


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    folder = tmp_path_factory.mktemp("chromium")
    with browser(folder / "profile", NO_XSLT, log=folder / "chromium.log") as instance:
        yield instance


@pytest.fixture
def tab(chromium: Browser) -> Iterator[Tab]:
    page = Tab(chromium)
    page.emulate(*DESKTOP, mobile=False)
    try:
        yield page
    finally:
        page.close()


def _rows(tab: Tab, visible_only: bool = False) -> int:
    selector = "tbody tr:not([hidden])" if visible_only else "tbody tr"
    return int(tab.eval(f"document.querySelectorAll({selector!r}).length"))


def _column(tab: Tab, col: int) -> list[str]:
    return list(
        tab.eval(f"[...document.querySelectorAll('tbody tr')].map(r => r.cells[{col}].textContent)")
    )


def _dates(tab: Tab) -> list[str]:
    """The machine dates of the Last modified column (shown for people, kept in <time>)."""
    return list(
        tab.eval(
            "[...document.querySelectorAll('tbody tr')].map(r => "
            "(r.cells[1].querySelector('time') || {getAttribute: () => ''}).getAttribute('datetime'))"
        )
    )


def _clean(tab: Tab) -> None:
    """No script error, no CSP violation, no injected script ran."""
    assert tab.eval("window.__violations") == []
    assert tab.eval("typeof window.__pwned") == "undefined"


def test_xslt_is_off_in_this_browser(site: str, tab: Tab) -> None:
    """The premise: with XSLT off, sitemap.xml shows no transformed table."""
    tab.goto(f"{site}/sitemap-items-1.xml")
    assert tab.eval("document.querySelectorAll('table').length") == 0
    assert "XSLT" in tab.eval("document.body.innerText")


def test_index_view_lists_every_page_of_the_xml_index(site: str, tab: Tab) -> None:
    """One row per child of the XML index, each linking to a view that answers 200."""
    children = child_urls(check_document(httpx.get(f"{site}/sitemap_index.xml").content))
    tab.goto(f"{site}/sitemap.html")
    _clean(tab)
    assert _rows(tab) == len(children) == 5
    xml_links = tab.eval("[...document.querySelectorAll('tbody td.url a')].map(a => a.href)")
    assert xml_links == children
    views = tab.eval("[...document.querySelectorAll('tbody th a')].map(a => a.href)")
    assert views == [c.replace(".xml", ".html") for c in children]
    for view in views + tab.eval("[...document.querySelectorAll('nav a')].map(a => a.href)"):
        assert httpx.get(view).status_code == 200, view
    assert _column(tab, 1) == ["37", "2", "10", "10", "5"]


def test_page_view_rows_match_the_xml_and_links_navigate(site: str, tab: Tab) -> None:
    """Following the index's link opens the page view: one row per URL of the XML."""
    tab.goto(f"{site}/sitemap.html")
    tab.follow("document.querySelector('tbody th a').click()")
    assert tab.eval("location.pathname") == "/sitemap-items-1.html"
    urls = page_urls(check_document(httpx.get(f"{site}/sitemap-items-1.xml").content))
    assert _rows(tab) == len(urls) == ROWS
    shown = tab.eval(
        "[...document.querySelectorAll('tbody th a')].map(a => a.getAttribute('href'))"
    )
    assert shown == urls
    assert tab.eval("document.getElementById('count').textContent") == str(ROWS)
    tab.goto(f"{site}/sitemap-paged-2.html")
    nav = tab.eval("[...document.querySelectorAll('nav a')].map(a => a.textContent)")
    assert nav == ["All sitemap files", "Previous page", "Next page", "sitemap-paged-2.xml (XML)"]
    tab.follow("document.querySelector('a[rel=next]').click()")
    assert tab.eval("location.pathname") == "/sitemap-paged-3.html" and _rows(tab) == 5


def test_sorting_by_click_and_by_keyboard(site: str, tab: Tab) -> None:
    """Header buttons sort by date and number; Enter on a focused header reverses."""
    tab.goto(f"{site}/sitemap-items-1.html")
    _clean(tab)
    as_sent = [d for d in _dates(tab) if d]
    tab.eval("document.querySelectorAll('thead th button')[1].click()")
    dates = [d for d in _dates(tab) if d]
    assert dates == sorted(as_sent) and dates != as_sent
    assert tab.eval("document.querySelectorAll('thead th')[1].getAttribute('aria-sort')") == (
        "ascending"
    )
    assert _column(tab, 1)[-1] == ""  # a URL without lastmod sorts last
    tab.eval("document.querySelectorAll('thead th button')[1].focus()")
    tab.press("Enter")
    dates = [d for d in _dates(tab) if d]
    assert dates == sorted(dates, reverse=True)
    assert tab.eval("document.getElementById('status').textContent") == (
        "Sorted by Last modified, descending."
    )
    tab.eval("document.querySelectorAll('thead th button')[3].focus()")
    tab.press(" ")
    priorities = [float(p) for p in _column(tab, 3) if p]
    assert priorities == sorted(priorities) and len(set(priorities)) == 10
    assert "sort=3-ascending" in tab.eval("location.hash")
    tab.goto(f"{site}/sitemap-items-1.html#sort=3-descending")  # shareable state
    assert [float(p) for p in _column(tab, 3) if p] == sorted(priorities, reverse=True)


def test_filtering_hides_rows_and_announces_the_count(site: str, tab: Tab) -> None:
    """Typing in the filter box keeps matching rows; a status line says how many."""
    tab.goto(f"{site}/sitemap-items-1.html")
    tab.eval("document.getElementById('filter').focus()")
    tab.type("/item/1")
    # /item/1 and /item/10 ... /item/19
    assert _rows(tab, visible_only=True) == 11
    assert tab.eval("document.getElementById('status').textContent") == (
        f"Showing 11 of {ROWS} rows."
    )
    tab.goto(f"{site}/sitemap-items-1.html#q=monthly")
    assert _rows(tab, visible_only=True) == 12


def test_view_works_without_javascript(site: str, tab: Tab) -> None:
    """Scripts off: every row is there, as sent; only the enhancements are missing."""
    tab.scripts(False)
    try:
        tab.goto(f"{site}/sitemap-items-1.html")
        assert _rows(tab) == ROWS
        assert tab.eval("document.querySelectorAll('thead th button').length") == 0
        assert tab.eval("document.getElementById('filter')") is None
    finally:
        tab.scripts(True)


def test_injected_markup_stays_text(site: str, tab: Tab) -> None:
    """Entry text holding <script> and onerror shows as text; nothing runs or loads."""
    tab.goto(f"{site}/sitemap-items-1.html")
    _clean(tab)
    assert tab.eval("document.querySelectorAll('script').length") == 1
    assert tab.eval("document.querySelectorAll('img').length") == 0
    assert ATTACK in tab.eval("document.querySelector('tbody').textContent")
    assert tab.eval("document.querySelectorAll('thead th button').length") == 5  # CSP let ours run


#: Text lines each body row is tall: its height less its first cell's padding, in lines
#: of that cell (closed <details> are laid out, though not drawn: no box counting).
ROW_LINES = """[...document.querySelectorAll('tbody tr')].map(row => {
  const cell = getComputedStyle(row.cells[0]);
  const padding = parseFloat(cell.paddingTop) + parseFloat(cell.paddingBottom);
  return (row.getBoundingClientRect().height - padding) / parseFloat(cell.lineHeight);
})"""
#: Whether the element ``selector`` names is on the first screen and drawn, not covered.
ON_FIRST_SCREEN = """(selector => {
  const link = document.querySelector(selector);
  const box = link.getBoundingClientRect();
  const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return box.top >= 0 && box.bottom <= innerHeight && (top === link || link.contains(top));
})"""


def test_views_look_right_on_desktop_and_phone(site: str, tab: Tab, artifacts: Path) -> None:
    """Issue 29: at 1280 and 390 px every URL of a page view is one line tall (an index
    row at most two), nothing scrolls sideways (the page or its table), and the link to the
    other view of the page (its XML) is on the first screen. On a phone a row's details
    (lastmod, changefreq, priority, extensions) open on demand. Screenshots kept."""
    for size, (width, height), mobile in (("desktop", DESKTOP, False), ("phone", PHONE, True)):
        tab.emulate(width, height, mobile=mobile, scale=2 if mobile else 1)
        for name, path, other in (
            ("index", "/sitemap.html", "nav a[href='sitemap.xml']"),
            ("page", "/sitemap-items-1.html", "nav a[href='sitemap-items-1.xml']"),
        ):
            tab.goto(site + path)
            tab.screenshot(artifacts / f"test-app-{name}-{size}.png")
            assert tab.eval("window.innerWidth") == width  # the viewport meta took effect
            assert tab.eval("document.documentElement.scrollWidth") <= width
            assert tab.eval("document.querySelector('.scroll').scrollWidth") <= tab.eval(
                "document.querySelector('.scroll').clientWidth"
            )
            lines = tab.eval(ROW_LINES)
            # One line a URL; an index row at most two (its XML file under it on a phone).
            assert max(lines) <= (1.5 if name == "page" else 2.5), (size, name, lines)
            assert tab.eval(f"{ON_FIRST_SCREEN}({other!r})"), (size, name)
    # A phone: the row shows its path; tapping its toggle shows the rest.
    first = "document.querySelector('tbody tr')"
    assert tab.eval(f"{first}.cells[1].getClientRects().length") == 0  # lastmod: on demand
    shown = tab.eval(f"{first}.querySelector('th').innerText")
    assert shown == "/item/0", shown
    tab.eval(f"{first}.querySelector('summary').click()")
    tab.eval("new Promise(done => setTimeout(done))")  # the toggle event's task ran
    assert tab.eval(f"{first}.cells[1].getClientRects().length") == 1
    assert tab.eval(f"{first}.cells[1].innerText") == "1 Jan 2024"
    assert tab.eval("document.documentElement.scrollWidth") <= PHONE[0]
    tab.screenshot(artifacts / "test-app-page-phone-details.png")
    assert (artifacts / "test-app-page-phone.png").stat().st_size > 10_000


# -- the demo, started as a user starts it ---------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m sitemap_middleware demo`; yields the HTML view URL it prints."""
    data = tmp_path_factory.getbasetemp() / "demo-data"  # shared with test_demo
    port = free_port()
    log = tmp_path_factory.mktemp("demo-html") / "demo.log"
    command = [sys.executable, "-m", "sitemap_middleware", "demo", "--port", str(port)]
    command += ["--data-dir", str(data)]
    # test_demo's size: an index with several product pages, at a hundredth of the bytes.
    command += ["--products", str(DEMO_PRODUCTS), "--urls-per-page", str(DEMO_URLS_PER_PAGE)]
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_for_ready(process, log)
        printed = re.search(r"Sitemaps for people \(HTML view\): (\S+)", log.read_text())
        assert printed is not None, log.read_text()
        wait_for_guard(f"http://127.0.0.1:{port}")  # the views compared with the XML hold still
        yield printed[1]
    finally:
        process.terminate()
        process.wait(20)


@pytest.mark.slow
def test_demo_html_views_in_the_browser(demo: str, tab: Tab, artifacts: Path) -> None:
    """The demo's index view lists every entry of its XML index with each page's URL count;
    page views match their XML row for row; sorting works; the mounted blog and the second
    host name have views of their own; the views pass vnu; screenshots at both widths."""
    site = demo.rsplit("/", 1)[0]
    assert demo == f"{site}/sitemap.html"
    children = child_urls(check_document(httpx.get(f"{site}/sitemap.xml").content))
    tab.goto(demo)
    _clean(tab)
    assert _rows(tab) == len(children)
    assert tab.eval("[...document.querySelectorAll('tbody td.url a')].map(a => a.href)") == children
    counts = {
        c: int(n.replace(",", "")) for c, n in zip(children, _column(tab, 1), strict=True) if n
    }
    assert sorted(set(children) - set(counts)) == [f"{site}/blog/sitemap.xml"]  # elsewhere
    for child, count in counts.items():
        assert len(page_urls(check_document(httpx.get(child).content))) == count, child
    products = [count for child, count in counts.items() if "products" in child]
    assert len(products) > 2 and sum(products) == 3 * DEMO_PRODUCTS  # three languages
    tab.screenshot(artifacts / "demo-index-desktop.png")
    saved = [artifacts / "demo-sitemap.html"]
    saved[0].write_bytes(httpx.get(demo).content)
    for section in ("videos", "news", "pages", "docs"):
        xml = f"{site}/sitemap-{section}-1.xml"
        urls = page_urls(check_document(httpx.get(xml).content))
        tab.goto(xml.replace(".xml", ".html"))
        _clean(tab)
        assert _rows(tab) == len(urls) == counts[xml], section
        shown = tab.eval(
            "[...document.querySelectorAll('tbody th a')].map(a => a.getAttribute('href'))"
        )
        assert shown == urls
        saved.append(artifacts / f"demo-sitemap-{section}-1.html")
        saved[-1].write_bytes(httpx.get(xml.replace(".xml", ".html")).content)
    tab.goto(f"{site}/sitemap-pages-1.html")
    tab.eval("document.querySelector('thead th button').click()")
    tab.eval("document.querySelector('thead th button').click()")
    locs = _column(tab, 0)
    assert locs == sorted(locs, key=_natural, reverse=True)
    tab.goto(f"{site}/sitemap-videos-1.html")
    tab.eval("document.querySelector('details').open = true")
    tab.screenshot(artifacts / "demo-videos-desktop.png")
    tab.emulate(*PHONE, mobile=True, scale=2)
    for name, path in (("index", "/sitemap.html"), ("news", "/sitemap-news-1.html")):
        tab.goto(site + path)
        assert tab.eval("document.documentElement.scrollWidth") <= PHONE[0]
        tab.screenshot(artifacts / f"demo-{name}-phone.png")
    tab.emulate(*DESKTOP, mobile=False)
    # The blog, mounted at /blog, and the second host name serve views of their own.
    port = site.rsplit(":", 1)[1]
    for view, first in (
        (f"{site}/blog/sitemap.html", f"{site}/blog/sitemap-posts-1.html"),
        (f"http://localhost:{port}/sitemap.html", f"http://localhost:{port}/sitemap-pages-1.html"),
    ):
        tab.goto(view)
        _clean(tab)
        assert tab.eval("document.querySelector('tbody th a').href") == first
        tab.goto(first)
        _clean(tab)
        urls = page_urls(check_document(httpx.get(first.replace(".html", ".xml")).content))
        assert _rows(tab) == len(urls) > 0
        shown = tab.eval("[...document.querySelectorAll('tbody th a')].map(a => a.href)")
        assert shown == urls and all(url.startswith(first.rsplit("/", 1)[0]) for url in urls)
        saved.append(artifacts / f"demo-{urlsplit(first).hostname}-{first.rsplit('/', 1)[1]}")
        saved[-1].write_bytes(httpx.get(first).content)
    if JAVA is not None and VNU is not None:
        assert vnu_messages(saved) == []


def _natural(text: str) -> list[object]:
    """Intl.Collator({numeric: true}) order: digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]
