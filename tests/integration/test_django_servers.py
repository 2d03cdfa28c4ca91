"""The test project behind real servers: gunicorn (wsgi.py) and uvicorn (asgi.py), on SQLite
and on PostgreSQL, answering exactly what Django's own sitemap views answer."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.harness.django import as_bytes, assert_same_as_django, urls
from tests.harness.ports import free_port
from tests.harness.servers import Server, serving

SERVERS = [
    pytest.param(("gunicorn", "sqlite"), id="gunicorn-sqlite"),
    pytest.param(("uvicorn", "sqlite"), id="uvicorn-sqlite"),
    pytest.param(("gunicorn", "postgres"), id="gunicorn-postgres", marks=pytest.mark.postgres),
    pytest.param(("uvicorn", "postgres"), id="uvicorn-postgres", marks=pytest.mark.postgres),
]


def _argv(server: str, port: int) -> list[str]:
    if server == "gunicorn":
        return [
            *(sys.executable, "-m", "gunicorn", "--workers=2", "--worker-class=gthread"),
            *("--threads=4", f"--bind=127.0.0.1:{port}", "--log-level=warning"),
            "tests.djangoproject.wsgi:application",
        ]
    # Django's ASGI handler does not speak lifespan.
    return [
        *(sys.executable, "-m", "uvicorn", "--lifespan=off", "--log-level=warning"),
        *("--host=127.0.0.1", f"--port={port}", "tests.djangoproject.asgi:application"),
    ]


@pytest.fixture(scope="module", params=SERVERS)
def site(request: pytest.FixtureRequest, django_project: dict[str, str]) -> Iterator[Server]:
    server, database = request.param
    env = dict(django_project)
    if database == "postgres":
        from django.conf import settings

        if "pg" not in settings.DATABASES:
            pytest.skip("SITEMAP_TEST_POSTGRES_URL is not set (scripts/test starts PostgreSQL)")
        env["SITEMAP_DJANGO_DB"] = "postgres"
    port = free_port()
    with serving(_argv(server, port), port, env) as running:
        yield running


def _get(site: Server, path: str, host: str = "example.com", **headers: str) -> httpx.Response:
    # X-Forwarded-Proto tells Django's views (SECURE_PROXY_SSL_HEADER) the scheme is
    # https; our middleware never reads it (trust_forwarded is off).
    return httpx.get(
        site.url + path, headers={"Host": host, "X-Forwarded-Proto": "https", **headers}, timeout=30
    )


def test_same_urls_as_djangos_views(site: Server) -> None:
    """Pages, index and root list exactly Django's URLs, lastmods, changefreqs, priorities and
    alternates, and are valid against the XSDs."""

    def get(path: str) -> bytes:
        response = _get(site, path)
        return as_bytes(response.status_code, response.content)

    assert_same_as_django(get)


def test_sites_framework_hosts_and_http_behaviour(site: Server) -> None:
    """A Site's domain is served on its own host, any other host gets 400; gzip and 304 work."""
    www = _get(site, "/sitemap-pages-1.xml", host="www.example.com")
    assert {url[0].split("/")[2] for url in urls(www.content, ours=True)} == {"www.example.com"}
    assert _get(site, "/sitemap-pages-1.xml", host="evil.example").status_code == 400
    # The QuerySet section has a version token: ETag and 304s; GenericSitemap's time:
    # Last-Modified, sent as Django sends it, which alone earns no 304.
    catalog = _get(site, "/sitemap-catalog-1.xml", **{"Accept-Encoding": "gzip"})
    assert catalog.headers["content-encoding"] == "gzip" and catalog.headers["etag"]
    again = _get(
        site,
        "/sitemap-catalog-1.xml",
        **{"Accept-Encoding": "gzip", "If-None-Match": catalog.headers["etag"]},
    )
    assert again.status_code == 304 and again.content == b""
    news = _get(site, "/sitemap-news-1.xml", **{"Accept-Encoding": "gzip"})
    since = {"If-Modified-Since": news.headers["last-modified"]}
    assert _get(site, "/sitemap-news-1.xml", **since).status_code == 200  # a time alone
    assert _get(site, "/products/product-3/").text == "a page"  # Django's own page


def test_last_modified_only_when_every_item_has_a_lastmod(site: Server) -> None:
    """As Django's view: no validators while an item lacks a lastmod (the old answer sent
    the newest date, which stayed put when the undated item was deleted: a bare
    If-Modified-Since got a stale 304); once every item is dated, Last-Modified again."""
    from django.conf import settings

    from tests.djangoproject.shop.models import Tag
    from tests.harness.django import DAY, write_tags

    since = "Thu, 01 Feb 2024 00:00:00 GMT"
    try:
        for alias in settings.DATABASES:
            write_tags(alias, [("a", DAY), ("b", None)])
        first = _get(site, "/sitemap-tags-1.xml")
        assert first.status_code == 200 and first.content.count(b"<url>") == 2
        assert "last-modified" not in first.headers and "etag" not in first.headers
        for alias in settings.DATABASES:
            Tag.objects.using(alias).filter(code="b").delete()
        after = _get(site, "/sitemap-tags-1.xml")
        assert after.status_code == 200 and after.content.count(b"<url>") == 1
        assert after.headers["last-modified"] == since
        # A time alone earns no 304 (a later delete would leave it put: issue 30).
        again = _get(site, "/sitemap-tags-1.xml", **{"If-Modified-Since": since})
        assert again.status_code == 200 and again.content == after.content
    finally:
        for alias in settings.DATABASES:
            write_tags(alias, [])
