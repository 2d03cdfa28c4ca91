"""The Django tests serve one Django project per test process.

Django's settings are per process, so the ``django_project`` fixture (tests/conftest.py)
configures them once (SQLite in a temporary folder, plus PostgreSQL when CI starts one);
the real-server tests (tests/integration/test_django_servers.py) start gunicorn/uvicorn
subprocesses on the same databases.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

import pytest

from tests.harness.django import write_tags


@pytest.fixture
def tags() -> Iterator[Callable[..., None]]:
    """``write(rows, alias="default")``; every Tag written is removed afterwards."""
    written: set[str] = set()

    def write(rows: list[tuple[str | None, datetime | None]], alias: str = "default") -> None:
        written.add(alias)
        write_tags(alias, rows)

    yield write
    for alias in written:
        write_tags(alias, [])
