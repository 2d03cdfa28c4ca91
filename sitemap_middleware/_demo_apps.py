"""The demo's two flavours of one shop: Starlette under uvicorn, Flask under werkzeug.

Both serve every URL the demo's sitemaps list: the pages, the German alternates, a small
PNG per product (generated in memory), the news, video and landing pages, the docs tree,
and the pages planted for the sitemaps to leave out (``_demo_planted``). Anything else is
a 404, products outside the catalog included. ``_demo_apps:asgi`` and ``:wsgi`` are the
demo as a ``module:app`` (for ``explain``).
"""

from __future__ import annotations

import html
import os
import shlex
import sqlite3
import struct
import zlib
from pathlib import Path
from typing import Any

from ._demo import (
    BLOG_POSTS,
    NEWS_AGES,
    VIDEO,
    blog_config,
    demo_parser,
    landing_pages,
    make_config,
    metrics_registry,
    prepare_data,
    product_entry,
    sitemap_links,
    sites,
)
from ._demo_planted import DEALS, DEMO_ARGS_ENV, PLANTED_ROUTES, planted_answer, planted_title
from ._sansio.limits import MAX_URLS

PAGE = """<!doctype html><html lang="{lang}"><meta charset="utf-8"><title>{title}</title>{head}
<h1>{title}</h1>
<p>{body}</p>
<h2>Sitemaps</h2>
<ul>
{sitemaps}
</ul>
<h2>The shop</h2>
<ul>
<li><a href="/">Home</a></li>
<li><a href="/about">About</a></li>
<li><a href="/products/1">Product 1</a>
(<a href="/de/products/1">Deutsch</a>, <a href="/fr/products/1">Français</a>)</li>
<li><a href="/blog/">The blog</a> (a mounted sub-application with its own sitemaps)</li>
<li><a href="/videos/{video}">A video page</a></li>
<li><a href="/news/1">The latest news</a></li>
<li><a href="/metrics">Metrics</a> (Prometheus, of the documents served)</li>
<li><a href="/docs/">Docs</a> (static files, listed by a directory provider)</li>
</ul>
</html>
"""
PRODUCT_TITLES = {"en": "Product", "de": "Produkt", "fr": "Produit"}
#: Cached for a day, like any static image.
IMAGE_HEADERS = {"Cache-Control": "public, max-age=86400"}


def catalog_size(database: Path) -> int:
    with sqlite3.connect(database) as conn:
        (size,) = conn.execute("SELECT count(*) FROM products").fetchone()
    conn.close()
    return int(size)


def render_page(
    title: str, body: str = "A page of the demo shop.", lang: str = "en", head: str = ""
) -> str:
    sitemaps = "\n".join(
        f'<li><a href="{path}">{path}</a> ({html.escape(note)})</li>'
        for path, note in sitemap_links()
    )
    return PAGE.format(
        title=html.escape(title), body=body, sitemaps=sitemaps, video=VIDEO, lang=lang, head=head
    )


def png(seed: int, size: int = 16) -> bytes:
    """A small solid-colour PNG (RFC 2083), its colour derived from ``seed``."""
    colour = bytes(((seed * 67) % 256, (seed * 131) % 256, (seed * 199) % 256))
    rows = b"".join(b"\x00" + colour * size for _ in range(size))  # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


class Shop:
    """What both flavours answer, as (status, body) pairs; the frameworks only route."""

    def __init__(self, database: Path, flavour: str) -> None:
        self.directory = database.parent
        self.products = catalog_size(database)
        self.flavour = flavour

    def page(self, title: str, body: str = "A page of the demo shop.", lang: str = "en") -> str:
        return render_page(title, body, lang)

    def home(self) -> str:
        return self.page(f"Demo shop ({self.flavour})", f"{self.products:,} products from SQLite.")

    def product(self, product_id: int, lang: str = "en") -> tuple[int, str]:
        if not 1 <= product_id <= self.products or lang not in PRODUCT_TITLES:
            return 404, self.page("Not found", f"There is no product {product_id}.")
        return 200, self.page(f"{PRODUCT_TITLES[lang]} {product_id}", lang=lang)

    def blog(self, post: int = 0) -> tuple[int, str]:
        if not 0 <= post <= BLOG_POSTS:
            return 404, self.page("Not found", f"There is no post {post}.")
        title = f"Blog post {post}" if post else "Blog"
        return 200, self.page(title, "A sub-application mounted at /blog, with its own sitemaps.")

    def product_image(self, product_id: int) -> bytes | None:
        return png(product_id) if 1 <= product_id <= self.products else None

    def news(self, number: int) -> tuple[int, str]:
        if not 1 <= number <= len(NEWS_AGES):
            return 404, self.page("Not found", f"There is no story {number}.")
        return 200, self.page(f"Story {number}", "Published by the Demo Times.")

    def video(self, slug: str, player: bool = False) -> tuple[int, str]:
        if slug != VIDEO:
            return 404, self.page("Not found", "There is no such video.")
        return 200, self.page("Video player" if player else "Unboxing product 1")

    def video_thumbnail(self, slug: str) -> bytes | None:
        return png(0) if slug == VIDEO else None

    def planted(self, path: str) -> tuple[int, dict[str, str], str]:
        """A page planted to be left out, or the deals page (``_demo_planted``)."""
        title, body, head = planted_title(path)
        return planted_answer(path, render_page(title, body, head=head))

    def landing(self, slug: str) -> tuple[int, str]:
        if f"/landing/{slug}" not in landing_pages(self.directory):
            return 404, self.page("Not found", "There is no such landing page.")
        return 200, self.page(slug.replace("-", " ").capitalize())


