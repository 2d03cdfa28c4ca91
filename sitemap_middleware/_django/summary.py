"""A Django QuerySet section's version: what one aggregate over its rows reads.

The count, the newest key, the newest lastmod (and how many rows have one) and either
the row checksum (every row read: ``checksum.py``) or, with ``version_field``, the newest
revision. In one statement all of them read the whole queryset. For a whole section
with ``version_field`` each is read on its own (``split``), as the SQL provider does:
a lone ``max()`` of an indexed field is an index lookup, ``count()`` a walk of the
smallest index, "rows without a lastmod" an index lookup of ``IS NULL``. They are
separate statements, so a write between two of them mixes states in one token; every
one of them is read before the ranges are measured, so the plan is never older than
its token, and the next version check (the write's value in each) moves it and plans
again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.db.models import QuerySet

__all__ = ["aggregate_row"]


def aggregate_row(
    queryset: QuerySet[Any],
    key: str,
    version: Any,
    lastmod: str | None,
    split: bool,
) -> dict[str, Any]:
    """``n`` (rows), ``k`` (newest key), ``v`` (``version``: an aggregate expression),
    and with ``lastmod`` ``m`` (newest) and ``dated`` (rows that have one)."""
    from django.db.models import Count, Max

    ordered = queryset.order_by()
    aggregates: dict[str, Any] = {"k": Max(key), "v": version}
    if lastmod is not None:
        aggregates["m"] = Max(lastmod)
    if not split:
        every = {"n": Count("pk"), **aggregates}
        if lastmod is not None:
            every["dated"] = Count(lastmod)  # rows whose lastmod is not NULL
        return dict(ordered.aggregate(**every))
    row = {name: ordered.aggregate(value=each)["value"] for name, each in aggregates.items()}
    row["n"] = ordered.count()
    if lastmod is not None:
        row["dated"] = row["n"] - ordered.filter(**{f"{lastmod}__isnull": True}).count()
    return row
