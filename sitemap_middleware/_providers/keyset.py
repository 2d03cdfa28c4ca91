"""Keyset reading: rows in key order, batch after batch, never a growing ``OFFSET``.

This module alone owns the keyset loop of the database providers: a page's first batch
starts at its first key (inclusive), every later batch right after the last key read
(exclusive), until the page's rows are read or the table ends. A key must never be NULL:
``key > NULL`` is never true in SQL, and treating a NULL last key as "no key yet" would
restart the page (one row repeated until the page is full). Providers leave NULL keys
out; a NULL key that still arrives stops the page with an error instead of repeating rows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal, TypeAlias, TypeVar

__all__ = ["Bound", "keyset_batches"]

_T = TypeVar("_T")

#: Where a batch starts: ``None`` (the first row), ``(">=", key)`` or ``(">", key)``.
Bound: TypeAlias = "tuple[Literal['>=', '>'], Any] | None"


async def keyset_batches(
    fetch: Callable[[Bound, int], Awaitable[tuple[list[_T], Any]]],
    *,
    first: Bound,
    limit: int | None,
    batch_size: int,
) -> AsyncIterator[list[_T]]:
    """Batches of ``fetch(bound, size)`` (its rows and the last row's key) in key order.

    :param first: where the page starts (``None``: the first row of all).
    :param limit: rows in the page (``None``: to the end).
    """
    bound = first
    remaining = limit
    while remaining is None or remaining > 0:
        size = batch_size if remaining is None else min(batch_size, remaining)
        rows, last = await fetch(bound, size)
        if rows:
            yield rows
        if len(rows) < size:
            return
        if last is None:
            raise ValueError(
                "a row's key is NULL: keyset pages cannot go on past it (leave NULL keys out)"
            )
        bound = (">", last)
        if remaining is not None:
            remaining -= size
