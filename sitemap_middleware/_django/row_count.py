"""A row count a trigger keeps, for a QuerySet section with ``version_field``.

``row_count=Counter.objects.filter(name="products").values("total")``: a QuerySet of
one value (one row, one column), not a function. A QuerySet can be read as a scalar
subquery in the same statement as ``count(*)``, which is what checking it needs (one
snapshot: a write between two statements would look like a wrong count); a function
could not be. When it is read, checked and given up is ``_providers/row_count.py``'s
rule, shared with the SQLAlchemy provider; here, its Django statements (run in a worker
thread, as every ORM call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._exceptions import ConfigurationError
from .._providers import row_count
from .commits import beside

if TYPE_CHECKING:
    from django.db.models import QuerySet

__all__ = ["QuerySetCount", "check_row_count"]


def check_row_count(row_count: object, version_field: str | None, queryset: QuerySet[Any]) -> None:
    """``row_count`` is a QuerySet of one value, given with ``version_field``, over a
    queryset whose rows are its model's rows (no join that repeats them)."""
    from django.db.models import QuerySet

    if row_count is None:
        return
    fields = getattr(row_count, "_fields", None)
    if not isinstance(row_count, QuerySet) or fields is None or len(fields) != 1:
        raise ConfigurationError(
            "row_count must be a QuerySet of one value (the queryset's row count, kept "
            "cheap to read, e.g. by a trigger: Counter.objects.filter(name=...)"
            f".values('total')), got {row_count!r}"
        )
    if version_field is None:
        raise ConfigurationError(
            "row_count needs version_field=: without a revision field the version "
            "checksum reads every row anyway"
        )
    if not _unique_rows(queryset):
        raise ConfigurationError(
            "row_count needs a key the schema makes unique: a queryset without joins "
            "over a to-many relation, distinct(), grouping or union (its rows are its "
            "table's rows, as a trigger counts them)"
        )


def _unique_rows(queryset: QuerySet[Any]) -> bool:
    from django.db.models.sql.datastructures import Join

    query = queryset.query
    if query.distinct or query.group_by is not None or query.combinator:
        return False
    # filter() sets up its joins at once (not compiled here: no query at start-up, where
    # an event loop may run); the ones compiling adds are to-one (select_related, parents).
    for each in query.alias_map.values():
        field = getattr(each, "join_field", None) if isinstance(each, Join) else None
        if field is not None and (field.one_to_many or field.many_to_many):
            return False
    return True


class QuerySetCount(row_count.KeptCount["QuerySet[Any]"]):
    """``row_count``'s QuerySet, until it is caught wrong (blocking: worker threads)."""

    def rows(self, rows: QuerySet[Any]) -> int:
        """The version's row count of ``rows``: the kept count (checked beside
        ``count(*)`` when due), or ``count(*)`` once given up (or never given)."""
        kept = self.statement
        if kept is None:
            return int(rows.count())
        read = self._read(kept)
        if read is None:
            return int(rows.count())
        if self.due:
            return self.compared(*self._both(kept, rows))
        counted = self.settle([read[0] if read else None], True)
        return int(rows.count()) if counted is None else counted

    def check(self, rows: QuerySet[Any]) -> None:
        """Compare the kept count with ``count(*)`` now, in one statement; nothing once
        given up (or never given)."""
        kept = self.statement
        if kept is not None and self._read(kept) is not None:
            self.compared(*self._both(kept, rows))

    @staticmethod
    def _both(kept: QuerySet[Any], rows: QuerySet[Any]) -> tuple[Any, int]:
        from django.db.models import Count, Subquery

        subquery = Subquery(kept)
        found = rows.order_by().aggregate(
            sitemap_n=Count("pk"),
            sitemap_kept=beside("%(expressions)s", subquery, output_field=subquery.output_field),
        )
        return found["sitemap_kept"], int(found["sitemap_n"])

    def _read(self, kept: QuerySet[Any]) -> list[Any] | None:
        """What ``kept`` reads (no row, or one value); None, given up (logged), when it
        reads several rows (a filter matching several counters: PostgreSQL refuses such
        a scalar subquery, SQLite takes any of them)."""
        read = [_value(each) for each in kept[:2]]
        if len(read) > 1:
            self.give_up(read)
            return None
        return read


def _value(row: Any) -> Any:
    """The one value of a row of ``values()`` (a dict), ``values_list()`` (a tuple) or
    ``values_list(flat=True)``."""
    if isinstance(row, dict):
        return next(iter(row.values()))
    return row[0] if isinstance(row, tuple) else row
