"""Calls to the render store, which may fail: this module alone owns what a failure costs.

A failing store never fails a request: a failed call is logged and counts as empty (no
stored render, no stamp, no lock). After a failure the store is left alone for a
back-off, doubling while it keeps failing: a store that accepts connections but never
answers would otherwise cost every request a timeout per call.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TypeVar

from .._logs import logger

__all__ = [
    "BACKOFF_FIRST",
    "BACKOFF_MAX",
    "LOG_PLANS_BACKING_OFF",
    "LOG_PLANS_FAILED",
    "LOG_STORE_FAILED",
    "StoreCalls",
]

#: Seconds a failing store is left alone, doubled while it keeps failing, up to the most.
BACKOFF_FIRST = 5.0
BACKOFF_MAX = 60.0

LOG_STORE_FAILED = "sitemap render store failed %s: %s: %s"
LOG_BACKING_OFF = "sitemap render store: not asked for %.0f s (rendering without it)"
#: The files of ``Renders(plan_directory=)``: backed off on their own (see SharedRenders).
LOG_PLANS_FAILED = "sitemap plan directory failed %s: %s: %s"
LOG_PLANS_BACKING_OFF = "sitemap plan directory: not asked for %.0f s (planning without it)"

_T = TypeVar("_T")


class StoreCalls:
    """Guards store calls of one engine: logging, and the back-off after a failure."""

    def __init__(self, failed: str = LOG_STORE_FAILED, backing_off: str = LOG_BACKING_OFF) -> None:
        self._messages = failed, backing_off
        self._backoff = 0.0  # seconds the store is left alone after its latest failure
        self._down_until = 0.0  # time.monotonic() until which the store is not asked

    async def guard(self, doing: str, call: Awaitable[_T]) -> _T | None:
        """Await a store call; a failure (or a store backed off) counts as empty."""
        if self.backing_off():
            getattr(call, "close", lambda: None)()  # a coroutine never awaited warns
            return None
        try:
            result = await call
        except Exception as exc:
            self.failed(doing, exc)
            return None
        self._backoff = 0.0
        return result

    def backing_off(self) -> bool:
        """Whether the store is being left alone after a failure."""
        return time.monotonic() < self._down_until

    def failed(self, doing: str, exc: Exception) -> None:
        """Log a failed call and start (or double) the back-off."""
        self._backoff = min(BACKOFF_MAX, max(BACKOFF_FIRST, self._backoff * 2))
        self._down_until = time.monotonic() + self._backoff
        logger.warning(self._messages[0], doing, type(exc).__name__, exc)
        logger.warning(self._messages[1], self._backoff)
