"""Plans where the data lives: what a database can tell about a section's key ranges.

A keyset provider that can aggregate in its database answers :meth:`range_stats` with
one grouped query: the section cut into ranges of a few hundred consecutive keys, each
with its row count, how many rows give a location, the UTF-8 bytes of the location
values of its *plain* rows and its newest lastmod. The engine builds the page plan from
that (``_engine/range_plan.py``) instead of measuring every row in Python.

Why the bytes are a proof, not an estimate: a plain value holds only characters that no
step between the database and the page changes (``A-Z a-z 0-9 . _ ~ / -``: never
percent-encoded, never escaped in XML, no host to encode). Such a row's ``<url>`` element
is then the element of a *sample* entry (every value one character, see
:attr:`RangeStats.samples`) plus the value bytes the database summed, or shorter (a dot
segment removed). Rows with any other character are counted in ``odd``; a range holding
one is measured row by row by the engine, as every row used to be.

Where Python builds the entries (``to_entry``, a location function) the database can
still count: such stats are *unsized* (``sized=False``, no samples). The engine then
measures a few ranges row by row, sizes the others from them with headroom, and
confirms each page when it is rendered: a page that outgrows its budget is served
whole up to the budget and the section is planned row by row from then on
(``_engine/range_plan.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["PLAIN_CHARACTERS", "KeyRange", "RangeStats", "SupportsRangeStats"]

#: What a plain location value holds (see the module's docstring), as a character class.
PLAIN_CHARACTERS = "A-Za-z0-9._~/-"


@dataclass(frozen=True, slots=True)
class KeyRange:
    """Consecutive rows ``first_key <= key <= last_key`` as the database counts them."""

    first_key: Any
    last_key: Any
    #: Rows in the range, listed or not.
    rows: int
    #: Rows whose every location column holds a value (the others are left out).
    urls: int
    #: UTF-8 bytes of the location values of the listed plain rows.
    plain_bytes: int
    #: Listed rows with a character outside :data:`PLAIN_CHARACTERS`.
    odd: int
    #: The newest lastmod of the listed rows, as the database gives it.
    newest: Any


@dataclass(frozen=True, slots=True)
class RangeStats:
    """A section's key ranges in key order, and how to size one of their rows."""

    ranges: Sequence[KeyRange]
    #: Entries of rows whose location values are one plain character each, with the
    #: number of such values: the largest element among them, less that number, bounds
    #: every plain row's element without its value bytes.
    samples: Sequence[tuple[Any, int]]
    #: False: rows counted, not sized (entries built in Python; no samples, no bytes).
    sized: bool = True


@runtime_checkable
class SupportsRangeStats(Protocol):
    """Capability (keyset providers): :class:`RangeStats` from the database (unsized
    where only Python can size its rows: ``to_entry``, a location function), or None
    when it cannot tell (a format spec, a lastmod that is not a date)."""

    async def range_stats(self, rows_per_range: int) -> RangeStats | None: ...