def asgi_app(
    base_url: str, database: Path, redis_url: str | None = None, urls_per_page: int = MAX_URLS
) -> Any:
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
    shop = Shop(database, "ASGI, Starlette + uvicorn")

    def answer(result: tuple[int, str]) -> HTMLResponse:
        status, body = result
        return HTMLResponse(body, status_code=status)

    def image(body: bytes | None) -> Response:
        if body is None:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(body, media_type="image/png", headers=IMAGE_HEADERS)

    async def home(request: Request) -> HTMLResponse:
        return HTMLResponse(shop.home())

    async def about(request: Request) -> HTMLResponse:
        return HTMLResponse(shop.page("About"))

    async def product(request: Request) -> HTMLResponse:
        return answer(shop.product(request.path_params["id"]))

    async def product_in(request: Request) -> HTMLResponse:
        return answer(shop.product(request.path_params["id"], lang=request.path_params["lang"]))

    async def product_image(request: Request) -> Response:
        return image(shop.product_image(request.path_params["id"]))

    async def news(request: Request) -> HTMLResponse:
        return answer(shop.news(request.path_params["n"]))

    async def video(request: Request) -> HTMLResponse:
        return answer(shop.video(request.path_params["slug"]))

    async def player(request: Request) -> HTMLResponse:
        return answer(shop.video(request.path_params["slug"], player=True))

    async def thumbnail(request: Request) -> Response:
        return image(shop.video_thumbnail(request.path_params["slug"]))

    async def landing(request: Request) -> HTMLResponse:
        return answer(shop.landing(request.path_params["slug"]))

    async def planted(request: Request) -> HTMLResponse:
        status, headers, body = shop.planted(request.url.path)
        return HTMLResponse(body, status_code=status, headers=headers)

    async def blog_home(request: Request) -> HTMLResponse:
        return answer(shop.blog())

    async def blog_post(request: Request) -> HTMLResponse:
        return answer(shop.blog(request.path_params["n"]))

    # A sub-application with sitemaps of its own, mounted below: its URLs get /blog.
    blog = Starlette(routes=[Route("/", blog_home), Route("/posts/{n:int}", blog_post)])
    blog.add_middleware(ASGISitemapMiddleware, config=blog_config(base_url))

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/about", about),
            Route("/products/{id:int}", product),
            Route("/{lang:str}/products/{id:int}", product_in),
            Route("/static/products/{id:int}.png", product_image),
            Route("/static/videos/{slug}.png", thumbnail),
            Route("/news/{n:int}", news),
            Route("/videos/{slug}", video),
            Route("/videos/{slug}/player", player),
            Route("/landing/{slug}", landing),
            *(Route(path, planted) for path in (*PLANTED_ROUTES, DEALS)),
            Mount("/docs", StaticFiles(directory=database.parent / "docs", html=True)),
            Mount("/blog", blog),
        ]
    )
    products = SQLAlchemyProvider(
        engine, table, key="id", lastmod="updated_at", to_entry=product_entry
    )
    registry, exposition = metrics_registry()

    async def metrics(request: Request) -> Response:
        data, media_type = exposition()
        return Response(data, media_type=media_type)

    app.router.routes.append(Route("/metrics", metrics))
    # "/" and "/about": routes with parameters are not; the blog lists its own pages.
    # (/deals/today is the deals section's, with its lastmod.)
    pages = StarletteRoutesProvider(app, exclude=("/blog*", "/metrics", DEALS))
    observers = [PrometheusObserver(registry)]
    config = make_config(
        base_url, products, pages, database.parent, redis_url, urls_per_page, observers
    )
    app.add_middleware(ASGISitemapMiddleware, config=sites(base_url, config))
    return app


def _sync_engine(database: Path) -> Any:
    from sqlalchemy import create_engine

    return create_engine(f"sqlite:///{database}")


