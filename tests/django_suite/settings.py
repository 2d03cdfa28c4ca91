"""Settings of Django's ``runtests.py`` with the middleware answering the sitemap views.

``runtests.py`` itself sets ``INSTALLED_APPS``, ``ROOT_URLCONF`` and the templates; this
module gives it the databases (SQLite in memory, as Django's ``test_sqlite``, or the
PostgreSQL server of ``SITEMAP_TEST_POSTGRES_URL`` when ``SITEMAP_DJANGO_SUITE_DB`` is
``postgres``) and installs :mod:`tests.django_suite.harness`.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from tests.django_suite.harness import install


def _databases() -> dict[str, Any]:
    url = os.environ.get("SITEMAP_TEST_POSTGRES_URL")
    if os.environ.get("SITEMAP_DJANGO_SUITE_DB") != "postgres" or not url:
        return {
            "default": {"ENGINE": "django.db.backends.sqlite3"},
            "other": {"ENGINE": "django.db.backends.sqlite3"},
        }
    parts = urlsplit(url)  # postgresql+asyncpg://user@host:port/name (the CI's SQLAlchemy URL)
    server = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/") or "postgres",
        "USER": parts.username or "postgres",
        "PASSWORD": parts.password or "",
        "HOST": parts.hostname or "127.0.0.1",
        "PORT": str(parts.port or 5432),
    }
    run = os.getpid()  # test databases of their own: other runs may share the server
    return {
        alias: {**server, "TEST": {"NAME": f"test_sitemaps_suite_{alias}_{run}"}}
        for alias in ("default", "other")
    }


DATABASES = _databases()
SECRET_KEY = "django_tests_secret_key"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = False
if os.environ.get("SITEMAP_DJANGO_SUITE_DJANGO_SETTINGS"):
    # Under USE_TZ=False a naive datetime is a wall-clock time in TIME_ZONE, as Django
    # stores it, and the middleware reads it so; Django's sitemap view alone takes it as
    # UTC. In UTC the two readings agree, so the settings pass shows what the settings
    # undo and nothing else (docs, *Differences from django.contrib.sitemaps*).
    TIME_ZONE = "UTC"

install()
