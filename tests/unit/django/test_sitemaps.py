"""Django's Sitemap classes and a QuerySet served in process, against Django's own views."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from werkzeug.http import parse_date

from sitemap_middleware import Section
from sitemap_middleware._engine.core import SitemapCore
from tests.harness.core import fetch, header
from tests.harness.django import as_bytes, assert_same_as_django, recorded_connections, urls

pytestmark = pytest.mark.usefixtures("django_project")
ALIASES = ["default", pytest.param("pg", marks=pytest.mark.postgres)]


def _alias(name: str) -> str:
    from django.conf import settings

    if name not in settings.DATABASES:
        pytest.skip("SITEMAP_TEST_POSTGRES_URL is not set (scripts/test starts PostgreSQL)")
    return name


def our_get(core: SitemapCore, **headers: str) -> Callable[[str], bytes]:
    def get(path: str) -> bytes:
        reply, body = anyio.run(lambda: fetch(core, path, host="example.com", **headers))
        return as_bytes(reply.status, body)

    return get


def get_both(core: SitemapCore) -> Callable[[str], bytes]:
    """``/django/...`` through Django's test client, anything else through our core."""
    from django.test import Client

    client = Client(HTTP_HOST="example.com", HTTP_X_FORWARDED_PROTO="https")
    ours = our_get(core)

    def get(path: str) -> bytes:
        if path.startswith("/django/"):
            response = client.get(path)
            return as_bytes(response.status_code, response.content)
        return ours(path)

    return get


def test_sitemap_classes_and_queryset_match_django_views() -> None:
    """Every page and the index list what Django's views list, field by field."""
    from tests.djangoproject.serving import config

    assert_same_as_django(get_both(SitemapCore(config())))


def _catalog_core(alias: str, **kwargs: Any) -> SitemapCore:
    from sitemap_middleware.django import DjangoQuerySetProvider, sitemap_config
    from tests.djangoproject.shop.models import Product

    provider = DjangoQuerySetProvider(
        Product.objects.using(alias).all(),
        lastmod="updated_at",
        batch_size=3,
        metadata_ttl=0,
        **kwargs,
    )
    return SitemapCore(
        sitemap_config(
            {}, base_url="https://example.com", sections={"catalog": Section(provider, max_urls=7)}
        )
    )


@pytest.mark.parametrize("alias", ALIASES)
def test_queryset_pages_are_key_ranges_and_connections_close(alias: str) -> None:
    """Page 3 is read by key ranges (no OFFSET anywhere) in worker threads whose
    connections are all closed when the request is done."""
    core = _catalog_core(_alias(alias))
    with recorded_connections() as (statements, opened):
        reply, body = anyio.run(lambda: fetch(core, "/sitemap-catalog-3.xml"))
    assert reply.status == 200
    assert [url[0] for url in urls(body, ours=True)] == [
        f"https://example.com/products/product-{i}/" for i in (15, 16, 17)
    ]
    assert statements and not [sql for sql in statements if "OFFSET" in sql.upper()]
    # The plan's pass and the page read key ranges: "> after" (and "<= upto"), no OFFSET.
    assert any("<=" in sql for sql in statements)
    assert opened and all(connection.connection is None for connection in opened)


@pytest.mark.parametrize("alias", ALIASES)
def test_queryset_version_follows_the_rows(alias: str) -> None:
    """ETag and Last-Modified come from the table; a changed row changes them, 304 before."""
    from datetime import timedelta

    from tests.djangoproject.shop.models import Product

    alias = _alias(alias)
    core = _catalog_core(alias)
    get = our_get(core)
    reply, _ = anyio.run(lambda: fetch(core, "/sitemap-catalog-1.xml"))
    etag = header(reply, "etag")
    modified = parse_date(header(reply, "last-modified"))  # never older than the rows
    assert etag and modified is not None and modified >= datetime(2024, 1, 19, 1, 30, tzinfo=UTC)
    again, _ = anyio.run(lambda: fetch(core, "/sitemap-catalog-1.xml", if_none_match=etag))
    assert again.status == 304
    product = Product.objects.using(alias).get(pk=2)
    try:
        Product.objects.using(alias).filter(pk=2).update(
            updated_at=product.updated_at + timedelta(days=90)
        )
        changed, _ = anyio.run(lambda: fetch(core, "/sitemap-catalog-1.xml", if_none_match=etag))
        assert changed.status == 200 and header(changed, "etag") != etag
        assert b"2024-04-" in get("/sitemap-catalog-1.xml")
    finally:
        Product.objects.using(alias).filter(pk=2).update(updated_at=product.updated_at)


def test_sitemap_validators_from_get_latest_lastmod_only_when_overridden() -> None:
    """GenericSitemap (its get_latest_lastmod is one query) gets Last-Modified, as Django's
    view sends it, and no ETag (a time cannot vouch for renames); a Sitemap with the
    default (one lastmod() call per item) streams without either."""
    from tests.djangoproject.serving import config

    core = SitemapCore(config())
    news, _ = anyio.run(lambda: fetch(core, "/sitemap-news-1.xml"))
    assert header(news, "last-modified") == "Wed, 06 Mar 2024 00:00:00 GMT"
    assert header(news, "etag") is None
    products, _ = anyio.run(lambda: fetch(core, "/sitemap-products-1.xml"))
    assert products.status == 200 and header(products, "etag") is None


