"""The SQLAlchemy provider's versions kept while nothing is committed.

The rules (SQLite ``data_version``, PostgreSQL's snapshot, when it falls back) are
``commits.py``'s; here, the tables a ``Table`` or ``select()`` reads (None for a textual
clause, and for a function that is not known to give the same answer for the same rows:
``now()``, ``random()``, ``datetime('now')``, a function of the user's, which may read
anything) and statements run through the provider's engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Text, bindparam, cast, func, select, text
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.sql import visitors
from sqlalchemy.sql.elements import BindParameter, TextClause
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.sql.selectable import TableClause

from .commits import (
    DataVersion,
    KeptCommits,
    Signal,
    Snapshot,
    postgresql_snapshot_function,
    sqlite_path,
)
from .sql_runner import StatementRunner

__all__ = ["Commits"]


#: Functions that give the same answer for the same rows (SQL's and SQLite's and
#: PostgreSQL's text, number, date and aggregate functions); any other may read the
#: clock, chance or other data, which no commit moves.
STABLE_FUNCTIONS = frozenset(
    [
        "lower",
        "upper",
        "coalesce",
        "concat",
        "concat_ws",
        "substr",
        "substring",
        "replace",
        "trim",
        "ltrim",
        "rtrim",
        "btrim",
        "length",
        "char_length",
        "character_length",
        "octet_length",
        "abs",
        "round",
        "floor",
        "ceil",
        "ceiling",
        "nullif",
        "ifnull",
        "printf",
        "format",
        "lpad",
        "rpad",
        "left",
        "right",
        "strpos",
        "instr",
        "split_part",
        "regexp_replace",
        "md5",
        "count",
        "max",
        "min",
        "sum",
        "avg",
        "total",
        "greatest",
        "least",
        "date",
        "datetime",
        "strftime",
        "julianday",
        "unixepoch",
        "time",
        "date_trunc",
        "date_part",
        "to_char",
        "row_number",
        "rank",
        "dense_rank",
        "lag",
        "lead",
        "first_value",
        "last_value",
        "cast",
        "hashtextextended",
        "crc32",
    ]
)


def _tables(source: Any) -> list[TableClause] | None:
    """The tables a source reads; None when it cannot be told (a textual clause, a
    function not known to be stable, or one asked for ``'now'``)."""
    tables: list[TableClause] = []
    for element in visitors.iterate(source):
        if isinstance(element, TextClause):
            return None
        if isinstance(element, FunctionElement):
            name = str(getattr(element, "name", "")).lower()
            if name not in STABLE_FUNCTIONS or any(
                isinstance(each, BindParameter) and str(each.value).lower() == "now"
                for each in visitors.iterate(element)
            ):
                return None
        if isinstance(element, TableClause):
            tables.append(element)
    return tables


class Commits(KeptCommits):
    """Answers kept with the commit signal they were read at (see ``commits.py``)."""

    def __init__(self, runner: StatementRunner, dialect: str, source: Any) -> None:
        super().__init__()
        self._runner = runner
        self._dialect = dialect
        self._source = source

    async def _run(self, sql: str, params: tuple[Any, ...]) -> Sequence[Sequence[Any]]:
        names = [f"p{place}" for place in range(len(params))]
        for name in names:
            sql = sql.replace("%s", f":{name}", 1)
        statement = text(sql).bindparams(
            *(bindparam(name, value, type_=Text) for name, value in zip(names, params, strict=True))
        )
        return await self._runner.all(statement)

    def _passing(self, exc: Exception) -> bool:
        if not isinstance(exc, DBAPIError):
            raise exc
        return isinstance(exc, OperationalError | InterfaceError)

    async def _probe(self) -> Signal | None:
        found = _tables(self._source)
        if not found:
            return None
        tables = [(getattr(each, "schema", None), each.name) for each in found]
        if self._dialect == "sqlite":
            path = await sqlite_path(self._run, tables)
            return None if path is None else DataVersion(path)
        if self._dialect == "postgresql":
            function = await postgresql_snapshot_function(self._run, tables)
            if function is None:
                return None
            columns = (
                cast(getattr(func, function)(), Text),
                func.pg_is_in_recovery(),
                cast(func.pg_postmaster_start_time(), Text),
            )
            signal = Snapshot(columns, lambda: self._first(select(*columns)))
            await self._runner.all(select(*columns))  # (raises where refused)
            return signal
        return None

    async def _first(self, statement: Any) -> Sequence[Any]:
        return (await self._runner.all(statement))[0]  # type: ignore[no-any-return]