def wsgi_app(
    base_url: str, database: Path, redis_url: str | None = None, urls_per_page: int = MAX_URLS
) -> Any:
    from flask import Flask, Response, abort, request, send_from_directory
    from sqlalchemy import MetaData, Table
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    from ._adapters.wsgi import WSGISitemapMiddleware
    from ._ops.metrics import PrometheusObserver
    from ._providers.routes import FlaskRoutesProvider
    from ._providers.sql import SQLAlchemyProvider

    engine = _sync_engine(database)  # a sync engine: the provider runs it in a thread
    table = Table("products", MetaData(), autoload_with=engine)
    shop = Shop(database, "WSGI, Flask + werkzeug")
    # No static folder: /static/... are the generated images below.
    app = Flask("sitemap_middleware_demo", static_folder=None)

    def image(body: bytes | None) -> Response:
        if body is None:
            abort(404)
        return Response(body, mimetype="image/png", headers=IMAGE_HEADERS)

    @app.get("/")
    def home() -> str:
        return shop.home()

    @app.get("/about")
    def about() -> str:
        return shop.page("About")

    @app.get("/products/<int:product_id>")
    def product(product_id: int) -> tuple[str, int]:
        status, body = shop.product(product_id)
        return body, status

    @app.get("/<lang>/products/<int:product_id>")
    def product_in(lang: str, product_id: int) -> tuple[str, int]:
        status, body = shop.product(product_id, lang=lang)
        return body, status

    @app.get("/static/products/<int:product_id>.png")
    def product_image(product_id: int) -> Response:
        return image(shop.product_image(product_id))

    @app.get("/static/videos/<slug>.png")
    def thumbnail(slug: str) -> Response:
        return image(shop.video_thumbnail(slug))

    @app.get("/news/<int:number>")
    def news(number: int) -> tuple[str, int]:
        status, body = shop.news(number)
        return body, status

    @app.get("/videos/<slug>")
    def video(slug: str) -> tuple[str, int]:
        status, body = shop.video(slug)
        return body, status

    @app.get("/videos/<slug>/player")
    def player(slug: str) -> tuple[str, int]:
        status, body = shop.video(slug, player=True)
        return body, status

    @app.get("/landing/<slug>")
    def landing(slug: str) -> tuple[str, int]:
        status, body = shop.landing(slug)
        return body, status

    def planted() -> tuple[str, int, dict[str, str]]:
        status, headers, body = shop.planted(request.path)
        return body, status, headers

    for path in (*PLANTED_ROUTES, DEALS):
        app.add_url_rule(path, f"planted {path}", planted, methods=["GET"])

    @app.get("/docs/")
    @app.get("/docs/<path:name>")
    def docs(name: str = "") -> Any:
        if not name or name.endswith("/"):
            name += "index.html"
        # Whatever the docs directory holds (the directory provider lists it all); a
        # missing file or a path out of the directory is a 404.
        return send_from_directory(database.parent / "docs", name)

    products = SQLAlchemyProvider(
        engine, table, key="id", lastmod="updated_at", to_entry=product_entry
    )
    registry, exposition = metrics_registry()

    @app.get("/metrics")
    def metrics() -> Any:
        data, media_type = exposition()
        return app.response_class(data, mimetype=media_type)

    # The docs section lists the docs; /metrics is not a page.
    pages = FlaskRoutesProvider(app, exclude=("/docs/*", "/metrics", DEALS))
    observers = [PrometheusObserver(registry)]
    config = make_config(
        base_url, products, pages, database.parent, redis_url, urls_per_page, observers
    )
    shop_app = WSGISitemapMiddleware(app.wsgi_app, config=sites(base_url, config))
    # A sub-application with sitemaps of its own, mounted at /blog (SCRIPT_NAME).
    blog = Flask("sitemap_middleware_demo_blog", static_folder=None)

    @blog.get("/")
    def blog_home() -> tuple[str, int]:
        status, body = shop.blog()
        return body, status

    @blog.get("/posts/<int:post>")
    def blog_post(post: int) -> tuple[str, int]:
        status, body = shop.blog(post)
        return body, status

    blog.wsgi_app = WSGISitemapMiddleware(blog.wsgi_app, config=blog_config(base_url))  # type: ignore[method-assign]
    app.wsgi_app = DispatcherMiddleware(shop_app, {"/blog": blog.wsgi_app})  # type: ignore[method-assign]
    return app


def __getattr__(name: str) -> Any:
    """``_demo_apps:asgi`` and ``:wsgi``: the demo as a ``module:app`` for ``explain``,
    built with the demo's options from ``$SITEMAP_DEMO_ARGS`` (the defaults without it:
    the shop ``bash scripts/demo`` starts)."""
    if name not in ("asgi", "wsgi"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    args = demo_parser().parse_args(shlex.split(os.environ.get(DEMO_ARGS_ENV, "")))
    base_url = (args.base_url or f"http://{args.host}:{args.port}").rstrip("/")
    database = prepare_data(args.data_dir, args.products)
    build = asgi_app if name == "asgi" else wsgi_app
    app = build(base_url, database, args.redis_url, args.urls_per_page)
    globals()[name] = app
    return app
