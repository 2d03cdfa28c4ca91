"""Admitting a section's entries: batches, timeouts, validation and the location rule.

What a provider hands over comes through a source (``sources.py``, one class per
capability); the stream times each of its calls and admits what it reads.
"""

from __future__ import annotations

import inspect
from datetime import datetime
from typing import Any

import anyio
import anyio.lowlevel

from .._exceptions import InvalidEntryError, ProviderError, ProviderTimeoutError
from .._logs import logger, report_once
from .._providers.base import UrlProvider
from .._sansio.batches import Batch, PlainBatch, plain_batch
from .._sansio.exclusion import PROVIDER, SKIP, Exclusion, SkipType
from .._sansio.extensions import alternate_problem, is_old_news
from .._sansio.ledger import Reading
from .._sansio.models import Admitted, SitemapEntry, describe_item, entry_parts, resolve_mapped
from .._sansio.urls import BaseURL
from .sources import BATCH_SIZE, open_source

__all__ = ["BATCH_SIZE", "EntryStream", "call_provider"]

#: Invalid entries logged one by one per response; the rest are counted in a summary.
MAX_LOGGED_INVALID = 20

LOG_INVALID_ENTRY = "sitemap section %r: skipping invalid entry %s: %s"
LOG_INVALID_SUMMARY = "sitemap section %r: skipped %d more invalid entries"
LOG_OLD_NEWS = "sitemap section %r: left out %d news articles older than the news window"


async def call_provider(section: str, timeout: float, awaitable: Any) -> Any:
    """Await a provider call under ``timeout``, wrapping failures in ProviderError.

    ``awaitable`` may be a function to call first (a capability), so one that raises as
    it is called (a plain ``def`` failing) fails its section like one that raises later.
    """
    try:
        with anyio.fail_after(timeout):
            if callable(awaitable) and not inspect.isawaitable(awaitable):
                awaitable = awaitable()
            return await awaitable
    except TimeoutError:
        raise ProviderTimeoutError(section, f"no answer within {timeout:g} s") from None
    except ProviderError:
        raise
    except Exception as exc:
        raise ProviderError(section, f"{type(exc).__name__}: {exc}") from exc


