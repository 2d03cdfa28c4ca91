"""The content ledger's store work: a fleet's records read once per plan, saved in batches.

The book (``_sansio/ledger.py``) decides each written lastmod at admission, from the
records it holds. With a shared store (``LedgerStore``: Redis, one hash per section) a
planning pass first reads the section's hash whole (the fleet's first-seen times win), a
render reads it once per instance; new records are saved by one background task
(asyncio), a hash write per section and batch. No response waits for a save. Entries
whose lastmod moved while their content did not are logged (INFO, once per content) and
counted (observers' ``lastmods_held(section, count)``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._caches.store import LedgerStore, RenderStore
from .._logs import logger
from .._sansio.ledger import LedgerBook
from .background import BackgroundTask
from .observe import tell_observers
from .store_calls import StoreCalls

if TYPE_CHECKING:
    from .._config import SitemapConfig

__all__ = ["LOG_HELD", "LedgerRunner", "ledger_runner"]

#: Prefix of a section's hash in a LedgerStore.
KEY = "ledger|"
#: Records (13 bytes each) a hash write carries at most.
BATCH = 1000
LOG_HELD = (
    "sitemap ledger: section %r: %d URLs' lastmod moved while their content did not; "
    "the time their content was first seen is written (first: %s said %s, written %s)"
)


class LedgerRunner:
    """One instance's side of the ledger: loads, saves and reports."""

    def __init__(
        self, book: LedgerBook, store: RenderStore, calls: StoreCalls, observers: Sequence[object]
    ) -> None:
        self.book = book
        self._store = store if store.shared and isinstance(store, LedgerStore) else None
        self._calls = calls
        self._observers = observers
        self._loaded: set[str] = set()
        self._background = BackgroundTask(self._run)
        book.told = self.tell
        if self._store is not None:
            book.loader = self.load
            book.wake = self.wake

    async def load(self, section: str, again: bool) -> None:
        """Adopt the fleet's records of ``section`` (``again``: a planning pass)."""
        if self._store is None or (section in self._loaded and not again):
            return
        self._loaded.add(section)
        found = await self._calls.guard(
            "reading the ledger", self._store.hash_values(KEY + section)
        )
        if found:
            stored = {
                int.from_bytes(k, "big"): int.from_bytes(v, "big")
                for k, v in found.items()
                if len(k) == 8 and len(v) == 13
            }
            self.book.adopt(section, stored)

    def wake(self) -> None:
        """Start the saving task unless it runs (called as records wait)."""
        self._background.wake()

    async def settled(self) -> None:
        """Wait until no record waits to be saved (tests)."""
        await self._background.settled()

    async def aclose(self) -> None:
        await self._background.stop(cancel=False)  # the last records are saved, not dropped

    async def _run(self) -> None:
        await asyncio.sleep(0)  # the response that made these records goes first
        store = self._store
        assert store is not None
        try:
            while taken := self.book.take_pending():
                for section, records in taken:
                    items = [
                        (k.to_bytes(8, "big"), (r & ~1).to_bytes(13, "big"))
                        for k, r in records.items()
                    ]
                    for start in range(0, len(items), BATCH):
                        await self._calls.guard(
                            "saving the ledger",
                            store.save_hash(KEY + section, dict(items[start : start + BATCH])),
                        )
        except Exception:
            logger.exception("sitemap ledger: saving failed")

    def tell(self, section: str, moved: list[tuple[str, str, str]]) -> None:
        """Report URLs whose lastmod moved without their content (once per content)."""
        loc, said, written = moved[0]
        logger.info(LOG_HELD, section, len(moved), loc, said, written)
        tell_observers(self._observers, "lastmods_held", section, len(moved))


def ledger_runner(
    config: SitemapConfig, store: RenderStore, calls: StoreCalls
) -> LedgerRunner | None:
    """The configuration's ledger runner, or None without ``SitemapConfig(ledger=...)``."""
    if config.ledger_book is None:
        return None
    return LedgerRunner(config.ledger_book, store, calls, config.observers)
