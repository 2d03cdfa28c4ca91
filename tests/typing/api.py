"""Public API used exactly as the docs show it; checked by mypy --strict, not run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import FastAPI
from flask import Flask
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.middleware import Middleware

from sitemap_middleware import (
    Alternate,
    ASGISitemapMiddleware,
    HTMLView,
    HTTPSettings,
    Image,
    InvalidEntryError,
    NewsArticle,
    Robots,
    RobotsGroup,
    Section,
    SitemapConfig,
    SitemapEntry,
    TrustedHosts,
    Video,
    WSGISitemapMiddleware,
)
from sitemap_middleware.ops import (
    DocumentObserver,
    IndexNowNotifier,
    PrometheusObserver,
    ServedDocument,
    Snapshot,
    changed_urls,
    take_snapshot,
)
from sitemap_middleware.providers import (
    DirectoryProvider,
    FlaskRoutesProvider,
    ProviderVersion,
    SQLAlchemyProvider,
    StarletteRoutesProvider,
    StaticProvider,
    TextFileProvider,
    UrlProvider,
    news_cutoff,
)


def products() -> Iterator[SitemapEntry]:
    yield SitemapEntry("/products/1", lastmod="2024-05-01", changefreq="daily", priority=0.8)


async def articles() -> AsyncIterator[dict[str, str]]:
    yield {"loc": "/blog/a", "lastmod": "2024-05-01"}


class Catalog:
    async def entries(self) -> AsyncIterator[SitemapEntry]:
        yield SitemapEntry(
            "/items/1", images=[Image("/i.png")], alternates=[Alternate("de", "/de/items/1")]
        )

    async def count(self) -> int:
        return 1

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


catalog: UrlProvider = Catalog()
config = SitemapConfig(
    base_url="https://example.com",
    sections={
        "pages": ["/", "/about"],
        "static": StaticProvider(["/x"]),
        "products": products,
        "blog": articles,
        "catalog": catalog,
        "links": TextFileProvider("urls.txt"),
        "docs": DirectoryProvider("site", url_prefix="/docs/"),
        "news": Section(lambda: [], max_urls=1000),
    },
    robots=Robots(groups=[RobotsGroup(user_agents=("*",), disallow=("/admin/",))]),
    stylesheet=True,
    text_sitemaps=True,
)

flask_app = Flask(__name__)
flask_app.wsgi_app = WSGISitemapMiddleware(flask_app.wsgi_app, config=config)  # type: ignore[method-assign]
routes = FlaskRoutesProvider(flask_app, exclude=("/admin*",))

starlette_app = Starlette(middleware=[Middleware(ASGISitemapMiddleware, config=config)])
api = FastAPI()
api.add_middleware(ASGISitemapMiddleware, config=config)
pages = StarletteRoutesProvider(api)

video = Video(thumbnail_loc="/t.jpg", title="t", description="d", content_loc="/v.mp4", duration=10)
news = NewsArticle(publication_name="N", language="en", publication_date=news_cutoff(), title="t")
sql: type[SQLAlchemyProvider] = SQLAlchemyProvider

try:
    SitemapEntry("/x", priority=7)
except InvalidEntryError as error:
    field: str = error.field


def django_config(sitemaps: dict[str, Any], queryset: Any) -> SitemapConfig:
    """The Django migration as the docs show it (Django itself ships no types)."""
    from sitemap_middleware.django import (
        DjangoQuerySetProvider,
        DjangoSitemapProvider,
        django_sections,
        django_trusted_hosts,
        site_base_url,
        sitemap_config,
    )

    hosts: tuple[str, ...] = django_trusted_hosts("allowed_hosts")
    base: str = site_base_url("https")
    sections: dict[str, Section] = django_sections({"old": sitemaps["products"]})
    assert sections["old"].max_urls
    single: DjangoSitemapProvider = DjangoSitemapProvider(sitemaps["products"])
    catalog = DjangoQuerySetProvider(queryset, lastmod="updated_at", changefreq="daily")
    return sitemap_config(
        sitemaps,
        base_url=base,
        sections={"catalog": catalog, "one": single},
        hosts=TrustedHosts(hosts=hosts, forwarded="x-forwarded"),
        http=HTTPSettings(gzip_level=6),
    )


class LogEvents:
    """An observer as the docs describe one."""

    def document_served(self, event: ServedDocument) -> None:
        seconds: float = event.duration
        cache: str | None = event.cache
        print(event.document, event.status, event.urls, seconds, cache)


observer: DocumentObserver = LogEvents()
watched = SitemapConfig(
    base_url="https://example.com",
    sections={"pages": ["/"]},
    observers=[observer, PrometheusObserver(CollectorRegistry())],
    indexnow_key="5f8e2c0a9b7d4e1f",
)
notifier = IndexNowNotifier.for_config(watched, retries=2)


async def push(previous: Snapshot) -> Snapshot:
    snapshot, result = await notifier.notify_changes(watched, previous)
    submitted: int = result.submitted
    errors: list[str | None] = [batch.error for batch in result.batches]
    first: Snapshot = await take_snapshot(watched)
    print(submitted, errors, changed_urls(first, snapshot))
    return snapshot


html_config = SitemapConfig(
    base_url="https://example.com",
    sections={"pages": ["/", "/about"]},
    html=HTMLView(index_name="urls.html", page_prefix="view-", title="Published URLs"),
)
simple_html_config = SitemapConfig(
    base_url="https://example.com", sections={"pages": ["/"]}, html=True
)
