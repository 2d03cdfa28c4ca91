"""``i18n_patterns(prefix_default_language=False)``: the default language has no prefix."""

from __future__ import annotations

from django.conf.urls.i18n import i18n_patterns
from django.urls import path

from .routes_urls import page

urlpatterns = [
    path("", page, name="home"),
    *i18n_patterns(path("about/", page, name="about"), prefix_default_language=False),
]
