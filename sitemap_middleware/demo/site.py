"""The demo site's data and configuration: SQLite with 120,000 products, every feature
of the package switched on, and the demo's options (``demo_parser``).

Every URL its sitemaps list (pages, images, hreflang alternates, video thumbnails and
players) is served by the demo itself, answers 200, is indexable, canonical to itself,
allowed by its robots.txt and listed once. Its providers also list pages that must not be
(``planted.py``): the configuration keeps them out (robots groups, the guard, dedupe).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._caches.redis_store import RedisRenderStore
from .._config import Section, SitemapConfig, Tenants
from .._engine.observe import DocumentObserver
from .._guard_settings import Guard
from .._ledger_settings import Ledger
from .._providers.files import DirectoryProvider, TextFileProvider
from .._providers.i18n import Languages
from .._sansio.extensions import Image, NewsArticle, Video
from .._sansio.limits import MAX_NEWS_PER_FILE, MAX_URLS
from .._sansio.models import SitemapEntry
from .._settings import Renders, Robots, RobotsGroup
from .planted import deals_entries

#: Enough products for an index of three pages of 50,000.
PRODUCTS = 120_000
NOW = datetime.now(timezone.utc).replace(microsecond=0)
#: News articles, published this many hours before the demo started. Every one has a page;
#: the news sitemap lists those of the last two days only (Google News ignores older ones).
NEWS_AGES = (1, 5, 30, 70)
#: The one video: its page, its player page and its thumbnail are all served.
VIDEO = "unboxing"
DOCS = {"index.html": "Docs", "guide/index.html": "Guide", "faq.html": "FAQ"}
#: When each doc was last edited (its mtime, so its lastmod): written at once, they would
#: all share one, which `check` rightly calls lastmod-identical.
DOCS_EDITED = {
    "index.html": "2024-03-04",
    "guide/index.html": "2024-04-18",
    "faq.html": "2024-05-27",
}
#: Landing pages kept in a text file: routes with a parameter, so the routes provider
#: (which lists parameterless routes only) does not list them a second time; except
#: /about, a page the pages section lists first (dedupe=True serves that listing only).
LANDING = (
    "# campaign landing pages, one URL a line\n/landing/spring-sale\n/landing/newsletter\n"
    "# also a page of the pages section: listed there, not twice (dedupe=True)\n/about\n"
)


def default_data_dir() -> Path:
    """Per user: ``$XDG_CACHE_HOME/sitemap-middleware/demo``, else ``~/.cache/...``.

    The XDG base directory spec says a relative ``$XDG_CACHE_HOME`` is to be ignored.
    """
    cache = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(cache) if os.path.isabs(cache) else Path.home() / ".cache"
    return root / "sitemap-middleware" / "demo"


def database_path(directory: Path, products: int) -> Path:
    return directory / f"products-{products}.sqlite3"


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def prepare_data(directory: Path, products: int = PRODUCTS) -> Path:
    """Create the SQLite database, a docs tree and the landing-page list; reuse them after.

    The database is built under a unique temporary name and renamed into place, so two
    demos starting at once never see (or delete) each other's half-written file.
    """
    directory.mkdir(parents=True, exist_ok=True)
    database = database_path(directory, products)
    if not database.exists():
        handle, name = tempfile.mkstemp(dir=directory, prefix=database.name, suffix=".partial")
        os.close(handle)
        partial = Path(name)
        try:
            with sqlite3.connect(partial) as conn:
                conn.execute(
                    "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                    " updated_at TIMESTAMP NOT NULL)"
                )
                start = datetime(2024, 1, 1)
                conn.executemany(
                    "INSERT INTO products VALUES (?, ?, ?)",
                    (
                        (i, f"Product {i}", (start + timedelta(minutes=7 * i)).isoformat(" "))
                        for i in range(1, products + 1)
                    ),
                )
                conn.execute("CREATE INDEX products_updated ON products (updated_at)")
            conn.close()
            os.replace(partial, database)
        finally:
            partial.unlink(missing_ok=True)
    for name, title in DOCS.items():
        doc = directory / "docs" / name
        _write_if_changed(
            doc,
            f"<!doctype html><title>{title}</title><h1>{title}</h1>\n"
            '<p><a href="/">Back to the demo shop</a></p>\n',
        )
        edited = datetime.fromisoformat(DOCS_EDITED[name]).replace(tzinfo=timezone.utc)
        os.utime(doc, (edited.timestamp(), edited.timestamp()))
    _write_if_changed(directory / "landing.txt", LANDING)
    return database


def landing_pages(directory: Path) -> set[str]:
    """The paths the landing-page file lists (the app serves exactly these)."""
    lines = (directory / "landing.txt").read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def product_entry(row: Any) -> SitemapEntry:
    """One product, language-neutral: the section's Languages lists it in en, de and fr."""
    return SitemapEntry(
        f"/products/{row.id}",
        lastmod=row.updated_at,
        changefreq="weekly",
        priority=0.6,
        images=[Image(f"/static/products/{row.id}.png")],
    )


