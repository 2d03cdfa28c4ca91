"""A QuerySet section's versions kept while nothing is committed (issue 23).

The rules are ``_providers/commits.py``'s, shared with the SQLAlchemy provider: SQLite's
``PRAGMA data_version`` on a connection of the provider's own (a file database), read
just before the aggregate; PostgreSQL's snapshot read in the aggregate's own statement
(:func:`beside`: an expression Django's ``aggregate()`` takes beside the aggregates).
Here, what only Django knows: the tables a QuerySet reads (its model's, its joins', its
subqueries'), and None, the rows read every time, for SQL it cannot see through
(``extra()``, ``RawSQL``); and the probing statements run on Django's connection of the
queryset's database, in a worker thread (:func:`.orm.run_orm`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._providers.commits import (
    DataVersion,
    KeptCommits,
    Signal,
    Snapshot,
    postgresql_snapshot_function,
    sqlite_path,
)
from .orm import run_orm

if TYPE_CHECKING:
    from django.db.models import QuerySet

__all__ = ["QuerySetCommits", "beside", "queryset_tables"]

#: The snapshot's columns after the function (see ``Snapshot``), as SQL.
_SERVER = ("pg_is_in_recovery()", "CAST(pg_postmaster_start_time() AS text)")


def beside(template: str, *expressions: Any, output_field: Any = None) -> Any:
    """``template`` over ``expressions`` (nothing of a row: a function of the server, a
    scalar subquery) as an expression Django's ``aggregate()`` reads in the same
    statement as the aggregates (it takes aggregates only). Text unless ``output_field``."""
    from django.db.models import Func, TextField

    class Beside(Func):  # type: ignore[misc]  # Django ships no type hints
        contains_aggregate = True

    made = output_field if output_field is not None else TextField()
    return Beside(*expressions, template=template, output_field=made)


def queryset_tables(queryset: QuerySet[Any]) -> list[tuple[str | None, str]] | None:
    """Every table the queryset reads, or None when it reads SQL Django cannot tell
    (``extra()``, ``RawSQL``, a function or lookup of the user's, a query Django refuses
    to compile) or the clock (``Now()``)."""
    from django.core.exceptions import EmptyResultSet

    query = queryset.query.chain()
    try:
        query.get_compiler(using=queryset.db).as_sql()  # (sets up its joins)
    except EmptyResultSet:
        return None
    tables = _query_tables(query)
    return None if tables is None else [(None, name) for name in dict.fromkeys(tables)]


def _query_tables(query: Any) -> list[str] | None:
    from django.db.models.sql.datastructures import BaseTable, Join

    if query.extra or query.extra_tables:
        return None
    tables = [query.get_meta().db_table]
    nodes = [query.where, *query.annotations.values(), *getattr(query, "combined_queries", ())]
    for each in query.alias_map.values():
        if not isinstance(each, BaseTable | Join):
            return None  # (a table of another kind: SQL of its own)
        tables.append(each.table_name)
        if getattr(each, "filtered_relation", None) is not None:  # its ON condition
            nodes.append(each.filtered_relation.condition)
    for node in nodes:
        found = _expression_tables(node)
        if found is None:
            return None
        tables.extend(found)
    return tables


def _expression_tables(node: Any) -> list[str] | None:
    """The tables the subqueries of an expression (or where clause) read; None for SQL
    of the user's own."""
    from django.db.models import Q
    from django.db.models.expressions import BaseExpression, RawSQL
    from django.db.models.lookups import Lookup
    from django.db.models.sql import Query
    from django.db.models.sql.where import ExtraWhere, WhereNode

    if isinstance(node, Query):
        return _query_tables(node)
    if isinstance(node, RawSQL | ExtraWhere) or not _seen_through(node):
        return None
    if isinstance(node, WhereNode | Q):  # (a Q: a FilteredRelation's condition)
        children: Sequence[Any] = node.children
    elif isinstance(node, Lookup):
        children = [node.lhs, node.rhs]
    elif isinstance(node, BaseExpression):
        children = [getattr(node, "query", None), *node.get_source_expressions()]
    elif isinstance(node, list | tuple):
        children = node
    else:
        return []  # a plain value
    tables: list[str] = []
    for child in children:
        found = _expression_tables(child)
        if found is None:
            return None
        tables.extend(found)
    return tables


def _seen_through(node: Any) -> bool:
    """False for SQL whose rows move with no commit: the clock (``Now()``, scheduled
    publishing), ``Random()``, and SQL the user wrote (``Func(function=...)``, an
    expression or lookup class Django does not ship)."""
    from django.db.models import Func
    from django.db.models.expressions import BaseExpression
    from django.db.models.functions import Now, Random
    from django.db.models.lookups import Lookup

    if not isinstance(node, BaseExpression | Lookup):
        return True
    if isinstance(node, Now | Random):
        return False
    if isinstance(node, Func) and ({"function", "template"} & set(node.extra)):
        return False
    return type(node).__module__.startswith("django.")


def _rows(alias: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    from django.db import connections

    with connections[alias].cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


class QuerySetCommits(KeptCommits):
    """Answers kept with the commit signal they were read at (``_providers/commits.py``)."""

    def __init__(self, queryset: QuerySet[Any]) -> None:
        super().__init__()
        self._queryset = queryset

    async def _run(self, sql: str, params: tuple[Any, ...]) -> Sequence[Sequence[Any]]:
        return await run_orm(_rows, self._queryset.db, sql, params)

    def _passing(self, exc: Exception) -> bool:
        from django.db import DatabaseError, InterfaceError, OperationalError

        if not isinstance(exc, DatabaseError):
            raise exc
        return isinstance(exc, OperationalError | InterfaceError)

    async def _probe(self) -> Signal | None:
        from django.db import connections

        tables = await run_orm(queryset_tables, self._queryset)  # (may ask the server)
        if not tables:
            return None
        vendor = connections[self._queryset.db].vendor
        if vendor == "sqlite":
            path = await sqlite_path(self._run, tables)
            return None if path is None else DataVersion(path)
        if vendor != "postgresql":
            return None
        function = await postgresql_snapshot_function(self._run, tables)
        if function is None:
            return None
        sql = (f"CAST({function}() AS text)", *_SERVER)
        from django.db.models import BooleanField

        columns = (beside(sql[0]), beside(sql[1], output_field=BooleanField()), beside(sql[2]))
        select = f"SELECT {', '.join(sql)}"
        await self._run(select, ())  # (raises where refused)
        return Snapshot(columns, lambda: self._first(select))

    async def _first(self, sql: str) -> Sequence[Any]:
        return (await self._run(sql, ()))[0]
