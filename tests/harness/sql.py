"""SQL test helpers: the database a test runs on, what SQL its code runs, what it logs."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

POSTGRES_ENV = "SITEMAP_TEST_POSTGRES_URL"


def database_url(kind: str, folder: Path, name: str = "test") -> str:
    """An async URL: a SQLite file ``name`` in ``folder``, or the PostgreSQL server of
    ``SITEMAP_TEST_POSTGRES_URL`` (the test skipped, saying why, when it is unset)."""
    if kind == "sqlite":
        return f"sqlite+aiosqlite:///{folder / f'{name}.sqlite3'}"
    url = os.environ.get(POSTGRES_ENV, "")
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server (.ci/run starts one)")
    return url


class Outgrown(logging.Handler):
    """Counts the warnings about key ranges that outgrew their page since the index."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "outgrew" in record.getMessage()


_T = TypeVar("_T")


@contextmanager
def recorded_statements(engine: Any) -> Iterator[list[str]]:
    """The SQL statements a SQLAlchemy engine runs inside the block, spaces folded."""
    from sqlalchemy import event

    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(" ".join(statement.split()))

    sync_engine = getattr(engine, "sync_engine", engine)
    event.listen(sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(sync_engine, "before_cursor_execute", record)


def row_by_row(base: type[_T]) -> type[_T]:
    """``base`` (a keyset provider class) planned as if its database could not help:
    every row measured in Python (the reference plans from the database are held to)."""

    class RowByRow(base):  # type: ignore[valid-type,misc]  # (a class made at run time)
        async def range_stats(self, rows_per_range: int) -> None:
            return None

    return RowByRow