def product_path(path: str, lang: str) -> str:
    """English at /products/N (also x-default); other languages under /<lang>/."""
    return path if lang == "en" else f"/{lang}{path}"


#: The demo's IndexNow key: served at /<key>.txt for search engines to verify pushes.
INDEXNOW_KEY = "demo-indexnow-key-0001"
#: Products in three languages, each listing all three plus x-default.
PRODUCT_LANGUAGES = Languages(codes=("en", "de", "fr"), url=product_path, x_default="en")
#: The blog: a sub-application mounted at /blog with sitemaps of its own.
BLOG_POSTS = 3
#: The second host name's own pages (served by the same app) and its robots rules.
SECOND_SITE_PAGES = ("/", "/about")


def news_entries() -> list[SitemapEntry]:
    """Every article; the news section (``news=True``) lists those of the last two days."""
    return [
        SitemapEntry(
            f"/news/{n}",
            lastmod=published,
            news=NewsArticle(
                publication_name="Demo Times",
                language="en",
                publication_date=published,
                title=f"Story {n}",
            ),
        )
        for n, published in enumerate((NOW - timedelta(hours=h) for h in NEWS_AGES), 1)
    ]


VIDEOS = [
    SitemapEntry(
        f"/videos/{VIDEO}",
        videos=[
            Video(
                thumbnail_loc=f"/static/videos/{VIDEO}.png",
                title="Unboxing product 1",
                description="What is in the box & why it matters",
                player_loc=f"/videos/{VIDEO}/player",
                duration=185,
                publication_date="2024-06-01",
                family_friendly=True,
                tags=["unboxing", "demo"],
            )
        ],
    )
]


def make_config(
    base_url: str,
    products: Any,
    pages: Any,
    directory: Path,
    redis_url: str | None = None,
    urls_per_page: int = MAX_URLS,
    observers: Sequence[DocumentObserver] = (),
) -> SitemapConfig:
    # Renders are kept in process, or in Redis (shared by every instance) with --redis-url.
    store = RedisRenderStore(redis_url, prefix="sitemap_middleware_demo:") if redis_url else None
    return SitemapConfig(
        base_url=base_url,
        sections={
            "pages": pages,
            # No other section lists a product: kept out of dedupe, its plan (a pass over
            # 360,000 URLs) is kept in plan_directory, so the next start reads it.
            "products": Section(products, languages=PRODUCT_LANGUAGES, dedupe=False),
            "docs": DirectoryProvider(directory / "docs", url_prefix="/docs/"),
            "landing": TextFileProvider(directory / "landing.txt"),
            "videos": VIDEOS,
            # Google News: at most 1,000 URLs a file, articles of the last two days.
            "news": Section(
                news_entries, max_urls=min(MAX_NEWS_PER_FILE, urls_per_page), news=True
            ),
            # /deals/today: the deal on show changes, its provider lastmod never.
            "deals": deals_entries,
        },
        # What keeps the planted pages out (planted.PLANTED): /admin/ (listed by the
        # routes provider) is disallowed for *, so it is never listed; ...
        robots=Robots(
            groups=[
                RobotsGroup(user_agents=("*",), disallow=("/admin/",)),
                RobotsGroup(user_agents=("GPTBot",), disallow=("/",)),
            ]
        ),
        stylesheet=True,  # kept for browsers that still run XSLT; it links to the HTML view
        html=True,  # /sitemap.html and /sitemap-<section>-<n>.html: for people, no XSLT
        text_sitemaps=True,
        max_urls_per_page=urls_per_page,
        # The mounted blog serves its own sitemaps: listed in the index and robots.txt.
        external_sitemaps=["/blog/sitemap.xml"],
        observers=observers,
        indexnow_key=INDEXNOW_KEY,
        # ... /preview (noindex), /old-about (a redirect) and /about/print (canonical
        # elsewhere) are probed in the background, through the app, and left out: within
        # a second of start-up (their sections are planned first; products follow, at
        # 1,000 probes a minute, light beside the shop's own traffic).
        guard=Guard(action="exclude", max_probes_per_minute=1_000),
        # ... and /about, also in landing.txt, is listed once: where the pages section lists it.
        dedupe=True,
        # The news callable reports no version: its pages get ETags from their rendered
        # bytes (etag="content"). Plans made once the ASGI app has started: the guard
        # probes without waiting for a first request (under WSGI: from the first sitemap
        # request, which serve.py makes).
        # Plans are kept in files beside the catalog (a restart does not plan again).
        renders=Renders(
            etag="content", store=store, warm_up=True, plan_directory=directory / "plans"
        ),
        # /deals/today's lastmod from the deal it shows (its provider's lastmod is fixed):
        # the time that deal was first seen, kept in the render store.
        ledger=Ledger(source="digest", sections=["deals"]),
    )