def test_django_asgi_app_serves_sync_orm_without_synchronous_only_operation() -> None:
    """Under ASGI the ORM runs in worker threads: pages are served, while the same query
    on the event loop itself is refused by Django (the check this guards against is live)."""
    import httpx
    from django.core.asgi import get_asgi_application
    from django.core.exceptions import SynchronousOnlyOperation

    from sitemap_middleware import ASGISitemapMiddleware
    from tests.djangoproject.serving import config
    from tests.djangoproject.shop.models import Product

    app = ASGISitemapMiddleware(get_asgi_application(), config=config())

    async def main() -> list[int]:
        with pytest.raises(SynchronousOnlyOperation):
            Product.objects.count()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://example.com") as client:
            paths = ["/sitemap_index.xml", "/sitemap-products-2.xml", "/sitemap-catalog-3.xml", "/"]
            return [(await client.get(path)).status_code for path in paths]

    assert anyio.run(main) == [200, 200, 200, 200]


def test_django_wsgi_app_serves_sitemaps_and_passes_the_rest() -> None:
    """The WSGI wrapper answers our documents and hands Django everything else."""
    from django.core.wsgi import get_wsgi_application
    from werkzeug.test import Client

    from sitemap_middleware import WSGISitemapMiddleware
    from tests.djangoproject.serving import config

    app = WSGISitemapMiddleware(get_wsgi_application(), config=config())
    try:
        client = Client(app)
        page = client.get("/sitemap-articles-2.xml", headers={"Host": "example.com"})
        assert page.status_code == 200 and page.data.count(b"<url>") == 5
        assert client.get("/products/product-1/", headers={"Host": "example.com"}).text == "a page"
        assert client.post("/sitemap.xml", headers={"Host": "example.com"}).status_code == 405
    finally:
        app.close()


@pytest.mark.parametrize("batch_size", [1, 4, 5000])
def test_entries_are_the_same_whatever_the_batch(batch_size: int) -> None:
    """entries() lists every item once, in Django's order, however many hops it takes;
    page() windows over the i18n-multiplied list agree with it."""
    from sitemap_middleware.django import DjangoQuerySetProvider, DjangoSitemapProvider
    from tests.djangoproject.shop.models import Product
    from tests.djangoproject.shop.sitemaps import ArticleSitemap

    async def collect(provider: Any, window: tuple[int, int] | None = None) -> list[Any]:
        source = provider.page(*window) if window else provider.entries()
        return [entry async for entry in source]

    articles = DjangoSitemapProvider(ArticleSitemap, batch_size=batch_size)
    every = anyio.run(collect, articles)
    assert len(every) == anyio.run(articles.count) == 12
    assert [entry["loc"] for entry in every[:3]] == [
        "/de/articles/article-1/",
        "/pt-br/articles/article-1/",
        "/en/articles/article-2/",
    ]
    assert anyio.run(collect, articles, (5, 5)) == every[5:10]
    products = DjangoQuerySetProvider(Product.objects.all(), batch_size=batch_size)
    locs = [entry["loc"] for entry in anyio.run(collect, products)]
    assert locs == [f"/products/product-{i}/" for i in range(1, 18)]
    by_slug = DjangoQuerySetProvider(Product.objects.all(), key="slug", to_entry=lambda p: p.slug)
    slugs = anyio.run(collect, by_slug)
    assert slugs == sorted(slugs) and len(slugs) == 17  # key order: slugs sort as text


def test_a_page_stopped_early_ends_its_thread_and_closes_its_connection() -> None:
    """Closing a page stream midway (a client hung up) stops the reading thread, which
    closes the connection its one query used; a failing items() reaches the reader."""
    import threading
    import time

    from sitemap_middleware.django import DjangoSitemapProvider
    from tests.djangoproject.shop.sitemaps import ProductSitemap

    provider = DjangoSitemapProvider(ProductSitemap, batch_size=2)

    async def read_three() -> list[Any]:
        stream = provider.page(0, 17)
        taken = [await anext(stream) for _ in range(3)]
        await stream.aclose()  # type: ignore[attr-defined]
        return taken

    with recorded_connections() as (statements, opened):
        taken = anyio.run(read_three)
        deadline = time.monotonic() + 5
        while any(t.name == "sitemap-django-page" for t in threading.enumerate()):
            assert time.monotonic() < deadline, "the page thread did not stop"
            time.sleep(0.01)
    assert [entry["loc"] for entry in taken] == [
        f"/products/product-{i}/?ref=a&b=1" for i in (1, 2, 3)
    ]
    assert len(opened) == 1 and opened[0].connection is None
    assert len([sql for sql in statements if "shop_product" in sql]) == 1  # one query for the page

    class Broken(ProductSitemap):
        def items(self) -> Any:
            raise RuntimeError("items() failed")

    async def read_all() -> list[Any]:
        return [entry async for entry in DjangoSitemapProvider(Broken).page(0, 7)]

    with pytest.raises(RuntimeError, match=r"items\(\) failed"):
        anyio.run(read_all)
