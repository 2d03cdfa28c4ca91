"""Each pytest-xdist worker gets services of its own: a PostgreSQL database and a Redis DB.

Tests, and the servers and Django runs they start as subprocesses, find the services in
``SITEMAP_TEST_POSTGRES_URL`` and ``SITEMAP_TEST_REDIS_URL``. A worker rewrites both in its
own environment before collecting (tests/conftest.py), so whatever it starts inherits them:
fixed table names, seeded Django databases and default key prefixes never meet another
worker's. Without xdist (``PYTEST_XDIST_WORKER`` unset) nothing changes.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

POSTGRES_ENV = "SITEMAP_TEST_POSTGRES_URL"
REDIS_ENV = "SITEMAP_TEST_REDIS_URL"


def worker() -> str | None:
    """This process's xdist worker id (``gw0``, ``gw1``, ...), or None outside xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER") or None


def postgres_url(url: str, worker: str) -> str:
    """The URL of ``worker``'s database: the given one's name plus ``_gw0``, ``_gw1``..."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/") or "postgres"
    return urlunsplit(parts._replace(path=f"/{name}_{worker}"))


def redis_url(url: str, worker: str) -> str:
    """The URL of ``worker``'s Redis DB: the given DB number plus the worker's index."""
    parts = urlsplit(url)
    base = int(parts.path.lstrip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{base + int(worker.removeprefix('gw'))}"))


def _admin(url: str, statements: list[str]) -> None:
    """Run ``statements`` on the server of ``url`` (connected to its database, autocommit)."""
    import psycopg

    parts = urlsplit(url)
    with psycopg.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 5432,
        user=parts.username or "postgres",
        password=parts.password or None,
        dbname=parts.path.lstrip("/") or "postgres",
        autocommit=True,
    ) as conn:
        for statement in statements:
            conn.execute(statement.encode())


def _drop(name: str) -> str:
    return f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'


def isolate() -> None:
    """Point this worker's environment at a fresh database and a Redis DB of its own."""
    name = worker()
    if name is None:
        return
    url = os.environ.get(POSTGRES_ENV)
    if url:
        own = postgres_url(url, name)
        database = urlsplit(own).path.lstrip("/")
        # template0: CREATE DATABASE from template1 fails while anyone is connected to it.
        _admin(url, [_drop(database), f'CREATE DATABASE "{database}" TEMPLATE template0'])
        os.environ[POSTGRES_ENV] = own
        os.environ["SITEMAP_TEST_POSTGRES_ADMIN_URL"] = url
    url = os.environ.get(REDIS_ENV)
    if url:
        os.environ[REDIS_ENV] = redis_url(url, name)


def release() -> None:
    """Drop this worker's database (a rerun makes a fresh one anyway)."""
    admin = os.environ.pop("SITEMAP_TEST_POSTGRES_ADMIN_URL", None)
    own = os.environ.get(POSTGRES_ENV)
    if admin and own:
        os.environ[POSTGRES_ENV] = admin
        _admin(admin, [_drop(urlsplit(own).path.lstrip("/"))])
