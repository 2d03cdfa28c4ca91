"""A small protocol for caching rendered documents, and the in-process default.

Used only by ``render_fallback=RenderFallback()``: providers that cannot report their
freshness get an ETag from the rendered bytes, kept here for ``ttl`` seconds so
repeated requests (and their 304s) do not re-render.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Protocol, runtime_checkable

__all__ = ["MemoryRenderCache", "RenderCache"]


@runtime_checkable
class RenderCache(Protocol):
    """Where rendered documents live: ``key -> (etag, bytes)``."""

    async def get(self, key: str) -> tuple[str, bytes] | None: ...

    async def set(self, key: str, value: tuple[str, bytes]) -> None: ...


class MemoryRenderCache:
    """LRU of at most ``size`` documents, each valid for ``ttl`` seconds."""

    def __init__(self, size: int, ttl: float) -> None:
        self._size = size
        self._ttl = ttl
        self._items: OrderedDict[str, tuple[float, tuple[str, bytes]]] = OrderedDict()

    async def get(self, key: str) -> tuple[str, bytes] | None:
        item = self._items.get(key)
        if item is None:
            return None
        expires, value = item
        if expires < time.monotonic():
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return value

    async def set(self, key: str, value: tuple[str, bytes]) -> None:
        if self._size == 0:
            return
        self._items[key] = (time.monotonic() + self._ttl, value)
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
