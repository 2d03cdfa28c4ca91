"""The demo site: SQLite with 120,000 products, every feature of the package switched on.

``python -m sitemap_middleware demo [--server uvicorn|werkzeug] [--host] [--port]``
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ._caches.redis import RedisRenderCache
from ._config import Section, SitemapConfig
from ._engine.observe import DocumentObserver
from ._providers.files import DirectoryProvider, TextFileProvider
from ._sansio.extensions import Alternate, Image, NewsArticle, Video, news_cutoff
from ._sansio.models import SitemapEntry
from ._settings import RenderFallback, Robots, RobotsGroup

PRODUCTS = 120_000
#: The demo's IndexNow key: served at /<key>.txt for search engines to verify pushes.
INDEXNOW_KEY = "demo-indexnow-key-0001"
DATA_DIR = Path(tempfile.gettempdir()) / "sitemap_middleware_demo"
NOW = datetime.now(timezone.utc).replace(microsecond=0)


def prepare_data(directory: Path = DATA_DIR) -> Path:
    """Create the SQLite database, a docs tree and a URL list (once; reused after)."""
    directory.mkdir(parents=True, exist_ok=True)
    database = directory / "demo.sqlite3"
    if not database.exists():
        partial = directory / "demo.sqlite3.partial"
        partial.unlink(missing_ok=True)
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
                    for i in range(1, PRODUCTS + 1)
                ),
            )
            conn.execute("CREATE INDEX products_updated ON products (updated_at)")
        partial.rename(database)
    docs = directory / "docs"
    for name, title in [("index.html", "Docs"), ("guide/index.html", "Guide"), ("faq.html", "FAQ")]:
        path = docs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(f"<!doctype html><title>{title}</title><h1>{title}</h1>\n")
    links = directory / "links.txt"
    if not links.exists():
        links.write_text("# extra URLs, one a line\n/about\n/contact\n")
    return database


def product_entry(row: Any) -> SitemapEntry:
    return SitemapEntry(
        f"/products/{row.id}",
        lastmod=row.updated_at,
        changefreq="weekly",
        priority=0.6,
        images=[Image(f"/static/products/{row.id}.jpg")],
        alternates=[
            Alternate("de", f"/de/products/{row.id}"),
            Alternate("x-default", f"/products/{row.id}"),
        ],
    )


def news_entries() -> list[SitemapEntry]:
    """Articles of the last two days (Google News ignores older ones)."""
    cutoff = news_cutoff(NOW)
    articles = [NOW - timedelta(hours=h) for h in (1, 5, 30, 70)]
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
        for n, published in enumerate(articles, 1)
        if published >= cutoff
    ]


VIDEOS = [
    SitemapEntry(
        "/videos/unboxing",
        videos=[
            Video(
                thumbnail_loc="/static/videos/unboxing.jpg",
                title="Unboxing product 1",
                description="What is in the box & why it matters",
                content_loc="/static/videos/unboxing.mp4",
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
    directory: Path = DATA_DIR,
    redis_url: str | None = None,
    observers: Sequence[DocumentObserver] = (),
) -> SitemapConfig:
    # The news callable reports no version: its pages get ETags from rendered bytes,
    # kept in process, or in Redis (shared by every instance) with --redis-url.
    render_cache = (
        RedisRenderCache(redis_url, prefix="sitemap_middleware_demo:") if redis_url else None
    )
    return SitemapConfig(
        base_url=base_url,
        sections={
            "pages": pages,
            "products": products,
            "docs": DirectoryProvider(directory / "docs", url_prefix="/docs/"),
            "links": TextFileProvider(directory / "links.txt"),
            "videos": VIDEOS,
            "news": Section(news_entries, max_urls=1000),
        },
        robots=Robots(
            groups=[
                RobotsGroup(user_agents=("*",), disallow=("/admin/",)),
                RobotsGroup(user_agents=("GPTBot",), disallow=("/",)),
            ]
        ),
        stylesheet=True,
        text_sitemaps=True,
        render_fallback=RenderFallback(cache=render_cache),
        observers=observers,
        indexnow_key=INDEXNOW_KEY,
    )


PAGE = """<!doctype html><meta charset="utf-8"><title>{title}</title>
<h1>{title}</h1><p>{body}</p>
<ul>
<li><a href="/robots.txt">/robots.txt</a></li>
<li><a href="/sitemap.xml">/sitemap.xml</a> (an index: 120,000 products do not fit one file)</li>
<li><a href="/sitemap_index.xml">/sitemap_index.xml</a></li>
<li><a href="/sitemap-products-3.xml">/sitemap-products-3.xml</a> (keyset page from SQLite)</li>
<li><a href="/sitemap-products-1.xml.gz">/sitemap-products-1.xml.gz</a> (always gzip)</li>
<li><a href="/sitemap-news-1.xml">/sitemap-news-1.xml</a> (Google News)</li>
<li><a href="/sitemap-videos-1.xml">/sitemap-videos-1.xml</a> (video extension)</li>
<li><a href="/sitemap-pages-1.txt">/sitemap-pages-1.txt</a> (text sitemap)</li>
<li><a href="/metrics">/metrics</a> (Prometheus metrics of the documents served)</li>
</ul>"""


def render_page(title: str, body: str = "A page of the demo shop.") -> str:
    return PAGE.format(title=title, body=body)


def asgi_app(base_url: str, database: Path, redis_url: str | None = None) -> Any:
    from sqlalchemy import MetaData, Table
    from sqlalchemy.ext.asyncio import create_async_engine
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from ._adapters.asgi import ASGISitemapMiddleware
    from ._ops.metrics import PrometheusObserver
    from ._providers.routes import StarletteRoutesProvider
    from ._providers.sql import SQLAlchemyProvider

    engine = create_async_engine(f"sqlite+aiosqlite:///{database}")
    table = Table("products", MetaData(), autoload_with=_sync_engine(database))

    async def home(request: Request) -> HTMLResponse:
        return HTMLResponse(render_page("Demo shop (ASGI, Starlette + uvicorn)"))

    async def about(request: Request) -> HTMLResponse:
        return HTMLResponse(render_page("About"))

    async def product(request: Request) -> HTMLResponse:
        return HTMLResponse(render_page(f"Product {request.path_params['id']}"))

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/about", about),
            Route("/products/{id:int}", product),
            Mount("/docs", StaticFiles(directory=database.parent / "docs", html=True)),
        ]
    )
    registry, exposition = _metrics()

    async def metrics(request: Request) -> Response:
        data, media_type = exposition()
        return Response(data, media_type=media_type)

    app.router.routes.append(Route("/metrics", metrics))
    products = SQLAlchemyProvider(
        engine, table, key="id", lastmod="updated_at", to_entry=product_entry
    )
    pages = StarletteRoutesProvider(app, exclude=("/metrics",))
    config = make_config(
        base_url, products, pages, database.parent, redis_url, [PrometheusObserver(registry)]
    )
    app.add_middleware(ASGISitemapMiddleware, config=config)
    return app


def _metrics() -> tuple[Any, Callable[[], tuple[bytes, str]]]:
    """The demo's own metrics registry and a function rendering it for /metrics."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    registry = CollectorRegistry()
    return registry, lambda: (generate_latest(registry), CONTENT_TYPE_LATEST)


