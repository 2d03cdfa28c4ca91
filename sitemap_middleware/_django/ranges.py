"""A QuerySet's key ranges sized where its rows live (issue 23, item 6).

The SQL provider's grouped window query (``_providers/sql_aggregates.py``, its rules and
byte proof: ``_providers/ranges.py``) wrapped around the queryset's own ``values()`` SQL,
compiled by Django for its database and run on Django's connection: one result row per
range of a few hundred keys, no model instance, no value crosses into Python. SQLite
and PostgreSQL; the wrapper is written by SQLAlchemy (the ``django`` extra installs it).

Planned: a location template whose fields are bare (``"/tags/{code}/"``, lookups
included), each an integer or text field, and an integer or text key (their raw values
are what Django gives). Any other location (``get_absolute_url()``, a function,
``to_entry``) is counted, not sized (:func:`counted`): the engine sizes its pages from
sampled ranges (``_engine/range_plan.py``).

With ``version_field`` and an integer key, the next plan measures only the ranges holding
rows whose revision moved, through the SQL provider's own logic (``kept_or_measured`` in
``_providers/sql_ranges.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from .._providers.ranges import KeyRange, RangeStats
from .._providers.sql_ranges import KeptRanges, kept_or_measured, measured
from .orm import run_orm
from .times import naive_zone, zoned

if TYPE_CHECKING:
    from django.db.models import QuerySet

__all__ = ["QuerySetRanges", "counted"]

#: Django fields whose value is an integer, or a text, exactly as the database has it.
_INTEGERS = frozenset(
    (
        "AutoField",
        "BigAutoField",
        "SmallAutoField",
        "IntegerField",
        "BigIntegerField",
        "SmallIntegerField",
        "PositiveIntegerField",
        "PositiveBigIntegerField",
        "PositiveSmallIntegerField",
    )
)
_TEXTS = frozenset(("CharField", "SlugField", "TextField"))
_VENDORS = frozenset(("sqlite", "postgresql"))
#: The name the wrapper calls the queryset's rows by (its columns: ``sitemap_*``).
_SOURCE = "sitemap_django_rows"


class QuerySetRanges:
    """The grouped query of a queryset's key, location fields and lastmod."""

    def __init__(
        self,
        queryset: QuerySet[Any],
        key: str,
        fields: list[str],
        lastmod: str | None,
        samples: list[tuple[Any, int]],
        version_field: str | None = None,
    ) -> None:
        from django.db.models import F

        self._fields = fields  # in template order, a field used twice named twice
        names = list(dict.fromkeys(fields))
        self._alias = {name: f"sitemap_f{place}" for place, name in enumerate(names)}
        expressions = {"sitemap_k": F(key), **{self._alias[name]: F(name) for name in names}}
        if lastmod is not None:
            expressions["sitemap_m"] = F(lastmod)
        self._queryset = queryset.order_by().values(**expressions)
        #: Alias -> the field name (or lookup) it reads.
        self._names = {alias: str(expression.name) for alias, expression in expressions.items()}
        self._key = key
        self._lastmod = lastmod
        self._samples = samples
        self._date_only = False
        self._version_field = version_field
        #: The ranges of the last plan, at the revision read before them (version_field).
        self._kept: KeptRanges | None = None
        #: Per column of the wrapper: its kind and whether it may be NULL (None: not
        #: planned, a column of another type).
        self.types = self._types()

    async def stats(
        self,
        rows: int,
        rows_per_range: int,
        revision: Any = None,
        check: Callable[[], Awaitable[None]] | None = None,
    ) -> RangeStats:
        """The ranges of the queryset's ``rows`` rows and the samples to size them by
        (a big table in two halves at once, as the SQL provider's). With a version field
        ``rows`` and ``revision`` are read before the ranges: the kept ranges holding rows
        of a newer revision are measured again, the others kept. ``check`` runs when
        every range was measured and they do not add up to ``rows`` (a write since, or
        a kept row count that is wrong)."""
        types = self.types
        assert types is not None  # (checked when this was made)

        async def measure(after: Any, upto: Any) -> list[KeyRange]:
            return await run_orm(self.measure, types, rows_per_range, after, upto)

        async def measure_all() -> list[KeyRange]:
            found = await measured(measure, rows, lambda place: run_orm(self.key_at, place))
            if check is not None and sum(each.rows for each in found) != rows:
                await check()
            return found

        async def changed_since(since: Any, limit: int) -> list[Any]:
            return await run_orm(self.changed_keys, since, limit)

        keeps = self._version_field is not None and types["sitemap_k"][0] == "int"
        ranges, self._kept = await kept_or_measured(
            self._kept,
            rows_per_range,
            (rows, revision),
            changed_since if keeps else None,
            measure,
            measure_all,
        )
        return RangeStats(ranges, self._samples, sized=bool(self._fields))

    def _types(self) -> dict[str, tuple[str, bool]] | None:
        """Per column of the wrapper: "int", "str" or "date", and whether it may be NULL;
        None when a column is none of these (then only Python can size a row)."""
        from django.db import connections

        try:
            import sqlalchemy  # noqa: F401  (writes the wrapper)
        except ImportError:  # pragma: no cover - the django extra installs it
            return None
        connection = connections[self._queryset.db]
        if connection.vendor not in _VENDORS:
            return None
        annotations = self._queryset.query.annotations  # (the queryset's own ones too)
        out: dict[str, tuple[str, bool]] = {}
        for alias, name in self._names.items():
            expression = annotations[alias]
            field = expression.output_field
            kind = field.get_internal_type()
            converted = expression.get_db_converters(connection)
            if alias != "sitemap_m" and (converted or connection.ops.get_db_converters(expression)):
                return None  # (from_db_value): Django gives another value than the row's
            # A joined lookup (a LEFT JOIN) may be NULL whatever its field says.
            null = bool(getattr(field, "null", True)) or "__" in name
            if alias == "sitemap_m":
                self._date_only = kind == "DateField"
                out[alias] = ("date", null)
            elif kind in _INTEGERS:
                out[alias] = ("int", null)
            elif kind in _TEXTS:
                out[alias] = ("str", null)
            else:
                return None
        return out

    def measure(
        self,
        types: dict[str, tuple[str, bool]],
        rows_per_range: int,
        after: Any,
        upto: Any,
    ) -> list[KeyRange]:
        """The ranges of ``after < key <= upto`` (None: open), in key order: one query
        (runs in a worker thread, as every ORM call here does)."""
        from django.core.exceptions import EmptyResultSet
        from django.db import connections

        queryset = self._queryset
        if after is not None:
            queryset = queryset.filter(**{f"{self._key}__gt": after})
        if upto is not None:
            queryset = queryset.filter(**{f"{self._key}__lte": upto})
        connection = connections[queryset.db]
        try:
            inner, params = queryset.query.get_compiler(using=queryset.db).as_sql()
        except EmptyResultSet:  # (``pk__in=[]``, ``none()``: Django sends no query)
            return []
        outer = _wrapper(types, self._fields_aliases(), rows_per_range, connection.vendor)
        head, tail = outer.split(f"FROM {_SOURCE}", 1)
        sql = f"{head}FROM ({inner}) AS {_SOURCE}{tail}"
        with connection.cursor() as cursor:
            cursor.execute(sql, tuple(params))
            found = cursor.fetchall()
        return [
            KeyRange(first, last, int(rows), int(urls), int(plain), int(odd), self._newest(newest))
            for first, last, rows, urls, plain, odd, newest in found
        ]

    def _fields_aliases(self) -> list[str]:
        return [self._alias[name] for name in self._fields]

    def key_at(self, position: int) -> Any:
        """The key at ``position`` in key order (None past the end)."""
        keys = self._queryset.order_by(self._key).values_list(self._key, flat=True)
        found = list(keys[position : position + 1])
        return found[0] if found else None

    def changed_keys(self, revision: Any, limit: int) -> list[Any]:
        """At most ``limit`` keys (any order) of rows whose revision is above."""
        changed = self._queryset.filter(**{f"{self._version_field}__gt": revision})
        return list(changed.order_by().values_list(self._key, flat=True)[:limit])

    def _newest(self, value: Any) -> Any:
        """A range's newest lastmod as Django would give it (SQLite: text)."""
        if isinstance(value, str):
            from django.utils.dateparse import parse_date, parse_datetime

            parsed = parse_date(value) if self._date_only else parse_datetime(value)
            value = parsed if parsed is not None else value
        if isinstance(value, datetime | date):
            return zoned(value, naive_zone())
        return value