class EntryStream:
    """The admitted entries of one section, ``limit`` of them from ``offset``.

    Reads through the source :func:`open_source` picks by the provider's capabilities
    (``keyed``: the key range ``key_range`` of a :class:`SupportsKeyset` provider). Each
    batch is one timed call; entries that fail validation or the location rule are left
    out and logged (or raise, in strict mode; ``quiet`` logs nothing, for the planning
    pass: its entries are logged when their page is served).
    """

    def __init__(
        self,
        name: str,
        provider: UrlProvider,
        base: BaseURL,
        *,
        offset: int = 0,
        limit: int | None = None,
        timeout: float,
        strict: bool,
        news_cutoff: datetime | None = None,
        quiet: bool = False,
        keyed: bool = False,
        key_range: tuple[Any, Any] = (None, None),
        batch_size: int = BATCH_SIZE,
        exclusion: Exclusion | None = None,
    ) -> None:
        self.name = name
        #: Left out on purpose (SKIP, exclude=, robots.txt, duplicates): quiet, counted.
        self.exclusion = exclusion
        ledger = exclusion.ledger if exclusion is not None else None
        self._ledger = Reading(ledger, name, offset) if ledger else None  # (dates by content)
        self._cut = len(base.origin)
        #: Items left out on purpose, by reason (``exclusion.py``).
        self.excluded: dict[str, int] = {}
        #: Where the rows of the last :meth:`plain` batch stood in its raw batch (None:
        #: one for one).
        self.plain_positions: list[int] | None = None
        # Items a batch may take of what a batched provider already handed over (the
        # planning pass, which sends nothing, reads in fewer, larger batches); a batch
        # never calls the provider for more than BATCH_SIZE, the unit timeouts bind.
        self._batch_size = batch_size
        # News past the window is left out like an invalid entry: its raw position stays,
        # so page plans (cut by the entries they keep) never list a page of old news.
        self._news_cutoff = news_cutoff
        self._old_news = 0
        self._base = base
        self._timeout = timeout
        self._strict = strict
        self._quiet = quiet
        self._remaining = limit
        self._skip = offset
        self._source = open_source(
            name, provider, offset=offset, limit=limit, keyed=keyed, key_range=key_range
        )
        self._invalid = 0
        #: Items left out as invalid in a quiet stream (the planning pass), and the first
        #: one's error: what the pass reports when the section lists nothing at all.
        self.left_out = 0
        self.first_left_out: InvalidEntryError | None = None
        self._keys_start = 0  # the raw position of the last batch's first item
        self.pulled = 0  # raw items pulled so far (valid or not): what page plans count
        self._replay: list[PlainBatch] | None = None

    @property
    def ledger_span(self) -> tuple[str, str] | None:
        """The ledger tokens this stream's records went from and to, alone (``Reading``)."""
        return self._ledger.span if self._ledger is not None else None

    def replay(self, batches: list[PlainBatch]) -> None:
        """Serve these admitted batches instead of reading the provider.

        They are a planning pass's, made for this very request, of a section that is
        one page (see ``plan_section``): the same entries, read and admitted once.
        """
        self._replay = batches[::-1]

    def key_at(self, position: int) -> Any:
        """The key of the item at raw ``position`` (in the last batch; keyed streams)."""
        return self._source.keys[position - self._keys_start]

    async def next_raw(self) -> list[Any]:
        """The next batch of raw provider items; empty when done.

        Every batch is one timed call, also each batch skipped on the way to a deep page.
        Each starts at a checkpoint: a provider that never awaits (an in-memory list)
        still lets a client's disconnect, or a timeout, stop the response within a batch.
        """
        source = self._source
        while self._skip and not source.exhausted:
            await anyio.lowlevel.checkpoint()
            self._skip -= await call_provider(self.name, self._timeout, source.skip(self._skip))
        remaining = self._remaining
        if source.exhausted or remaining == 0:
            if self._ledger is not None and source.exhausted and remaining is None:
                self._ledger.done()
            return []
        await anyio.lowlevel.checkpoint()
        if self._ledger is not None and not self.pulled:  # a planning pass reads it again
            await self._ledger.ready(self._quiet)
        if remaining is None:
            take = source.take(BATCH_SIZE, self._batch_size)
        else:
            size = min(BATCH_SIZE, remaining)
            take = source.take(size, size)
        raw: list[Any] = await call_provider(self.name, self._timeout, take)
        if not raw and self._ledger is not None and source.exhausted and remaining is None:
            self._ledger.done()  # (the last batch ended where the provider did)
        if remaining is not None:
            self._remaining = remaining - len(raw)
        self._keys_start = self.pulled
        self.pulled += len(raw)
        raw = resolve_mapped(raw)  # rows mapped once, whichever path admits them
        if self._ledger is not None:  # (a provider's digests, taken out of its items)
            raw = self._ledger.split(raw, self.pulled)
        return raw

    async def next_batch(self) -> Batch:
        """The next batch of valid entries with their absolute URLs; empty when done.

        A plain batch comes as it was admitted, by column (a :class:`PlainBatch`,
        which writers take whole); any other as a list of each valid entry.
        """
        if self._replay is not None:
            if not self._replay:
                return []
            await anyio.lowlevel.checkpoint()  # a client's disconnect still stops us
            return self._replay.pop()
        while True:
            raw = await self.next_raw()
            if not raw:
                return []
            batch = self.admit(raw)
            if batch:
                return batch

    def admit(self, raw: list[Any]) -> Batch:
        """The valid items of a raw batch, as rendering needs them."""
        plain = self.plain(raw)
        if plain is not None:  # every item valid, none extended: nothing to log
            return plain
        return [item for item in self.admit_one_by_one(raw) if item is not None]

    def plain(self, raw: list[Any]) -> PlainBatch | None:
        """The whole batch admitted at once when it is plain (see :func:`plain_batch`),
        without what is left out on purpose (:attr:`plain_positions` says where its rows
        stood)."""
        self.plain_positions = None
        positions: list[int] | None = None
        skipped = 0
        if SkipType in set(map(type, raw)):
            positions = [i for i, item in enumerate(raw) if item is not SKIP]
            skipped = len(raw) - len(positions)
            raw = [raw[i] for i in positions]
        plain = plain_batch(raw, self._base) if raw else PlainBatch([], 0)
        if plain is None:
            return None  # (the per-entry path counts the skipped items)
        self._count(PROVIDER, skipped)
        exclusion = self.exclusion
        if exclusion is not None and (left := exclusion.reasons(plain.locs, self._cut)):
            for reason in left.values():
                self._count(reason, 1)
            kept = [i for i in range(len(plain)) if i not in left]
            plain = plain.select(kept)
            positions = kept if positions is None else [positions[i] for i in kept]
        self.plain_positions = positions
        if self._ledger is not None:  # the content ledger's lastmods (``ledger.py``)
            plain = self._ledger.stamp_plain(plain, positions)
        return plain

    def spread(self, plain: PlainBatch, count: int) -> list[Admitted | None]:
        """The rows of the last :meth:`plain` batch at their raw positions (None between)."""
        admitted = plain.admitted()
        positions = self.plain_positions
        if positions is None:
            return list(admitted)
        spread: list[Admitted | None] = [None] * count
        for position, item in zip(positions, admitted, strict=True):
            spread[position] = item
        return spread

    def _count(self, reason: str, number: int) -> None:
        if number:
            self.excluded[reason] = self.excluded.get(reason, 0) + number

    def admit_one_by_one(self, raw: list[Any]) -> list[Admitted | None]:
        """:meth:`admit_each` by the per-entry rules (a batch known not to be plain)."""
        admitted: list[Admitted | None] = []
        locate = self._base.locate
        for item in raw:
            if item is SKIP:
                self._count(PROVIDER, 1)
                admitted.append(None)
                continue
            try:
                loc, tail, extended = entry_parts(item)
                loc = locate(loc)
            except InvalidEntryError as exc:
                if self._strict:
                    raise
                admitted.append(None)
                if self._quiet:
                    self.left_out += 1
                    if self.first_left_out is None:
                        self.first_left_out = exc
                    continue
                self._invalid += 1
                if self._invalid <= MAX_LOGGED_INVALID:
                    logger.warning(LOG_INVALID_ENTRY, self.name, describe_item(item), exc)
                continue
            if extended is not None and not self._keep_extended(loc, extended):
                admitted.append(None)
                continue
            admitted.append((loc, tail, extended))
        exclusion = self.exclusion
        if exclusion:
            places = [i for i, item in enumerate(admitted) if item is not None]
            locs = [admitted[i][0] for i in places]  # type: ignore[index]
            for place, reason in exclusion.reasons(locs, self._cut).items():
                admitted[places[place]] = None
                self._count(reason, 1)
        if self._ledger is not None:
            self._ledger.stamp_admitted(admitted)
        return admitted

    def _keep_extended(self, loc: str, entry: SitemapEntry) -> bool:
        """News past the window is left out; hand-written alternates are checked."""
        cutoff = self._news_cutoff
        if entry.news is not None and cutoff is not None and is_old_news(entry.news, cutoff):
            self._old_news += 1
            return False
        if entry.alternates:
            hrefs = [self._base.join_if_relative(a.href) for a in entry.alternates]
            problem = alternate_problem(loc, hrefs)
            if problem is not None:
                report_once(self.name, "alternates", problem)
        return True

    async def aclose(self) -> None:
        """Close the provider's iterator (its ``finally`` blocks run now)."""
        if self._invalid > MAX_LOGGED_INVALID:
            logger.warning(LOG_INVALID_SUMMARY, self.name, self._invalid - MAX_LOGGED_INVALID)
            self._invalid = 0
        if self._old_news and not self._quiet:
            logger.info(LOG_OLD_NEWS, self.name, self._old_news)
            self._old_news = 0
        with anyio.CancelScope(shield=True):
            try:
                await self._source.aclose()
            except Exception:  # a provider failing in its cleanup must not mask ours
                logger.exception("sitemap section %r: provider failed while closing", self.name)
