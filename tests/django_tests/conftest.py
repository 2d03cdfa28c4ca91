"""One Django project per test run: settings, migrated and seeded databases.

Django's settings are per process, so this package configures them once (SQLite in a
temporary folder, plus PostgreSQL when CI starts one) and the real-server tests start
gunicorn/uvicorn subprocesses on the same databases.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

SETTINGS = "tests.djangoproject.settings"


@pytest.fixture(scope="session")
def django_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Django set up on a fresh SQLite file (and PostgreSQL if available), seeded.

    Yields the environment a server subprocess needs to serve the same databases.
    """
    import django
    from django.conf import settings

    if settings.configured and os.environ.get("DJANGO_SETTINGS_MODULE") != SETTINGS:
        pytest.fail(
            "Django settings were configured by another test first; run tests/django_tests alone"
        )
    path = Path(tmp_path_factory.mktemp("django")) / "db.sqlite3"
    os.environ["SITEMAP_DJANGO_DB"] = str(path)
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
    django.setup()
    from tests.djangoproject.data import seed

    seed("default")
    if "pg" in settings.DATABASES:
        seed("pg")
    yield {"DJANGO_SETTINGS_MODULE": SETTINGS, "SITEMAP_DJANGO_DB": str(path)}
    from django.db import connections

    connections.close_all()


def postgres_available() -> bool:
    return bool(os.environ.get("SITEMAP_TEST_POSTGRES_URL"))