def _wrapper(
    types: dict[str, tuple[str, bool]], fields: list[str], rows_per_range: int, vendor: str
) -> str:
    """The grouped query over a table named :data:`_SOURCE`, as SQL in Django's
    ``%s`` style (values inlined: nothing of it is data)."""
    from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table
    from sqlalchemy.dialects import postgresql, sqlite

    from .._providers.sql_aggregates import range_stats_statement

    kinds = {"int": Integer, "str": String, "date": DateTime}
    table = Table(
        _SOURCE,
        MetaData(),
        *(Column(alias, kinds[kind], nullable=null) for alias, (kind, null) in types.items()),
    )
    statement = range_stats_statement(
        table.c.sitemap_k,
        [table.c[alias] for alias in fields],
        table.c.sitemap_m if "sitemap_m" in types else None,
        rows_per_range,
        vendor,
    )
    dialect = (sqlite if vendor == "sqlite" else postgresql).dialect(paramstyle="named")
    text = str(statement.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
    return text.replace("%", "%%")


def counted(
    queryset: QuerySet[Any], key: str, lastmod: str | None, version_field: str | None
) -> QuerySetRanges | None:
    """The ranges of a queryset whose entries Python builds: rows counted per range and
    their newest lastmod, no byte sized (None where the key or lastmod is not planned)."""
    ranges = QuerySetRanges(queryset, key, [], lastmod, [], version_field)
    return ranges if ranges.types is not None else None
