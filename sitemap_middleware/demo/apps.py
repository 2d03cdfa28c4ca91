"""The demo's two flavours of one shop: Starlette under uvicorn, Flask under werkzeug.

The frameworks only route: what each URL answers is ``shop.Shop``'s (the docs tree
aside, static files). ``apps:asgi`` and ``:wsgi`` are the demo as a ``module:app`` (for
``explain``).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._sansio.limits import MAX_URLS
from .planted import DEALS, DEMO_ARGS_ENV, PLANTED_ROUTES
from .shop import IMAGE_HEADERS, Shop
from .site import (
    blog_config,
    demo_parser,
    make_config,
    metrics_registry,
    prepare_data,
    product_entry,
    sites,
)

if TYPE_CHECKING:  # the demo extra's frameworks, imported when an app is built
    from flask import Flask
    from flask import Response as FlaskResponse
    from starlette.responses import HTMLResponse, Response


def asgi_app(
    base_url: str, database: Path, redis_url: str | None = None, urls_per_page: int = MAX_URLS
) -> Any:
    from sqlalchemy import MetaData, Table
    from sqlalchemy.ext.asyncio import create_async_engine
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from .._adapters.asgi import ASGISitemapMiddleware
    from .._ops.metrics import PrometheusObserver
    from .._providers.routes import StarletteRoutesProvider
    from .._providers.sql import SQLAlchemyProvider

    engine = create_async_engine(f"sqlite+aiosqlite:///{database}")
    table = Table("products", MetaData(), autoload_with=_sync_engine(database))
    shop = Shop(database, "ASGI, Starlette + uvicorn")
    shop_routes, blog_routes = _starlette_routes(shop)
    # A sub-application with sitemaps of its own, mounted below: its URLs get /blog.
    blog = Starlette(routes=blog_routes)
    blog.add_middleware(ASGISitemapMiddleware, config=blog_config(base_url))

    app = Starlette(
        routes=[
            *shop_routes,
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


def _starlette_answer(result: tuple[int, str]) -> HTMLResponse:
    from starlette.responses import HTMLResponse

    status, body = result
    return HTMLResponse(body, status_code=status)


def _starlette_image(body: bytes | None) -> Response:
    from starlette.responses import Response

    if body is None:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(body, media_type="image/png", headers=IMAGE_HEADERS)


def _starlette_routes(shop: Shop) -> tuple[list[Any], list[Any]]:
    """The shop's routes and the blog's, for Starlette (each handler asks ``shop``)."""
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    answer, image = _starlette_answer, _starlette_image

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

    shop_routes = [
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
    ]
    return shop_routes, [Route("/", blog_home), Route("/posts/{n:int}", blog_post)]


def _sync_engine(database: Path) -> Any:
    from sqlalchemy import create_engine

    return create_engine(f"sqlite:///{database}")


def wsgi_app(
    base_url: str, database: Path, redis_url: str | None = None, urls_per_page: int = MAX_URLS
) -> Any:
    from flask import Flask
    from sqlalchemy import MetaData, Table
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    from .._adapters.wsgi import WSGISitemapMiddleware
    from .._ops.metrics import PrometheusObserver
    from .._providers.routes import FlaskRoutesProvider
    from .._providers.sql import SQLAlchemyProvider

    engine = _sync_engine(database)  # a sync engine: the provider runs it in a thread
    table = Table("products", MetaData(), autoload_with=engine)
    shop = Shop(database, "WSGI, Flask + werkzeug")
    # No static folder: /static/... are the generated images below.
    app = Flask("sitemap_middleware_demo", static_folder=None)

    _flask_routes(app, shop, database.parent / "docs")
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
    blog = _flask_blog(shop)
    blog.wsgi_app = WSGISitemapMiddleware(blog.wsgi_app, config=blog_config(base_url))  # type: ignore[method-assign]
    app.wsgi_app = DispatcherMiddleware(shop_app, {"/blog": blog.wsgi_app})  # type: ignore[method-assign]
    return app


def _flask_routes(app: Flask, shop: Shop, docs_directory: Path) -> None:
    """The shop's routes on a Flask app (each handler asks ``shop``), the docs tree's too."""
    from flask import request

    image = _flask_image

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
    def product_image(product_id: int) -> FlaskResponse:
        return image(shop.product_image(product_id))

    @app.get("/static/videos/<slug>.png")
    def thumbnail(slug: str) -> FlaskResponse:
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
    _flask_docs(app, docs_directory)


def _flask_image(body: bytes | None) -> FlaskResponse:
    from flask import Response, abort

    if body is None:
        abort(404)
    return Response(body, mimetype="image/png", headers=IMAGE_HEADERS)


def _flask_docs(app: Flask, docs_directory: Path) -> None:
    """Whatever the docs directory holds, at /docs/ (the directory provider lists it all)."""
    from flask import send_from_directory

    @app.get("/docs/")
    @app.get("/docs/<path:name>")
    def docs(name: str = "") -> Any:
        if not name or name.endswith("/"):
            name += "index.html"
        # Whatever the docs directory holds (the directory provider lists it all); a
        # missing file or a path out of the directory is a 404.
        return send_from_directory(docs_directory, name)


def _flask_blog(shop: Shop) -> Flask:
    """The blog, a Flask app of its own (mounted at /blog by the caller)."""
    from flask import Flask

    blog = Flask("sitemap_middleware_demo_blog", static_folder=None)

    @blog.get("/")
    def blog_home() -> tuple[str, int]:
        status, body = shop.blog()
        return body, status

    @blog.get("/posts/<int:post>")
    def blog_post(post: int) -> tuple[str, int]:
        status, body = shop.blog(post)
        return body, status

    return blog


def __getattr__(name: str) -> Any:
    """``apps:asgi`` and ``:wsgi``: the demo as a ``module:app`` for ``explain``,
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
