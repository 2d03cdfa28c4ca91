"""A URLconf for DjangoRoutesProvider: every kind of pattern it lists or leaves out."""

from __future__ import annotations

from typing import Any

from django.conf.urls.i18n import i18n_patterns
from django.contrib.sitemaps import views as sitemap_views
from django.http import HttpRequest, HttpResponse
from django.urls import include, path, re_path
from django.views import View
from django.views.generic import RedirectView, TemplateView


def page(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    return HttpResponse("a page")


class FormOnly(View):
    """A class-based view without get(): POST only, no page."""

    def post(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse("posted")


blog = (
    [
        path("", page, name="index"),
        path("archive/", page, name="archive"),
        path("<int:year>/", page, name="year"),
        path("tags/", include(([path("", page, name="tags")], "tags"), namespace="tags")),
    ],
    "blog",
)
admin = ([path("", page, name="index"), path("users/", page, name="users")], "admin")

urlpatterns = [
    path("", page, name="home"),
    path("pricing/", TemplateView.as_view(template_name="x.html"), name="pricing"),
    path("items/<slug:slug>/", page, name="item"),
    re_path(r"^faq/$", page, name="faq"),
    re_path(r"^legal\.html$", page),  # unnamed: its literal route
    re_path(r"^help/?$", page, name="help"),  # optional slash: reverse() gives "help"
    re_path(r"^news/(?P<year>[0-9]{4})/$", page, name="news-year"),
    re_path(r"^feed/([a-z]+)/$", page),
    path("blog/", include(blog, namespace="blog")),
    path("team/<int:team>/", include([path("", page, name="team")])),
    path("admin/", include(admin, namespace="admin")),
    path("old/", RedirectView.as_view(url="/"), name="old"),
    path("subscribe/", FormOnly.as_view(), name="subscribe"),
    path("sitemap.xml", sitemap_views.sitemap, {"sitemaps": {}}),
    path("caf\u00e9 menu/", page, name="menu"),
    *i18n_patterns(
        path("about/", page, name="about"),
        path("articles/<slug:slug>/", page, name="article"),
        path("shop/", include(([path("", page, name="front")], "shop"), namespace="shop")),
    ),
]
