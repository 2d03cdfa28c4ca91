"""The shop per language (``i18n_patterns``), flat pages under /pages/, and Django's own
sitemap views kept under /django/ to compare with what the middleware serves."""

from __future__ import annotations

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.contrib.sitemaps import views as sitemap_views
from django.urls import include, path

from shop import views
from shop.sitemaps import sitemaps

urlpatterns = [
    path("admin/", admin.site.urls),
    path("pages/", include("django.contrib.flatpages.urls")),
    # Before the migration these were /sitemap.xml and /sitemap-<section>.xml; the
    # middleware answers those paths now (and finds `sitemaps` here for settings_config()).
    path("django/sitemap.xml", sitemap_views.index, {"sitemaps": sitemaps}),
    path(
        "django/sitemap-<section>.xml",
        sitemap_views.sitemap,
        {"sitemaps": sitemaps},
        name="django.contrib.sitemaps.views.sitemap",
    ),
    *i18n_patterns(
        path("", views.home, name="home"),
        path("about/", views.about, name="about"),
        path("categories/<slug:slug>/", views.category, name="category"),
        path("products/<slug:slug>/", views.product, name="product"),
    ),
]
