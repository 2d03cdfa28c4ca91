"""Item pages, and Django's own sitemap views under /django/ (to compare with ours)."""

from __future__ import annotations

from typing import Any

from django.conf.urls.i18n import i18n_patterns
from django.contrib.sitemaps import views as sitemap_views
from django.http import HttpRequest, HttpResponse
from django.urls import path

from .shop.sitemaps import sitemaps


def page(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    return HttpResponse("a page")


urlpatterns = [
    path("", page, name="home"),
    path("products/<slug:slug>/", page, name="product"),
    path("django/sitemap.xml", sitemap_views.sitemap, {"sitemaps": sitemaps}),
    path(
        "django/sitemap-<section>.xml",
        sitemap_views.sitemap,
        {"sitemaps": sitemaps},
        name="django.contrib.sitemaps.views.sitemap",
    ),
    path("django/sitemap_index.xml", sitemap_views.index, {"sitemaps": sitemaps}),
    *i18n_patterns(
        path("about/", page, name="about"),
        path("contact/", page, name="contact"),
        path("articles/<slug:slug>/", page, name="article"),
    ),
]
