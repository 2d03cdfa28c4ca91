"""A Django QuerySet section's version: what one aggregate over its rows reads.

The count, the newest key, the newest lastmod (and how many rows have one) and either
the row checksum (every row read: ``checksum.py``) or, with ``version_field``, the newest
revision. In one statement all of them read the whole queryset. For a whole section
with ``version_field`` each is read on its own (``split``), as the SQL provider does:
a lone ``max()`` of an indexed field is an index lookup, ``count()`` a walk of the
smallest index (or a count a trigger keeps, ``row_count.py``), "rows without a lastmod"
an index lookup of ``IS NULL``. They are separate statements, so a write between two of
them mixes states in one token; every one of them is read before the ranges are
measured, so the plan is never older than its token, and the next version check (the
write's value in each) moves it and plans again.

Past ``metadata_ttl`` a version is reused without its aggregate while nothing was
committed to the database since it was read (``commits.py``); PostgreSQL's snapshot is
read in the first statement of the version.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._providers.base import ProviderVersion
from .._providers.checksum import ChecksumHint
from .._providers.shared_query import SharedQueries, SharedQuery
from .checksum import register_sqlite_checksum, row_checksum
from .commits import QuerySetCommits
from .orm import run_orm
from .row_count import QuerySetCount
from .times import aware_datetime

if TYPE_CHECKING:
    from django.db.models import QuerySet

__all__ = ["Summary", "Versions", "aggregate_row", "refusals"]

#: Rows, the version, whether every row is dated, and the newest revision (version_field).
Summary = tuple[int, ProviderVersion, bool, Any]
_EMPTY: Summary = (0, ProviderVersion(token="0"), True, None)


def refusals() -> tuple[type[Exception], ...]:
    """What the ORM raises for a key bound its field cannot hold."""
    from django.core.exceptions import ValidationError
    from django.db import DataError

    return ValueError, TypeError, ValidationError, DataError


def aggregate_row(
    queryset: QuerySet[Any],
    key: str,
    version: Any,
    lastmod: str | None,
    split: bool,
    extra: Sequence[Any] = (),
    count: Callable[[QuerySet[Any]], int] | None = None,
) -> dict[str, Any]:
    """``n`` (rows), ``k`` (newest key), ``v`` (``version``: an aggregate expression),
    with ``lastmod`` ``m`` (newest) and ``dated`` (rows that have one), and ``extra``
    expressions as ``x0``, ``x1``... read in the first statement; ``count`` gives ``n``
    of a split read (default ``count()``)."""
    from django.db.models import Count, Max

    ordered = queryset.order_by()
    extras = {f"x{place}": each for place, each in enumerate(extra)}
    aggregates: dict[str, Any] = {"k": Max(key), "v": version}
    if lastmod is not None:
        aggregates["m"] = Max(lastmod)
    if not split:
        every = {"n": Count("pk"), **aggregates, **extras}
        if lastmod is not None:
            every["dated"] = Count(lastmod)  # rows whose lastmod is not NULL
        return _aggregate(ordered, every)
    row = _aggregate(ordered, {"k": aggregates.pop("k"), **extras})
    row.update({name: _aggregate(ordered, {name: each})[name] for name, each in aggregates.items()})
    row["n"] = ordered.count() if count is None else count(ordered)
    if lastmod is not None:
        row["dated"] = row["n"] - ordered.filter(**{f"{lastmod}__isnull": True}).count()
    return row


def _aggregate(queryset: QuerySet[Any], named: dict[str, Any]) -> dict[str, Any]:
    """``queryset.aggregate(**named)`` under names no annotation of the user's takes: an
    aggregate named as one (``n``) hides it from the checksum reading it (``{n}``)."""
    found = queryset.aggregate(**{f"sitemap_{name}": each for name, each in named.items()})
    return {name.removeprefix("sitemap_"): value for name, value in found.items()}


class Versions:
    """A QuerySet section's version and its key ranges' versions, kept ``metadata_ttl``
    and shared by concurrent callers, and kept past it while nothing is committed."""

    def __init__(
        self,
        queryset: QuerySet[Any],
        *,
        key: str,
        lastmod: str | None,
        version_field: str | None,
        checksum_fields: list[str],
        settings_tag: str,
        metadata_ttl: float,
        row_count: QuerySet[Any] | None,
        in_range: Callable[[Any, Any], QuerySet[Any] | None],
        read_fields: Sequence[str] = (),
    ) -> None:
        """``read_fields``: what the pages read besides (a location template's fields:
        their joins' tables count, as the aggregate's do)."""
        from django.db import connections

        self._queryset = queryset
        self._key = key
        self._lastmod = lastmod
        self._version_field = version_field
        self._checksum_fields = checksum_fields
        self._settings_tag = settings_tag
        self._in_range = in_range
        self._vendor = connections[queryset.db].vendor
        self.metadata: SharedQuery[Summary] = SharedQuery(metadata_ttl)
        #: Key range -> its shared version query, the newest last.
        self._ranges: SharedQueries[Summary] = SharedQueries(metadata_ttl)
        fields = [key, *filter(None, [lastmod, version_field]), *checksum_fields, *read_fields]
        self.commits = QuerySetCommits(queryset.values(*dict.fromkeys(fields)))
        self.kept_count = QuerySetCount(row_count)
        model = queryset.model.__name__
        self._hint = ChecksumHint("DjangoQuerySetProvider", model, version_field, queryset.db)

    async def summary(self) -> Summary:
        """Row count, the version (max key, max lastmod, row checksum or max revision)
        and whether every row has a lastmod, from one aggregate query."""
        return await self.metadata.get(lambda: self.commits.read(None, self.read_summary))

    async def read_summary(self, extra: Sequence[Any] = ()) -> tuple[Summary, Sequence[Any]]:
        return await run_orm(self.aggregate, self._queryset, True, extra)

    async def range_summary(self, after: Any, upto: Any) -> Summary:
        """What :meth:`summary` reads, of ``after < key <= upto`` alone."""

        async def read(extra: Sequence[Any]) -> tuple[Summary, Sequence[Any]]:
            return await run_orm(self._range_aggregate, after, upto, extra)

        return await self._ranges.get((after, upto), lambda: self.commits.read((after, upto), read))

    async def check_count(self) -> None:
        """The kept row count compared with ``count(*)`` now (a whole read)."""
        if self.kept_count.statement is not None:
            await run_orm(self.kept_count.check, self._queryset)

    def forget(self) -> None:
        self.metadata.clear()
        self._ranges.clear()
        self.commits.clear()

    def _range_aggregate(
        self, after: Any, upto: Any, extra: Sequence[Any]
    ) -> tuple[Summary, Sequence[Any]]:
        queryset = self._in_range(after, upto)
        if queryset is None:
            return _EMPTY, ()  # (nothing kept: an answer of no signal)
        try:
            return self.aggregate(queryset, False, extra)
        except refusals():  # a bound the key cannot hold, found by the database
            return _EMPTY, ()

    def aggregate(
        self, queryset: QuerySet[Any], split: bool = False, extra: Sequence[Any] = ()
    ) -> tuple[Summary, list[Any]]:
        """Count, version and whether every row is dated (``split``: the whole section
        with a version field, each aggregate on its own), and ``extra``'s values."""
        from django.db import connections
        from django.db.models import Max

        if self._version_field is not None:
            version = Max(self._version_field)
        else:
            version = row_checksum(self._checksum_fields)
            if self._vendor == "sqlite":
                register_sqlite_checksum(connections[self._queryset.db])
        whole, split = split, split and self._version_field is not None
        count = self.kept_count.rows if split else None
        started = time.perf_counter()
        row = aggregate_row(queryset, self._key, version, self._lastmod, split, extra, count)
        if whole:
            self._hint.read(int(row["n"]), time.perf_counter() - started)
        modified = aware_datetime(row.get("m"))
        stamp = modified.isoformat() if modified else ""
        token = f"{row['n']}:{row['k']}:{stamp}:{row['v']}:{self._settings_tag}"
        every_row_dated = self._lastmod is None or row["dated"] == row["n"]
        made = ProviderVersion(token=token, last_modified=modified)
        revision = row["v"] if self._version_field else None
        values = [row[f"x{place}"] for place in range(len(extra))]
        return (int(row["n"]), made, every_row_dated, revision), values