def blog_config(base_url: str) -> SitemapConfig:
    """The blog's sitemaps: its paths are relative to its mount (/blog), not repeated here."""
    posts = [f"/posts/{n}" for n in range(1, BLOG_POSTS + 1)]
    return SitemapConfig(
        base_url=base_url, sections={"posts": ["/", *posts]}, robots=None, html=True
    )


def second_host(base_url: str) -> str:
    """The other name of the address the demo listens on (localhost <-> 127.0.0.1)."""
    host = urlsplit(base_url).hostname or ""
    return "127.0.0.1" if host == "localhost" else "localhost"


def sites(base_url: str, shop: SitemapConfig) -> Tenants:
    """Two host names, one app: the shop, and a second site with its own pages and rules."""
    parts = urlsplit(base_url)
    port = f":{parts.port}" if parts.port else ""
    other = f"{second_host(base_url)}{port}"
    second = SitemapConfig(
        base_url=f"{parts.scheme}://{other}",
        sections={"pages": list(SECOND_SITE_PAGES)},
        robots=Robots(groups=[RobotsGroup(user_agents=("*",), disallow=("/checkout/",))]),
        html=True,
    )
    return Tenants(sites={parts.netloc.lower(): shop, other: second})


def sitemap_links() -> list[tuple[str, str]]:
    """The sitemap documents worth a look, each with a note; only ones that always exist.

    No products page past the first is named: how many there are depends on the page
    budget in bytes as much as on the catalog (the index lists them all).
    """
    return [
        ("/sitemap.html", "the sitemaps for people: an HTML view, no XSLT needed"),
        ("/robots.txt", "Sitemap: line and user-agent groups"),
        ("/sitemap.xml", "the entry point: an index once the site outgrows one file"),
        ("/sitemap_index.xml", "the index under its own name"),
        (
            "/sitemap-products-1.xml",
            "the first products page, from SQLite: each product in en, de and fr with"
            " hreflang alternates (the index lists every page)",
        ),
        ("/sitemap-products-1.xml.gz", "a gzip file, whatever the client accepts"),
        ("/sitemap-news-1.xml", "Google News"),
        ("/sitemap-videos-1.xml", "the video extension"),
        ("/sitemap-pages-1.txt", "a text sitemap, one URL a line"),
    ]


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def page_size(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_URLS:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_URLS:,}, got {value}")
    return value


def demo_parser() -> argparse.ArgumentParser:
    """The demo's options (``serve.run``; ``apps:asgi`` reads them from the environment)."""
    parser = argparse.ArgumentParser(
        prog="python -m sitemap_middleware demo",
        description="The demo shop: every feature of sitemap_middleware on one site, whose"
        " sitemaps list only URLs it serves.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--server", choices=("uvicorn", "werkzeug"), default="uvicorn")
    parser.add_argument("--base-url", help="public URL (default: the address it listens on)")
    parser.add_argument(
        "--products", type=positive, default=PRODUCTS, help=f"catalog size (default {PRODUCTS:,})"
    )
    parser.add_argument(
        "--urls-per-page",
        type=page_size,
        default=MAX_URLS,
        help=f"URLs per sitemap page (default and protocol maximum {MAX_URLS:,}): a small"
        " catalog with small pages shows the index and paging in a second",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default_data_dir(),
        help="where the SQLite database and files live (default: %(default)s)",
    )
    parser.add_argument(
        "--redis-url",
        help="share rendered pages in Redis (needs the redis extra), e.g. redis://127.0.0.1:6379/0",
    )
    return parser


def metrics_registry() -> tuple[Any, Callable[[], tuple[bytes, str]]]:
    """The demo's own metrics registry and a function rendering it for /metrics."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    registry = CollectorRegistry()
    return registry, lambda: (generate_latest(registry), CONTENT_TYPE_LATEST)
