"""The "leave this item out" value (its rule lives in ``exclusion.py``)."""

from __future__ import annotations

from typing import Final

__all__ = ["SKIP", "SkipType"]


class _Skip:
    """The type of :data:`SKIP` (one instance, also after pickling)."""

    __slots__ = ()
    _instance: _Skip | None = None

    def __new__(cls) -> _Skip:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "SKIP"

    def __reduce__(self) -> str:
        return "SKIP"


SKIP: Final = _Skip()
""""Leave this item out": what a provider may yield, and ``map=``, ``to_entry`` or a
location function may return, for an item that is not to be listed. Quiet (no log line
per item), counted (reason ``"provider"``), and it keeps the item's place."""
SkipType = _Skip