def _sync_engine(database: Path) -> Any:
    from sqlalchemy import create_engine

    return create_engine(f"sqlite:///{database}")


def wsgi_app(base_url: str, database: Path, redis_url: str | None = None) -> Any:
    from flask import Flask, send_from_directory
    from sqlalchemy import MetaData, Table

    from ._adapters.wsgi import WSGISitemapMiddleware
    from ._ops.metrics import PrometheusObserver
    from ._providers.routes import FlaskRoutesProvider
    from ._providers.sql import SQLAlchemyProvider

    engine = _sync_engine(database)  # a sync engine: the provider runs it in a thread
    table = Table("products", MetaData(), autoload_with=engine)
    app = Flask("sitemap_middleware_demo")

    @app.get("/")
    def home() -> str:
        return render_page("Demo shop (WSGI, Flask + werkzeug)")

    @app.get("/about")
    def about() -> str:
        return render_page("About")

    @app.get("/products/<int:product_id>")
    def product(product_id: int) -> str:
        return render_page(f"Product {product_id}")

    @app.get("/docs/")
    @app.get("/docs/<path:name>")
    def docs(name: str = "index.html") -> Any:
        if name.endswith("/") or not name:
            name += "index.html"
        return send_from_directory(database.parent / "docs", name)

    products = SQLAlchemyProvider(
        engine, table, key="id", lastmod="updated_at", to_entry=product_entry
    )
    pages = FlaskRoutesProvider(app, exclude=("/docs/*", "/metrics"))
    registry, exposition = _metrics()

    @app.get("/metrics")
    def metrics() -> Any:
        data, media_type = exposition()
        return app.response_class(data, mimetype=media_type)

    config = make_config(
        base_url, products, pages, database.parent, redis_url, [PrometheusObserver(registry)]
    )
    app.wsgi_app = WSGISitemapMiddleware(app.wsgi_app, config=config)  # type: ignore[method-assign]
    return app


def run(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m sitemap_middleware demo", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--server", choices=("uvicorn", "werkzeug"), default="uvicorn")
    parser.add_argument("--base-url", help="public URL (default: the address it listens on)")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument(
        "--redis-url",
        help="share rendered pages in Redis (needs the redis extra), e.g. redis://127.0.0.1:6379/0",
    )
    args = parser.parse_args(argv)
    # One INFO record per document served (logger "sitemap_middleware").
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    base_url = args.base_url or f"http://{args.host}:{args.port}"
    print(f"preparing {PRODUCTS:,} products in {args.data_dir} ...", flush=True)
    database = prepare_data(args.data_dir)
    print(f"\nDemo site on {base_url}/ ({args.server}). Open:")
    for path in (
        "/",
        "/robots.txt",
        "/sitemap.xml",
        "/sitemap-products-2.xml",
        "/sitemap-news-1.xml",
        "/sitemap.txt",
        "/metrics",
        f"/{INDEXNOW_KEY}.txt",
    ):
        print(f"  {base_url}{path}")
    print(flush=True)
    if args.server == "uvicorn":
        import uvicorn

        app = asgi_app(base_url, database, args.redis_url)
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    else:
        from werkzeug.serving import run_simple

        run_simple(
            args.host, args.port, wsgi_app(base_url, database, args.redis_url), threaded=True
        )
