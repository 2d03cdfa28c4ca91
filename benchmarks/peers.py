"""The alternatives, set up for the same workload: Django, asgi-sitemaps, Flask-Sitemap.

Each is an optional benchmark dependency (the ``bench`` extra); missing ones are skipped.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from benchmarks.common import lastmod

PEERS = ("django", "asgi-sitemaps", "flask-sitemap")


def available(name: str) -> bool:
    module = {
        "django": "django",
        "asgi-sitemaps": "asgi_sitemaps",
        "flask-sitemap": "flask_sitemap",
    }[name]
    try:
        __import__(module)
    except ImportError:
        return False
    return True


_django_ready = False


def _django() -> None:
    global _django_ready
    if _django_ready:
        return
    import django
    from django.conf import settings

    if settings.configured:  # the Django tests of this process set up their project first
        _django_ready = True
        return
    settings.configure(
        INSTALLED_APPS=["django.contrib.sitemaps"],
        TEMPLATES=[
            {"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}
        ],
        ALLOWED_HOSTS=["*"],
        USE_TZ=True,
        ROOT_URLCONF=__name__,
    )
    django.setup()
    _django_ready = True


urlpatterns: list[Any] = []


class _Products:
    """The workload as both peers' Sitemap classes want it: items, location, lastmod."""

    size = 0

    def items(self) -> range:
        return range(self.size)

    def location(self, item: int) -> str:
        return f"/products/{item}?ref=a&b={item}"

    def lastmod(self, item: int) -> Any:
        return lastmod(item)


def _django_sitemap_class(n: int, page: int) -> Any:
    _django()
    from django.contrib.sitemaps import Sitemap

    class ProductSitemap(_Products, Sitemap):
        size = n
        limit = page
        protocol = "https"
        changefreq = "daily"
        priority = 0.5

    return ProductSitemap


def django_page(n: int) -> Callable[[], bytes]:
    """Django's sitemap view for one page (through its template engine)."""
    from_class = _django_sitemap_class(n, 50_000)
    from django.contrib.sitemaps import views

    return _django_view(views.sitemap, {"products": from_class})


def django_index(n: int) -> Callable[[], bytes]:
    """Django's sitemap index view (its children link to the per-section view)."""
    from_class = _django_sitemap_class(n, 50_000)
    from django.contrib.sitemaps import views
    from django.urls import path

    urlpatterns[:] = [
        path("sitemap-<section>.xml", views.sitemap, name="django.contrib.sitemaps.views.sitemap")
    ]
    return _django_view(views.index, {"products": from_class})


def _django_view(view: Callable[..., Any], sitemaps: dict[str, Any]) -> Callable[[], bytes]:
    """One GET /sitemap.xml through a django.contrib.sitemaps view, template rendered."""
    from django.test import RequestFactory
    from django.urls import set_urlconf

    request = RequestFactory(HTTP_HOST="example.com").get("/sitemap.xml")

    def call() -> bytes:
        set_urlconf(__name__)  # our urlpatterns, whichever settings this process has
        try:
            response = view(request, sitemaps=sitemaps)
            response.render()
            return bytes(response.content)
        finally:
            set_urlconf(None)

    return call


def asgi_sitemaps_app(n: int) -> Any:
    import asgi_sitemaps

    class ProductSitemap(_Products, asgi_sitemaps.Sitemap[int]):
        size = n
        protocol = "https"

        def changefreq(self, item: int) -> str:
            return "daily"

        def priority(self, item: int) -> float:
            return 0.5

    return asgi_sitemaps.SitemapApp(ProductSitemap(), domain="example.com")


def flask_sitemap_app(n: int) -> Any:
    from flask import Flask
    from flask_sitemap import Sitemap

    app = Flask("flask_sitemap_bench")
    app.config.update(
        SERVER_NAME="example.com", SITEMAP_URL_SCHEME="https", SITEMAP_MAX_URL_COUNT=50_000
    )

    @app.get("/products/<int:item>")
    def product(item: int) -> str:
        return str(item)

    @app.get("/")
    def home() -> str:
        return "home page"

    sitemap = Sitemap(app=app)

    @sitemap.register_generator  # type: ignore[untyped-decorator]
    def products() -> Any:
        for i in range(n):
            yield "product", {"item": i, "ref": "a", "b": i}, lastmod(i).isoformat(), "daily", 0.5

    return app


def wsgi_get(app: Any, path: str, host: str = "example.com") -> bytes:
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": host,
        "SERVER_PORT": "80",
        "HTTP_HOST": host,
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": io.StringIO(),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    body = app(environ, lambda status, headers, exc_info=None: None)
    try:
        return b"".join(body)
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()


def app(kind: str, n: int) -> tuple[str, Any]:
    """A servable app for the HTTP scenarios: (flavour, app)."""
    if kind == "asgi-sitemaps":
        inner = asgi_sitemaps_app(n)

        async def routed(scope: Any, receive: Any, send: Any) -> None:
            if scope["path"] == "/sitemap.xml":
                await inner(scope, receive, send)
                return
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"home page"})

        return "asgi", routed
    if kind == "flask-sitemap":
        flask_app = flask_sitemap_app(n)
        flask_app.config["SERVER_NAME"] = None
        return "wsgi", flask_app
    raise ValueError(kind)
