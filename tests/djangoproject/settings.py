"""Settings of the small Django project the Django tests serve (SQLite or PostgreSQL).

``SITEMAP_DJANGO_DB``: a SQLite file path, or ``postgres`` to make the PostgreSQL server
of ``SITEMAP_TEST_POSTGRES_URL`` the default database. With ``SITEMAP_TEST_POSTGRES_URL``
set, that server is also the ``pg`` alias (the test process seeds both).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


def _postgres() -> dict[str, Any] | None:
    url = os.environ.get("SITEMAP_TEST_POSTGRES_URL")
    if not url:
        return None
    parts = urlsplit(url)  # postgresql+asyncpg://user@host:port/name (the CI's SQLAlchemy URL)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/") or "postgres",
        "USER": parts.username or "postgres",
        "PASSWORD": parts.password or "",
        "HOST": parts.hostname or "127.0.0.1",
        "PORT": str(parts.port or 5432),
    }


_SQLITE = os.environ.get("SITEMAP_DJANGO_DB") or str(
    Path(tempfile.gettempdir()) / "sitemap-django-tests.sqlite3"
)
_PG = _postgres()
DATABASES: dict[str, Any] = {
    "default": _PG
    if _SQLITE == "postgres" and _PG
    else {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": _SQLITE,
    }
}
if _PG:
    DATABASES["pg"] = _PG

SECRET_KEY = "sitemap-middleware-tests-only"
DEBUG = False
ALLOWED_HOSTS = ["example.com", "www.example.com", "127.0.0.1", "testserver"]
# Django's own sitemap views take the scheme from the request: the tests say https.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
INSTALLED_APPS = [
    "django.contrib.sites",
    "django.contrib.sitemaps",
    "tests.djangoproject.shop",
    "sitemap_middleware.django",
]
SITE_ID = 1
ROOT_URLCONF = "tests.djangoproject.urls"
#: The docs' settings example (the sitemaps: the dict the URLconf passes to Django).
SITEMAP_MIDDLEWARE = {"base_url": "https://example.com"}
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}]
MIDDLEWARE: list[str] = []
USE_TZ = True
TIME_ZONE = "UTC"
USE_I18N = True
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "German"), ("pt-br", "Brazilian Portuguese")]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
WSGI_APPLICATION = "tests.djangoproject.wsgi.application"
