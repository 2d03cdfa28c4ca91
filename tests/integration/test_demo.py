"""The demo (the main job) started as a user starts it, in both flavours, crawled end to end."""

from __future__ import annotations

import json
import logging
import os
import re
import struct
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx
import pytest
from lxml import etree

from sitemap_middleware.demo.planted import DEALS, DEALS_LASTMOD, DEMO_ARGS_ENV, OFFERS, PLANTED
from sitemap_middleware.demo.serve import READY
from sitemap_middleware.demo.site import DOCS, database_path, prepare_data
from tests.harness.documents import check_document
from tests.harness.ports import free_port
from tests.integration.demo_site import (
    GUARDED,
    indexable_problems,
    wait_for_guard,
    wait_for_ready,
)

ROOT = Path(__file__).resolve().parents[2]
#: The demo at a size a test can crawl: `--products 1200 --urls-per-page 500` still gives
#: an index with three product pages (500, 500, 200) and every feature of the default
#: 120,000-product shop, at a hundredth of the bytes.
PRODUCTS = 1_200
URLS_PER_PAGE = 500

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
IMAGE = "{http://www.google.com/schemas/sitemap-image/1.1}"
VIDEO = "{http://www.google.com/schemas/sitemap-video/1.1}"
XHTML = "{http://www.w3.org/1999/xhtml}"
#: A URL pattern with more URLs than this is sampled; smaller ones are fetched in full.
FULL_PATTERN = 200
#: Of a large pattern, every SAMPLE_STEP-th URL (plus the first and the last) is fetched.
SAMPLE_STEP = 50


@dataclass
class Demo:
    url: str
    log: Path
    printed: list[str]
    server: str
    #: (URL, status, seconds) of the first GET of each printed link, right after "ready".
    first_clicks: list[tuple[str, int, float]]
    #: Whether the catalog existed before this start (then it is reused, not built).
    reused: bool


@pytest.fixture(scope="module", params=["uvicorn", "werkzeug"])
def demo(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Demo]:
    """`python -m sitemap_middleware demo --server X`, started as a user starts it."""
    server = str(request.param)
    data = tmp_path_factory.getbasetemp() / "demo-data"  # shared by both flavours
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("demo-log") / "demo.log"
    command = [sys.executable, "-m", "sitemap_middleware", "demo", "--server", server]
    command += ["--port", str(port), "--data-dir", str(data)]
    command += ["--products", str(PRODUCTS), "--urls-per-page", str(URLS_PER_PAGE)]
    redis_url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if redis_url:  # under .ci/run: its render store lives in Redis
        command += ["--redis-url", redis_url]
    reused = database_path(data, PRODUCTS).exists()
    # Output to a file, not a pipe: a pipe nobody reads fills up and stalls the server.
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
    try:
        printed = wait_for_ready(process, log)
        first_clicks = _first_clicks(printed, url)
        wait_for_guard(url)  # what the demo lists once its guard has probed
        yield Demo(url, log, printed, server, first_clicks, reused)
    finally:
        process.terminate()
        process.wait(20)


def test_planted_pages_quarantined_are_logged_at_info() -> None:
    """The guard's WARNING for a page the demo planted is the demo working; a real site's
    quarantine stays a WARNING."""
    from sitemap_middleware._engine.guard import LOG_QUARANTINED
    from sitemap_middleware.demo.planted import PlantedWarnings

    def record(url: str) -> logging.LogRecord:
        args = ("pages", "left out", url, "said noindex")
        made = logging.LogRecord(
            "sitemap_middleware", logging.WARNING, "", 0, LOG_QUARANTINED, args, None
        )
        assert PlantedWarnings().filter(made)
        return made

    planted = record("http://127.0.0.1:8000/preview")
    assert (planted.levelname, planted.levelno) == ("INFO", logging.INFO)
    assert planted.getMessage().endswith("said noindex (planted by the demo, as intended)")
    real = record("http://127.0.0.1:8000/products/7")
    assert (real.levelname, real.getMessage()) == ("WARNING", LOG_QUARANTINED % real.args)


def test_demo_docs_have_their_own_lastmods(tmp_path: Path) -> None:
    """Written at once, the docs shared one mtime to the second (a lastmod's precision):
    `check` called it lastmod-identical."""

    def seconds() -> set[int]:
        return {int(os.stat(tmp_path / "docs" / name).st_mtime) for name in DOCS}

    prepare_data(tmp_path, products=3)
    times = seconds()
    assert len(times) == len(DOCS)
    prepare_data(tmp_path, products=3)  # a second start keeps them
    assert seconds() == times


