"""SQLAlchemy provider: keyset pages, cheap counts, honest versions from the table.

Needs the ``sql`` extra (``sqlalchemy[asyncio]`` plus a driver such as aiosqlite or
asyncpg). Works with an ``AsyncEngine`` directly and with a sync ``Engine`` through a
worker thread.

The version token must change whenever any URL could: a count plus ``max(key)`` plus
``max(lastmod)`` misses renames, a delete plus an insert at a lower key and updates that
keep their lastmod. So by default it is an order-independent checksum computed in SQL:
the sum of a per-row hash over the key and every selected column (``hashtextextended`` on
PostgreSQL, ``crc32`` on MySQL/MariaDB, a deterministic ``crc32`` function registered on
each SQLite connection). It reads every row, once per ``metadata_ttl``. A table
that keeps a revision column bumped from one sequence on every insert and update can
name it as ``version_column`` instead: then the token is the row count and
``max(revision)`` (an index lookup). Either way, while nothing at all was committed to
the database since a version was read (SQLite ``PRAGMA data_version``, PostgreSQL's
snapshot), that version is reused without the aggregate; ``sql_commits.py`` says when
that holds. ``to_entry`` and location-function sections are planned from row counts
(``range_stats``: unsized ranges, see ``_engine/range_plan.py``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import date, datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import (
    Engine,
    Select,
    Table,
    func,
    select,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ColumnElement

from .._exceptions import ConfigurationError
from .._sansio.models import Mapped
from .base import EntryLike, ProviderVersion
from .checksum import ChecksumHint
from .columns import Location, RowEntries
from .identity import function_identity
from .ranges import KeyRange, RangeStats
from .shared_query import SharedQueries, SharedQuery
from .sql_aggregates import checksum_sum, range_stats_statement, register_sqlite_checksum
from .sql_arguments import (
    check_columns,
    check_engine,
    check_entry_mode,
    check_row_count,
    source_rows,
)
from .sql_commits import Commits
from .sql_keys import key_bounds, key_problem, python_type, unique_by_schema
from .sql_ranges import KeptRanges, MeasureKeys, kept_or_measured, measured
from .sql_reads import NewestReader, cannot_read, raw, reader, rows_apart
from .sql_row_count import KeptCount
from .sql_runner import StatementRunner

__all__ = ["SQLAlchemyProvider"]


class SQLAlchemyProvider:
    """Entries from a table or a ``select()``, one row per URL.

    :param engine: an ``AsyncEngine`` or a sync ``Engine``.
    :param source: a ``Table`` or a ``Select``: one row per URL.
    :param key: name of a unique, non-NULL, sortable column (usually the primary key).
        Pages are key ranges recorded in the page plan (``WHERE key > :after AND key <=
        :upto``), never growing ``OFFSET``s, so a row keeps its page while others are
        inserted or deleted. Uniqueness and NULLs are checked with every version and
        while reading; a violation is a :class:`ConfigurationError` naming the column.
    :param location: the column mode (instead of ``to_entry``): each URL from a column
        of the source (``"path"``, e.g. computed in the ``select()``), a template of
        columns (``"/products/{slug}"``) or a function of the row. With ``lastmod``,
        ``changefreq`` and ``priority`` it builds the entries a batch at a time, no
        object and no call per row: the fast way to serve big tables. A row whose
        location reads a NULL, or whose function raises, is left out and logged.
    :param changefreq: with ``location``: a changefreq word for every URL.
    :param priority: with ``location``: a priority for every URL, 0.0 to 1.0.
    :param to_entry: maps a row to a ``SitemapEntry``, a URL string or a mapping. The
        middleware calls it row by row: a row it fails on is left out and logged with
        the row, the rest of the page is served.
    :param lastmod: name of a datetime column: ``Last-Modified`` and the index's page
        ``<lastmod>`` (through the plan), and with ``location`` each URL's ``<lastmod>``.
    :param checksum_columns: columns the version checksum covers (default: with a location
        template or column, the columns it and ``lastmod`` read; else every column of the
        source, which is what ``to_entry`` or a location function can read).
    :param version_column: a revision column bumped from one sequence on every insert
        and update; replaces the checksum with ``count(*)`` and its maximum.
    :param row_count: with ``version_column``: a ``select()`` of one value, the source's
        row count kept where it is cheap to read (a counter a trigger keeps); it replaces
        the ``count(*)`` scan in the section's version. Compared with ``count(*)`` in one
        statement once a minute and when a whole plan does not add up to it: a count
        that disagrees (or reads NULL) is logged and ``count(*)`` used from then on (see
        ``sql_row_count.py``). The key must be unique by the schema.
    :param batch_size: rows fetched per query while streaming.
    :param metadata_ttl: seconds a count/version answer is reused. One request asks for
        both; with the checksum each reads the whole table.

    Past ``metadata_ttl``, a version (the section's, or a key-range page's) is reused
    without its aggregate when nothing was committed to the database since it was read:
    on SQLite a file database (``PRAGMA data_version`` on a connection of the provider's
    own; every write counts, through this engine or not), on PostgreSQL 13+ (earlier:
    ``txid_current_snapshot``) a primary (an unchanged snapshot: no transaction ended
    anywhere on the server). The source must read tables of that database only: a view,
    a foreign or virtual table, another schema of SQLite (an attached database), a
    textual ``FROM``, SQLite in memory or a hot standby read the rows every time.
    A commit to any table of the database (any database of the PostgreSQL server) ends
    the reuse, so it saves most on databases that are written to now and then.
    """

    def __init__(
        self,
        engine: AsyncEngine | Engine,
        source: Table | Select[Any],
        *,
        key: str,
        to_entry: Callable[[Any], EntryLike | None] | None = None,
        location: Location | None = None,
        changefreq: str | None = None,
        priority: float | None = None,
        lastmod: str | None = None,
        checksum_columns: Sequence[str] | None = None,
        version_column: str | None = None,
        row_count: Select[Any] | None = None,
        batch_size: int = 10_000,
        metadata_ttl: float = 1.0,
    ) -> None:
        check_engine(engine)
        self._engine = engine
        self._sub = source_rows(source)
        check_columns(self._sub, key, lastmod, version_column, checksum_columns)
        self._key_name = key
        #: Unique by the schema: no count of distinct keys with every version.
        self._unique = unique_by_schema(source, self._sub.c[key])
        check_row_count(row_count, version_column, self._unique)
        self._kept_count = KeptCount(row_count)
        self._int_key = python_type(self._sub.c[key]) is int  # Python orders it as SQL does
        self._key: ColumnElement[Any] = self._sub.c[key]
        self._lastmod: ColumnElement[Any] | None = self._sub.c[lastmod] if lastmod else None
        self._lastmod_key = lastmod
        self._version_column = self._sub.c[version_column] if version_column else None
        check_entry_mode(to_entry, location, changefreq, priority)
        self._to_entry = to_entry
        self._columns = (
            None
            if location is None
            else RowEntries(
                self._sub.c.keys(),
                location,
                key=key,
                lastmod=lastmod,
                changefreq=changefreq,
                priority=priority,
            )
        )
        #: Other settings over the same rows write other bytes: part of every version.
        made = self._columns.settings if self._columns else function_identity(to_entry)
        self._settings_tag = hashlib.sha256(made.encode()).hexdigest()[:16]
        #: In the column mode (not a function): what is selected, one list per name.
        self._read_columns = list(
            dict.fromkeys(
                [
                    key,
                    *(self._columns.reads if self._columns else ()),
                    *([lastmod] if lastmod else []),
                ]
            )
        )
        self._key_place = list(self._sub.c.keys()).index(key)  # select(sub) rows: by place
        # Templates and columns read only these: a change elsewhere writes the same bytes.
        plain = self._columns is not None and not self._columns.needs_rows
        names = list(checksum_columns or (self._read_columns if plain else self._sub.c.keys()))
        if key not in names:
            names.insert(0, key)
        self._checksum_columns = [self._sub.c[name] for name in names]
        self._batch = batch_size
        self._metadata_ttl = metadata_ttl
        self._metadata: SharedQuery[tuple[int, ProviderVersion, Any]] = SharedQuery(metadata_ttl)
        #: The ranges of the last plan, with a revision column (see sql_ranges.py).
        self._kept_ranges: KeptRanges | None = None
        #: Key range -> its shared version query (see range_version), the newest last.
        self._ranges: SharedQueries[tuple[int, ProviderVersion]] = SharedQueries(metadata_ttl)
        self._runner = StatementRunner(engine)
        self._dialect = engine.dialect.name
        #: A lastmod aggregate as its column's type reads it, leniently (see sql_reads.py).
        self._read_lastmod = reader(getattr(self._lastmod, "type", None), engine.dialect)
        self._newest = NewestReader(lastmod, self._read_lastmod)
        self._texts_as_bytes = False  # (SQLite's checksum, once a text was no UTF-8)
        #: Versions kept while nothing is committed (see sql_commits.py).
        self._commits = Commits(self._runner, self._dialect, source)
        self._hint = ChecksumHint("SQLAlchemyProvider", source, version_column, engine)
        if self._version_column is None and self._dialect == "sqlite":
            register_sqlite_checksum(engine)
        elif self._version_column is None and self._dialect not in ("postgresql", "mysql"):
            raise ConfigurationError(
                f"no row checksum for the {self._dialect!r} dialect: pass version_column="
                "(a revision bumped from one sequence on every insert and update)"
            )

    async def _all(self, statement: Any, by_column: Sequence[str] = ()) -> Sequence[Any]:
        return await self._runner.all(statement, by_column)

    def _key_error(self, problem: str) -> ConfigurationError:
        return ConfigurationError(
            f"key column {self._key_name!r} {problem}: pages are key ranges, so the key "
            "must be unique and never NULL (use the primary key)"
        )

    async def keyed(self, after: Any, upto: Any) -> AsyncIterator[tuple[Any, EntryLike]]:
        """``(key, row)`` pairs in key order for ``after < key <= upto`` (None: open)."""
        async for keys, items in self.keyed_batches(after, upto):
            for pair in zip(keys, items, strict=True):
                yield pair

    async def keyed_batches(
        self, after: Any, upto: Any
    ) -> AsyncIterator[tuple[list[Any], list[EntryLike]]]:
        """:meth:`keyed`, one query's keys and items at a time."""
        bounds = self._bounds(after, upto)
        if bounds is None:
            return  # a range the key column cannot hold (any client can name ranges)
        after, upto = bounds
        if after is None and upto is None:  # the whole section (a plan): check row_count
            await self._kept_count.check(self._all, self._sub)
        last = after
        columns = self._columns
        by_column = [] if columns is None or columns.needs_rows else self._read_columns
        source = select(*(self._sub.c[name] for name in by_column)) if by_column else None
        while True:
            statement = (select(self._sub) if source is None else source).order_by(self._key)
            statement = statement.limit(self._batch)
            if last is not None:
                statement = statement.where(self._key > last)
            if upto is not None:
                statement = statement.where(self._key <= upto)
            try:
                keys, items = self._items(await self._all(statement, by_column), by_column)
                listed = keys
            except Exception as exc:
                if not cannot_read(exc):
                    raise
                keys, items, listed = await rows_apart(
                    self._all, self._key, statement, by_column, self._items
                )
            if keys:
                self._check_keys(keys, last)
                yield keys, items
            if len(listed) < self._batch:
                return
            last = listed[-1]

    def _items(self, read: Sequence[Any], by_column: list[str]) -> tuple[list[Any], list[Any]]:
        """A batch's keys and items, from its columns (``by_column``) or its rows."""
        if by_column:
            values = dict(zip(by_column, read, strict=True))
            return values[self._key_name], self._columns.entries(values)  # type: ignore[union-attr]
        return list(map(itemgetter(self._key_place), read)), self._entries(read)

    def _bounds(self, after: Any, upto: Any) -> tuple[Any, Any] | None:
        return key_bounds(self._key, self._dialect, after, upto)

    def _check_keys(self, keys: list[Any], last: Any) -> None:
        problem = key_problem(keys, last)
        if problem:
            raise self._key_error(problem)

    def _entries(self, rows: Sequence[Any]) -> list[Any]:
        """A batch's items from its rows: for ``to_entry``, or a location function."""
        if self._columns is not None:
            place = self._sub.c.keys().index
            values = {name: list(map(itemgetter(place(name)), rows)) for name in self._read_columns}
            return self._columns.entries(values, rows)
        to_entry = self._to_entry
        return [Mapped(to_entry, row, "to_entry") for row in rows]  # type: ignore[arg-type]

    async def entries(self) -> AsyncIterator[EntryLike]:
        async for _, item in self.keyed(None, None):
            yield item  # a Mapped row, resolved by the middleware

    async def count(self) -> int:
        return (await self._summary())[0]

    async def version(self) -> ProviderVersion:
        return (await self._summary())[1]

    async def range_stats(self, rows_per_range: int) -> RangeStats | None:
        """The section's key ranges from one grouped query (see ``ranges.py``): sized
        where the location is plain columns, else (``to_entry``, a location function, a
        field with a format of its own) unsized; None for a lastmod that is no date."""
        if self._lastmod is not None and python_type(self._lastmod) not in (datetime, date):
            return None  # the greatest text is not the latest instant ('23:00-05:00')
        fields = self._columns.bare_fields() if self._columns is not None else None
        if fields and any(python_type(self._sub.c[name]) not in (int, str) for name in fields):
            fields = None
        columns = [self._sub.c[name] for name in fields or ()]

        async def measure(after: Any, upto: Any) -> list[KeyRange]:
            statement = range_stats_statement(
                self._key, columns, self._lastmod, rows_per_range, self._dialect, after, upto
            )
            read = self._read_lastmod
            return [
                KeyRange(first, last, rows, urls, plain, odd, read(newest))
                for first, last, rows, urls, plain, odd, newest in await self._all(statement)
            ]

        ranges = await self._kept_or_measured(rows_per_range, measure)
        if not fields or self._columns is None:
            return RangeStats(ranges, (), sized=False)  # rows counted: Python builds them
        return RangeStats(ranges, self._columns.samples(len(fields)))

    async def _kept_or_measured(self, rows_per_range: int, measure: MeasureKeys) -> list[KeyRange]:
        """Every range measured, or with a revision column the kept ranges with those
        holding changed rows measured again (see ``sql_ranges.py``)."""
        if self._version_column is None:
            checked = self._metadata.latest()  # this request's version check (a full read)
            return await self._measure_all(measure, checked[0] if checked else 0)
        rows, _, revision = await self._summary()  # read before the ranges: never newer
        version_column = self._version_column

        async def changed_since(since: Any, limit: int) -> list[Any]:
            statement = select(self._key).where(version_column > since).limit(limit)
            return [row[0] for row in await self._all(statement)]

        ranges, self._kept_ranges = await kept_or_measured(
            self._kept_ranges,
            rows_per_range,
            (rows, revision),
            changed_since if self._int_key else None,
            measure,
            lambda: self._measure_all(measure, rows),
        )
        return ranges

    async def _measure_all(self, measure: MeasureKeys, rows: int) -> list[KeyRange]:
        async def key_at(position: int) -> Any:
            statement = select(self._key).order_by(self._key).offset(position).limit(1)
            found = await self._all(statement)
            return found[0][0] if found else None

        ranges = await measured(measure, rows, key_at)
        if sum(each.rows for each in ranges) != rows:  # a write since, or a wrong row_count
            await self._kept_count.check(self._all, self._sub)
        return ranges

    def forget(self) -> None:
        """Forget the counts and versions kept for ``metadata_ttl``: the next request
        asks the database (after a write, to serve it at once)."""
        self._metadata.clear()
        self._ranges.clear()
        self._commits.clear()

    async def range_version(self, after: Any, upto: Any) -> tuple[int, ProviderVersion]:
        """Rows and version of the key range ``after < key <= upto`` alone: what a
        key-range page is validated by, at the cost of its own rows. Kept
        ``metadata_ttl`` and shared by concurrent callers, per range."""
        bounds = self._bounds(after, upto)
        if bounds is None:
            return 0, ProviderVersion(token=f"0:{self._settings_tag}")
        return await self._ranges.get(
            bounds,
            lambda: self._commits.read(bounds, lambda extra: self._read_range(*bounds, extra)),
        )

    async def _read_range(
        self, after: Any, upto: Any, extra: Sequence[Any]
    ) -> tuple[tuple[int, ProviderVersion], Sequence[Any]]:
        def aggregate() -> Any:
            statement = select(*self._aggregates(), *extra).select_from(self._sub)
            statement = statement if after is None else statement.where(self._key > after)
            return statement if upto is None else statement.where(self._key <= upto)

        row = await self._checksummed(aggregate)
        return (int(row[0]), self._version(row)), row[len(row) - len(extra) :]

    def _aggregates(self) -> list[Any]:
        """``count(*)``, the checksum (or newest revision) and the newest lastmod."""
        columns: list[Any] = [
            func.count(),
            checksum_sum(self._checksum_columns, self._dialect, self._texts_as_bytes)
            if self._version_column is None
            else func.max(self._version_column),
        ]
        if self._lastmod is not None:
            columns.append(raw(func.max(self._lastmod)))
        return columns

    async def _checksummed(self, aggregate: Callable[[], Any]) -> Sequence[Any]:
        """An aggregate's row; texts as bytes to SQLite's checksum once one is no UTF-8."""
        try:
            return (await self._all(aggregate()))[0]  # type: ignore[no-any-return]
        except DBAPIError as exc:
            if self._texts_as_bytes or "user-defined function raised" not in str(exc.orig):
                raise
            self._texts_as_bytes = True
            return (await self._all(aggregate()))[0]  # type: ignore[no-any-return]

    def _version(self, row: Sequence[Any]) -> ProviderVersion:
        """The version of what :meth:`_aggregates` read."""
        modified = self._newest(row[2]) if self._lastmod is not None else None
        return ProviderVersion(
            token=f"{row[0]}:{row[1]}:{self._settings_tag}", last_modified=modified
        )

    async def _summary(self) -> tuple[int, ProviderVersion, Any]:
        """Row count, key checks and version from one aggregate query, kept ``metadata_ttl``
        and shared by concurrent callers (one query in flight)."""
        return await self._metadata.get(lambda: self._commits.read(None, self._read_summary))

    async def _read_summary(
        self, extra: Sequence[Any]
    ) -> tuple[tuple[int, ProviderVersion, Any], Sequence[Any]]:
        checks = [] if self._unique else [func.count(self._key), func.count(self._key.distinct())]
        heads, kept = 1, False  # the count's columns; whether a kept count is among them
        started = time.perf_counter()
        if self._version_column is None:  # (rebuilt should the checksum need texts as bytes)
            found = await self._checksummed(
                lambda: select(*self._aggregates(), *checks, *extra).select_from(self._sub)
            )
        else:
            # Each aggregate on its own: a lone max() of an indexed column is an index
            # lookup and count(*) a walk of the smallest index (together, a table scan).
            aggregates = [*self._aggregates(), *checks]
            columns: list[Any] = [
                select(a).select_from(self._sub).scalar_subquery() for a in aggregates
            ]
            counts = self._kept_count.version_columns(counted := columns[0])
            heads, kept = len(counts), counts[0] is not counted
            columns[:1] = counts
            found = (await self._all(select(*columns, *extra)))[0]
        row, tail = found[: len(found) - len(extra)], found[len(found) - len(extra) :]
        rows = self._kept_count.settle(row[:heads], kept)
        if rows is None:  # (a kept count that reads NULL: given up, read again)
            return await self._read_summary(extra)
        self._hint.read(rows, time.perf_counter() - started)
        row = (rows, *row[heads:])
        if checks:
            keyed, distinct = int(row[-2]), int(row[-1])
            if keyed != rows:
                raise self._key_error(f"holds NULL in {rows - keyed} rows")
            if distinct != rows:
                raise self._key_error(f"is not unique ({rows - distinct} duplicate values)")
        return (rows, self._version(row), row[1]), tail
