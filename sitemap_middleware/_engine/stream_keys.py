"""What a keyed provider must hand over: ``(key, entry)`` pairs, keys in order."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from operator import le, lt
from typing import Any

from .._exceptions import ProviderError

__all__ = ["check_keys", "check_pairs"]


def check_keys(
    section: str,
    keys: list[Any],
    key_range: tuple[Any, Any],
    after: Any,
    last_key: Any,
    repeats: bool,
) -> Any:
    """Integer keys from ``keyed()`` must increase inside ``(after, upto]``; returns the
    last key to check the next batch against.

    Pages are cut at keys, so keys out of order or outside the range would lose or
    repeat URLs. Strings are the database's to order (its collation), not Python's.
    """
    upto = key_range[1]
    if not keys:
        return last_key
    if set(map(type, keys)) != {int}:
        return None
    # A provider whose keys name groups of items (a row in every language) repeats
    # each key, within a batch and across batches, never the range's start.
    tie_first = repeats and last_key is not None  # a group across batches
    in_order = all(map(le if repeats else lt, keys, islice(keys, 1, None)))  # C speed
    if type(after) is int and not (le if tie_first else lt)(after, keys[0]):
        in_order = False
    if not in_order or (type(upto) is int and keys[-1] > upto):
        ties = [tie_first, *[repeats] * (len(keys) - 1)]
        wrong = next(
            (key, before)
            for key, before, tie in zip(keys, [after, *keys], ties, strict=False)
            if (type(upto) is int and key > upto)
            or (type(before) is int and (key < before or (key == before and not tie)))
        )
        raise ProviderError(
            section,
            f"keyed() gave key {wrong[0]!r} after {wrong[1]!r}, outside "
            f"({key_range[0]!r}, {upto!r}] or out of order: keys must increase",
        )
    return keys[-1]


def check_pairs(section: str, raw: list[Any]) -> None:
    """``keyed()`` yields (key, entry) pairs: a bare entry would be split as one."""
    for pair in raw:
        if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise ProviderError(
                section, f"keyed() must yield (key, entry) pairs, got {pair!r:.100}"
            )
