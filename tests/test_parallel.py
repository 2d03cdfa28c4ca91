"""Each pytest-xdist worker has a PostgreSQL database and a Redis DB of its own."""

from __future__ import annotations

import os

import pytest

from tests import parallel


def test_worker_urls_name_their_own_database_and_redis_db() -> None:
    base = "postgresql+asyncpg://postgres:pw@127.0.0.1:5433/postgres?ssl=disable"
    assert parallel.postgres_url(base, "gw1") == (
        "postgresql+asyncpg://postgres:pw@127.0.0.1:5433/postgres_gw1?ssl=disable"
    )
    assert parallel.postgres_url("postgresql://h:1", "gw0") == "postgresql://h:1/postgres_gw0"
    assert parallel.redis_url("redis://127.0.0.1:6379/0", "gw0") == "redis://127.0.0.1:6379/0"
    assert parallel.redis_url("redis://127.0.0.1:6379/3", "gw2") == "redis://127.0.0.1:6379/5"
    assert parallel.redis_url("redis://127.0.0.1:6379", "gw1") == "redis://127.0.0.1:6379/1"


def test_this_worker_uses_its_own_services() -> None:
    """Under xdist the environment this process (and what it starts) reads is its own."""
    name = parallel.worker()
    if name is None:
        pytest.skip("not an xdist worker (scripts/test runs pytest -n)")
    postgres = os.environ.get(parallel.POSTGRES_ENV)
    if not postgres:
        pytest.skip(f"{parallel.POSTGRES_ENV} is not set (scripts/test starts PostgreSQL)")
    assert postgres.split("?")[0].endswith(f"_{name}")
