"""The Django tests serve one Django project per test process.

Django's settings are per process, so the ``django_project`` fixture (tests/conftest.py)
configures them once (SQLite in a temporary folder, plus PostgreSQL when CI starts one)
and the real-server tests start gunicorn/uvicorn subprocesses on the same databases.
"""

from __future__ import annotations

import os


def postgres_available() -> bool:
    return bool(os.environ.get("SITEMAP_TEST_POSTGRES_URL"))
