"""The SQLAlchemy provider's versions: the section's summary and a key range's version.

A version is one aggregate (``sql_aggregates.py``): ``count(*)``, the rows' checksum sum
(or the newest revision) and the newest lastmod, kept ``metadata_ttl`` and shared by
concurrent callers (``shared_query.py``), and kept while nothing is committed
(``sql_commits.py``). Without a revision column, the section's summary is made of the
ranges its plan needs when a plan follows (one pass over the table: ``sql_ranges.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.sql import ColumnElement

from .._exceptions import ConfigurationError
from .._logs import logger
from .._sansio.values import aware, to_datetime
from .base import ProviderVersion
from .ranges import KeyRange
from .shared_query import SharedQuery
from .sql_aggregates import checksum_sum, range_stats_statement, row_checksum
from .sql_commits import Commits
from .sql_ranges import MeasureKeys, OnePass, version_sums

__all__ = ["SQLVersions"]


def _aware(value: object) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return aware(value)
    return to_datetime(value)  # type: ignore[arg-type]


class SQLVersions:
    """Versions of :class:`SQLAlchemyProvider` (its attributes, set by its ``__init__``)."""

    _sub: Any
    _key: ColumnElement[Any]
    _lastmod: ColumnElement[Any] | None
    _lastmod_key: str | None
    _version_column: ColumnElement[Any] | None
    _checksum_columns: list[ColumnElement[Any]]
    _unique: bool
    _dialect: str
    _settings_tag: str
    _bad_lastmod: object
    _metadata: SharedQuery[tuple[int, ProviderVersion, Any]]
    _commits: Commits
    _one_pass: OnePass | None
    _plans_follow: bool
    _rows_per_range: int
    _all: Callable[..., Awaitable[Sequence[Any]]]
    _key_error: Callable[[str], ConfigurationError]
    _range_fields: Callable[[], list[ColumnElement[Any]] | None]
    _measure_all: Callable[[MeasureKeys, int], Awaitable[list[KeyRange]]]

    def _newest(self, value: object) -> datetime | None:
        """The newest lastmod as Last-Modified; a value that is no date leaves it out.

        The rows holding such values are left out of ``<lastmod>`` (or of the page) like
        any invalid value; the version's token still sees every change.
        """
        try:
            return _aware(value)
        except (ValueError, TypeError, AttributeError) as exc:
            if self._bad_lastmod != value:
                self._bad_lastmod = value
                logger.warning(
                    "lastmod column %r: the newest value %r is not a date (%s): "
                    "Last-Modified is left out until it is",
                    self._lastmod_key,
                    value,
                    exc,
                )
            return None

    async def _read_range(
        self, after: Any, upto: Any, extra: Sequence[Any]
    ) -> tuple[tuple[int, ProviderVersion], Sequence[Any]]:
        statement = select(*self._aggregates(), *extra).select_from(self._sub)
        if after is not None:
            statement = statement.where(self._key > after)
        if upto is not None:
            statement = statement.where(self._key <= upto)
        row = (await self._all(statement))[0]
        return (int(row[0]), self._version(row)), row[len(row) - len(extra) :]

    def _aggregates(self) -> list[Any]:
        """``count(*)``, the checksum (or newest revision) and the newest lastmod."""
        columns: list[Any] = [
            func.count(),
            checksum_sum(self._checksum_columns, self._dialect)
            if self._version_column is None
            else func.max(self._version_column),
        ]
        if self._lastmod is not None:
            columns.append(func.max(self._lastmod))
        return columns

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
    ) -> tuple[tuple[int, ProviderVersion, Any], Sequence[Any] | None]:
        if self._version_column is None and self._unique and (fields := self._range_fields()):
            self._plans_follow = self._plans_follow and self._one_pass is None  # one unused
            if self._plans_follow:
                return await self._summary_in_one_pass(fields, extra)
        checks = [] if self._unique else [func.count(self._key), func.count(self._key.distinct())]
        columns = [*self._aggregates(), *checks]
        if self._version_column is not None:
            # Each aggregate on its own: a lone max() of an indexed column is an index
            # lookup and count(*) a walk of the smallest index (together, a table scan).
            columns = [select(each).select_from(self._sub).scalar_subquery() for each in columns]
            statement = select(*columns, *extra)
        else:
            statement = select(*columns, *extra).select_from(self._sub)
        found = (await self._all(statement))[0]
        row, tail = found[: len(found) - len(extra)], found[len(found) - len(extra) :]
        rows = int(row[0])
        if checks:
            keyed, distinct = int(row[-2]), int(row[-1])
            if keyed != rows:
                raise self._key_error(f"holds NULL in {rows - keyed} rows")
            if distinct != rows:
                raise self._key_error(f"is not unique ({rows - distinct} duplicate values)")
        return (rows, self._version(row), row[1]), tail

    async def _summary_in_one_pass(
        self, fields: list[ColumnElement[Any]], extra: Sequence[Any]
    ) -> tuple[tuple[int, ProviderVersion, Any], Sequence[Any] | None]:
        """The summary made of the ranges the plan that follows needs, measured with
        their checksums: the table read once, not twice (see ``sql_ranges.py``)."""
        found: list[Any] = []
        rows_per_range, checksum = (
            self._rows_per_range,
            row_checksum(self._checksum_columns, self._dialect),
        )

        async def measure(after: Any, upto: Any) -> list[KeyRange]:
            statement = range_stats_statement(
                self._key, fields, self._lastmod, rows_per_range, self._dialect, after, upto,
                checksum, extra,
            )  # fmt: skip
            read = await self._all(statement)
            found.extend(read)
            return [KeyRange(*row[:7]) for row in read]

        total = (await self._all(select(func.count()).select_from(self._sub)))[0][0]
        ranges = await self._measure_all(measure, int(total))
        rows, sums, newest = version_sums(found)
        summary = (rows, self._version((rows, sums, newest)), sums)
        self._one_pass = OnePass(rows_per_range, tuple(ranges), summary)
        snapshots = {tuple(row[9:]) for row in found}  # (each half's statement has its own)
        return summary, (next(iter(snapshots)) if len(snapshots) == 1 else None)
