"""A one-module Django project: its settings and URLconf (``/`` and ``/about``)."""

from __future__ import annotations

import django
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import path

from tests.frameworks.common import ABOUT, HOME

if not settings.configured:
    settings.configure(
        DEBUG=False,
        SECRET_KEY="framework-tests",
        ALLOWED_HOSTS=["*"],
        ROOT_URLCONF=__name__,
        INSTALLED_APPS=[],
        MIDDLEWARE=[],
        DATABASES={},
    )
    django.setup()


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse(HOME)


def about(request: HttpRequest) -> HttpResponse:
    return HttpResponse(ABOUT)


urlpatterns = [path("", home), path("about", about)]
