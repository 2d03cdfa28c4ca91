"""Settings of the example shop: the Sites framework, flat pages, three languages.

``DJANGO_SHOP_DB`` is the SQLite file (``db.sqlite3`` beside ``manage.py`` unless set).
"""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "django-insecure-example-shop-only")
DEBUG = os.environ.get("DJANGO_DEBUG") == "1"
# example.com is the Site's domain (manage.py seed_shop): the sitemaps list its URLs.
ALLOWED_HOSTS = ["example.com", "localhost", "127.0.0.1"]
# Behind a TLS-terminating proxy: Django's own views take the scheme from the request.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.flatpages",
    "django.contrib.sitemaps",
    "shop",
    "sitemap_middleware.django",  # manage.py check (SITEMAP_MIDDLEWARE) and manage.py sitemap
]
SITE_ID = 1

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "mysite.urls"
WSGI_APPLICATION = "mysite.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("DJANGO_SHOP_DB") or str(BASE_DIR / "db.sqlite3"),
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

USE_I18N = True
USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]

STATIC_URL = "static/"

#: What wsgi.py passes too: manage.py check compares it with ALLOWED_HOSTS (W001), and
#: manage.py sitemap runs on WSGI_APPLICATION, the middleware wsgi.py builds.
SITEMAP_MIDDLEWARE = {"base_url": "https://example.com"}