@pytest.mark.parametrize("flavour", ["asgi", "wsgi"])
def test_check_app_finds_nothing_in_the_demo(
    flavour: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Issue 27 item 8: `check --app sitemap_middleware.demo.apps:asgi` (a fresh process)
    read the sitemaps before the demo's guard had probed, and reported the pages it plants
    for the guard (url-noindex, url-redirect, url-canonical-elsewhere) and an ETag moving
    mid-crawl. It lets the guard settle first: nothing to report."""
    data = tmp_path_factory.getbasetemp() / "demo-data"  # (the demo fixture's catalog)
    options = ["--products", str(PRODUCTS), "--urls-per-page", str(URLS_PER_PAGE)]
    options += ["--data-dir", str(data)]
    redis_url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if redis_url:
        options += ["--redis-url", redis_url]
    app = f"sitemap_middleware.demo.apps:{flavour}"
    done = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "check", "--app", app, "--json"],
        cwd=ROOT,
        env={**os.environ, DEMO_ARGS_ENV: " ".join(options)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(done.stdout)
    summary = report["summary"]
    assert done.returncode == 0 and summary["codes"] == {}, (summary, done.stderr[-3000:])
    assert summary["urls"] == summary["urls_checked"] > PRODUCTS
    assert "waiting for the guard: " in done.stderr, done.stderr[-3000:]


def _first_clicks(printed: list[str], url: str) -> list[tuple[str, int, float]]:
    """The first GET of each printed link, timed (recorded, never asserted on: the times
    depend on the machine). The second host name is reached through this one's address."""
    clicks = []
    with httpx.Client(timeout=60) as client:
        for link in printed:
            parts = urlsplit(link)
            started = time.perf_counter()
            response = client.get(url + parts.path, headers={"Host": parts.netloc})
            clicks.append((link, response.status_code, time.perf_counter() - started))
    return clicks


def test_every_printed_link_answers_once_the_demo_says_ready(demo: Demo, artifacts: Path) -> None:
    """Issue 29: the links are printed once the demo has answered each (its sitemaps
    planned), so the first click on each answers 200 at once; the times are kept as an
    artifact. The start-up says whether it built the catalog or reused it."""
    log = demo.log.read_text()
    assert demo.printed[:2] == [demo.url + "/sitemap.html", demo.url + "/"], log
    before = log.split(READY, 1)[0]  # what to open comes after the ready line only
    assert "Sitemaps for people" not in before and "Also open" not in before, before
    report = [f"{seconds:7.3f} s  {status}  {link}" for link, status, seconds in demo.first_clicks]
    name = f"demo-first-clicks-{demo.server}.txt"
    (artifacts / name).write_text("\n".join(report) + "\n")
    print("\n".join(report))
    assert [s for _, s, _ in demo.first_clicks] == [200] * len(demo.printed), report
    assert f"{PRODUCTS:,} products" in log
    said = "reusing the catalog" if demo.reused else "building a catalog"
    unsaid = "building a catalog" if demo.reused else "reusing the catalog"
    assert said in log and unsaid not in log, log[:500]


def _listed(urlset: etree._Element) -> Iterator[tuple[str, str]]:
    """(kind, URL) for every URL a `<urlset>` lists: pages, images, alternates, videos."""
    for url in urlset.iterchildren(f"{SM}url"):
        for element in url:
            if element.tag == f"{SM}loc":
                yield "loc", element.text or ""
            elif element.tag == f"{IMAGE}image":
                yield "image", element.findtext(f"{IMAGE}loc") or ""
            elif element.tag == f"{XHTML}link" and element.get("rel") == "alternate":
                yield "alternate", element.get("href") or ""
            elif element.tag == f"{VIDEO}video":
                for name in ("thumbnail_loc", "content_loc", "player_loc"):
                    found = element.findtext(f"{VIDEO}{name}")
                    if found is not None:
                        yield "video", found


def _pattern(url: str) -> str:
    """`/products/17.png` and `/products/9.png` share the pattern `/products/N.png`."""
    return re.sub(r"\d+", "N", urlsplit(url).path)


def _sample(urls: set[str]) -> list[str]:
    """Every URL of a small pattern; of a large one the first, the last and every 1,000th.

    Deterministic: sorted by the numbers in the URL, so the same URLs are fetched every run.
    """

    def key(url: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", urlsplit(url).path))

    chosen: list[str] = []
    by_pattern: dict[str, list[str]] = {}
    for url in urls:
        by_pattern.setdefault(_pattern(url), []).append(url)
    for group in by_pattern.values():
        group.sort(key=key)
        if len(group) <= FULL_PATTERN:
            chosen += group
        else:
            chosen += group[::SAMPLE_STEP] + [group[-1]]
    return chosen


def _assert_png(body: bytes) -> None:
    """A well-formed PNG: signature, then chunks whose CRCs match, IHDR first, IEND last."""
    assert body[:8] == b"\x89PNG\r\n\x1a\n", body[:16]
    position, kinds = 8, []
    while position < len(body):
        (length,) = struct.unpack(">I", body[position : position + 4])
        kind = body[position + 4 : position + 8]
        data = body[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", body[position + 8 + length : position + 12 + length])
        assert zlib.crc32(kind + data) == crc, kind
        kinds.append(kind)
        position += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds, kinds
    idat = b"".join(  # the pixels decompress
        body[i + 8 : i + 8 + struct.unpack(">I", body[i : i + 4])[0]]
        for i in [m.start() - 4 for m in re.finditer(b"IDAT", body)]
    )
    assert zlib.decompress(idat)


def _metric(metrics: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` carrying ``labels``, from a /metrics text."""
    from prometheus_client.parser import text_string_to_metric_families

    return sum(
        sample.value
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )


@pytest.mark.slow
def test_demo_serves_valid_sitemaps_of_urls_it_serves(demo: Demo) -> None:
    """Crawl robots.txt -> sitemaps -> every listed URL: all 200, none listed twice.

    Every document of the index validates against the official XSDs and parses as a crawler
    parses it (ultimate-sitemap-parser). Listed means every `<loc>`, `<image:loc>`,
    `<xhtml:link href>` and video URL of every page of the index. Every URL pattern is
    fetched; patterns with more than 200 URLs (the products, their images and their
    German alternates) are sampled deterministically, everything else is fetched in full.
    Every URL the demo printed on start and every link of every HTML page fetched answers
    200 as well, and what is not listed is a 404 (the demo is no catch-all).
    """
    url = demo.url
    with httpx.Client(timeout=60) as client:

        def ok(target: str) -> httpx.Response:
            response = client.get(target)
            assert response.status_code == 200, (target, response.status_code, response.text[:200])
            return response

        home = ok(url + "/")
        assert "Demo shop" in home.text
        served = "sitemap_documents_served_total"
        pages_before = _metric(ok(url + "/metrics").text, served, kind="page", status="200")
        robots = ok(url + "/robots.txt").text
        assert "User-agent: GPTBot" in robots
        queue = re.findall(r"^Sitemap: (\S+)$", robots, re.M)
        # Every entry point: ours, and the mounted blog's own (also listed in the index).
        assert queue == [f"{url}/sitemap.xml", f"{url}/blog/sitemap.xml"]
        documents: list[str] = []
        listed: dict[str, set[str]] = {
            kind: set() for kind in ("loc", "image", "alternate", "video")
        }
        locs: Counter[str] = Counter()
        while queue:
            document = queue.pop(0)
            if document in documents:  # robots.txt and the index both name the blog's
                continue
            documents.append(document)
            body = ok(document).content
            assert len(body) <= 10_485_760  # the default page budget (#11)
            check_document(body)
            root = etree.fromstring(body)
            if root.tag == f"{SM}sitemapindex":
                queue += [loc.text or "" for loc in root.iter(f"{SM}loc")]
                continue
            for kind, found in _listed(root):
                listed[kind].add(found)
                if kind == "loc":
                    locs[found] += 1
        # Three languages: en, de and fr versions of every product.
        # Pages are key ranges of products (every language of a product on one page),
        # with the headroom key-range pages keep for rows inserted during a crawl.
        product_pages = -(-3 * PRODUCTS // URLS_PER_PAGE)
        products = [d for d in documents if "products" in d]
        assert len(products) >= product_pages and all("~" in d for d in products)
        assert [re.sub(r"~[^.]+", "", d) for d in products] == [
            f"{url}/sitemap-products-{n}.xml" for n in range(1, len(products) + 1)
        ]
        twice = sorted(loc for loc, n in locs.items() if n > 1)
        assert not twice, f"listed more than once: {twice[:10]}"
        assert len([u for u in locs if "/products/" in u]) == 3 * PRODUCTS
        assert {f"{url}/{lang}products/7" for lang in ("", "de/", "fr/")} <= set(locs)
        assert {f"{url}/blog/", f"{url}/blog/posts/3"} <= set(locs)  # the mounted blog
        assert f"{url}/products/{PRODUCTS}" in locs and f"{url}/docs/guide/" in locs
        assert listed["image"] and listed["alternate"] and listed["video"]
        # Four stories, 1, 5, 30 and 70 hours old: the news window lists the first three.
        assert sorted(u for u in locs if "/news/" in u) == [f"{url}/news/{n}" for n in (1, 2, 3)]
        assert client.get(url + "/news/4").status_code == 200  # served, just not news any more

        everything = set().union(*listed.values())
        assert all(u.startswith(url + "/") for u in everything), "listed off the demo's origin"
        patterns = {_pattern(u) for u in everything}
        links: set[str] = set()
        for target in _sample(everything):
            response = ok(target)
            kind = response.headers["content-type"]
            if kind.startswith("text/html"):
                links.update(
                    urljoin(target, h) for h in re.findall(r'(?:href|src)="([^"]+)"', response.text)
                )
            elif kind.startswith("image/png"):
                _assert_png(response.content)
        # Sampled or not, every kind of URL was fetched.
        assert patterns == {_pattern(u) for u in _sample(everything)}
        assert {"/products/N", "/de/products/N", "/fr/products/N", "/static/products/N.png"} <= (
            patterns
        ), patterns

        assert demo.printed and demo.printed[1] == url + "/", demo.log.read_text()
        # The second host name: same server, its own sections and robots rules.
        other = url.replace("127.0.0.1", "localhost")
        assert f"{other}/sitemap.xml" in demo.printed
        second = {"Host": other.removeprefix("http://")}
        urlset = client.get(url + "/sitemap.xml", headers=second)
        assert urlset.status_code == 200
        assert sorted(re.findall(r"<loc>([^<]+)</loc>", urlset.text)) == [
            f"{other}/",
            f"{other}/about",
        ]
        other_robots = client.get(url + "/robots.txt", headers=second).text
        assert "Disallow: /checkout/" in other_robots and f"Sitemap: {other}/sitemap.xml" in (
            other_robots
        )
        for target in sorted((set(demo.printed) - {f"{other}/sitemap.xml"}) | links):
            assert target.startswith(url + "/"), f"the demo links off-site: {target}"
            ok(target)
        assert f"{url}/about" in ok(url + "/sitemap-pages-1.txt").text.splitlines()
        # The metrics move as documents are served (the crawl read every page above).
        pages_after = _metric(ok(url + "/metrics").text, served, kind="page", status="200")
        assert pages_after >= pages_before + product_pages
        assert (
            ok(url + "/sitemap.xsl")
            .headers["content-type"]
            .startswith(("text/xsl", "application/xslt"))
        )
        news = ok(url + "/sitemap-news-1.xml")  # unversioned: ETag from its bytes
        again = client.get(
            url + "/sitemap-news-1.xml", headers={"If-None-Match": news.headers["etag"]}
        )
        assert again.status_code == 304

        # Not a catch-all: what is not listed is not served.
        for missing in (
            f"/products/{PRODUCTS + 1}",
            "/de/products/0",
            f"/static/products/{PRODUCTS + 1}.png",
            "/static/videos/other.png",
            "/videos/other",
            "/news/999",
            "/landing/nowhere",
            "/contact",
            "/docs/missing.html",
        ):
            assert client.get(url + missing).status_code == 404, missing


@pytest.mark.slow
def test_demo_lists_only_indexable_pages_and_explains_what_it_leaves_out(demo: Demo) -> None:
    """The demo's providers also list pages no sitemap should (`demo/planted.py`): a noindex
    page, a redirect, a page canonical elsewhere, a path its robots.txt disallows for `*`
    and `/about` named by two sections. Once the guard has probed (the fixture waits),
    every URL the index lists answers 200, says no noindex, is canonical to itself, is
    allowed by the demo's robots.txt and is listed once (the products sampled as above);
    none of the planted pages is listed, though each is served as planted; the HTML view
    names the guard's quarantine; the command the demo prints to ask why runs, and
    `explain` names each reason; `check` finds nothing; the guard's quarantines of the
    planted pages are logged at INFO, saying they were planted (no WARNING of the library)."""
    url = demo.url
    log = demo.log.read_text()
    with httpx.Client(timeout=60) as client:
        robots = RobotFileParser()
        robots.parse(client.get(url + "/robots.txt").text.splitlines())
        queue, locs = [url + "/sitemap.xml", url + "/blog/sitemap.xml"], Counter[str]()
        while queue:
            root = etree.fromstring(client.get(queue.pop(0)).content)
            found = [loc.text or "" for loc in root.iter(f"{SM}loc")]
            if root.tag == f"{SM}sitemapindex":
                queue += [f for f in found if f != url + "/blog/sitemap.xml"]
            else:
                locs.update(found)
        assert locs and max(locs.values()) == 1, [u for u, n in locs.items() if n > 1]
        for target in _sample(set(locs)):
            assert robots.can_fetch("*", target) and robots.can_fetch("Googlebot", target)
            assert not indexable_problems(target, client.get(target)), target

        planted = {p.kind: url + p.path for p in PLANTED}
        assert planted["duplicate"] in locs and url + DEALS in locs
        assert not {u for k, u in planted.items() if k != "duplicate"} & set(locs)
        # ... though each is served as planted, and named by a provider.
        assert client.get(planted["noindex"]).headers["x-robots-tag"] == "noindex"
        assert client.get(planted["redirect"]).headers["location"] == "/about"
        assert "canonical elsewhere: /about" in indexable_problems(
            planted["canonical"], client.get(planted["canonical"])
        )
        assert client.get(planted["robots"]).status_code == 200
        assert not robots.can_fetch("*", planted["robots"])
        assert "left out 1 of its 3 items on purpose (duplicate: 1)" in log  # landing.txt
        view = client.get(url + "/sitemap.html").text
        assert all(url + path in view for path in GUARDED), "the HTML view lists them"
        # The ledger's case: the provider's lastmod never moves; the written one is when
        # the deal on show was first seen (the provider's own while no deal changed).
        page = client.get(url + DEALS).text
        assert any(offer in page for offer in OFFERS)
        (written,) = re.findall(
            r"<lastmod>([^<]+)</lastmod>", client.get(url + "/sitemap-deals-1.xml").text
        )
        first = datetime.fromisoformat(DEALS_LASTMOD)
        assert written == DEALS_LASTMOD or datetime.fromisoformat(written) > first

    # The command the demo printed to ask why, run as printed.
    command = log.split("Ask why:\n", 1)[1].splitlines()[0].strip()
    flavour = "asgi" if demo.server == "uvicorn" else "wsgi"
    assert f"demo.apps:{flavour} /preview" in command
    explained = subprocess.run(
        ["bash", "-c", command + " --json"], cwd=ROOT, capture_output=True, text=True
    )
    assert explained.returncode == 1, explained.stderr  # not all of them are listed
    why = {answer["url"]: answer for answer in json.loads(explained.stdout)}
    reasons = {
        "/preview": "left out by the guard: said noindex (X-Robots-Tag)",
        "/old-about": "left out by the guard: redirected (301) to /about",
        "/about/print": f"left out by the guard: declared canonical {url}/about",
        "/admin/": "robots.txt rule 'Disallow: /admin/' for user-agent '*'",
        "/about": "section 'landing': a duplicate, listed first in section 'pages', page 1",
    }
    for path, reason in reasons.items():
        assert any(reason in said for said in why[path]["left_out"]), (path, why[path])
    assert [a["section"] for a in why["/about"]["listed"]] == ["pages"]
    assert all(not why[path]["listed"] for path in reasons if path != "/about")

    check = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "check", "--rate", "0", "--json", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    summary = json.loads(check.stdout)["summary"]
    assert check.returncode == 0 and summary["errors"] == 0, check.stdout[-2000:]
    assert summary["codes"] == {}, summary
    assert "(planted by the demo, as intended)" in log
    assert not re.search(r"^(WARNING|ERROR) sitemap_middleware", demo.log.read_text(), re.M)
