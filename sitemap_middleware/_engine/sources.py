"""A provider's capabilities as sources of raw items: one class per capability.

A stream (``stream.py``) reads every provider through one :class:`Source`, the one
:func:`open_source` picks from the provider's capabilities. A source only reads, and
checks what its capability promises (keys in order, pairs, lists of one length); the
stream times each call and keeps admission, strictness, logging and replay. A new
capability is one class here and one line in :func:`open_source`.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Sequence
from itertools import islice
from operator import le, lt
from typing import Any, Protocol, cast

from .._exceptions import ProviderError
from .._providers.base import (
    CallableProvider,
    SupportsKeyedBatches,
    SupportsKeyset,
    SupportsPages,
    UrlProvider,
)

__all__ = [
    "BATCH_SIZE",
    "BatchesSource",
    "EntriesSource",
    "KeyedBatchesSource",
    "KeyedSource",
    "PageSource",
    "Source",
    "open_source",
]

#: Entries per timed provider call: amortises the timeout, keeps the first batch small.
BATCH_SIZE = 500


class Source(Protocol):
    """Raw items of one section, a batch per call (each call one timed provider call)."""

    #: The provider has handed over its last item.
    exhausted: bool
    #: The keys of the last batch taken, one per item (keyed sources; else empty).
    keys: list[Any]

    async def skip(self, count: int) -> int:
        """Read past up to ``count`` items before the first one taken, one call's worth
        (``BATCH_SIZE`` items, or one list); how many it read past."""
        ...

    async def take(self, size: int, most: int) -> list[Any]:
        """The next ``size`` items (fewer at the end), up to ``most`` of those the
        provider already handed over."""
        ...

    async def aclose(self) -> None:
        """Close the provider's iterator (its ``finally`` blocks run now)."""
        ...


def open_source(
    name: str,
    provider: UrlProvider,
    *,
    offset: int,
    limit: int | None,
    keyed: bool,
    key_range: tuple[Any, Any],
) -> Source:
    """The source one read of ``provider`` goes through: a key range through
    ``keyed_batches()``, else ``keyed()``; a page of known length through ``page()``;
    a :class:`CallableProvider`'s lists; else ``entries()``.

    Nothing is called yet: a provider is first called inside the stream's first timed
    call, so a method failing as it is called fails its section like any other.
    """
    if keyed:
        order = KeyOrder(name, key_range, getattr(provider, "repeats_keys", False) is True)
        if isinstance(provider, SupportsKeyedBatches):
            return KeyedBatchesSource(provider, key_range, order)
        # (a plan made keyed for a provider that lost keyed() fails its section here)
        return KeyedSource(cast(SupportsKeyset, provider), key_range, order)
    if isinstance(provider, SupportsPages) and limit is not None:
        return PageSource(provider, offset, limit)
    if isinstance(provider, CallableProvider):
        return BatchesSource(provider)
    return EntriesSource(provider)


class _Reader:
    """What every source shares: the provider's iterator, made when first read."""

    def __init__(self) -> None:
        self.exhausted = False
        self.keys: list[Any] = []
        self._iterator: AsyncIterator[Any] | None = None

    def _iterable(self) -> AsyncIterable[Any]:
        """The provider's iterable (its capability, called)."""
        raise NotImplementedError

    def _open(self) -> AsyncIterator[Any]:
        if self._iterator is None:
            self._iterator = aiter(self._iterable())
        return self._iterator

    async def aclose(self) -> None:
        iterator, self._iterator = self._iterator, None
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


class _Iterated(_Reader):
    """A source read item by item."""

    async def skip(self, count: int) -> int:
        iterator = self._open()
        count = min(BATCH_SIZE, count)
        for skipped in range(count):
            try:
                await anext(iterator)
            except StopAsyncIteration:  # ended before the page starts: an empty page
                self.exhausted = True
                return skipped
        return count

    async def take(self, size: int, most: int) -> list[Any]:
        items: list[Any] = []
        if size <= 0:
            return items
        append = items.append
        # ``async for`` calls __anext__ directly: no anext() wrapper per item. Leaving the
        # loop early leaves the iterator open for the next batch.
        async for item in self._open():
            append(item)
            if len(items) == size:
                break
        else:
            self.exhausted = True
        return items


class EntriesSource(_Iterated):
    """Every provider: ``entries()``, read past item by item to an offset."""

    def __init__(self, provider: UrlProvider) -> None:
        super().__init__()
        self._provider = provider

    def _iterable(self) -> AsyncIterable[Any]:
        return self._provider.entries()


class PageSource(_Iterated):
    """:class:`SupportsPages`: ``page(offset, limit)``, the provider skipping itself."""

    def __init__(self, provider: SupportsPages, offset: int, limit: int) -> None:
        super().__init__()
        self._provider, self._offset, self._limit = provider, offset, limit

    def _iterable(self) -> AsyncIterable[Any]:
        return self._provider.page(self._offset, self._limit)

    async def skip(self, count: int) -> int:
        self._open()  # the page starts at the offset
        return count


class KeyedSource(_Iterated):
    """:class:`SupportsKeyset`: ``(key, entry)`` pairs from ``keyed(after, upto)``."""

    def __init__(
        self, provider: SupportsKeyset, key_range: tuple[Any, Any], order: KeyOrder
    ) -> None:
        super().__init__()
        self._provider, self._key_range, self._order = provider, key_range, order

    def _iterable(self) -> AsyncIterable[Any]:
        return self._provider.keyed(*self._key_range)

    async def take(self, size: int, most: int) -> list[Any]:
        pairs = await super().take(size, most)
        if not all(type(pair) is tuple and len(pair) == 2 for pair in pairs):
            check_pairs(self._order.section, pairs)
        self.keys = keys = [pair[0] for pair in pairs]
        self._order.check(keys)
        return [pair[1] for pair in pairs]


class _Listed(_Reader):
    """A source of lists, one per provider call: skipped and taken by slicing, never
    item by item."""

    def __init__(self) -> None:
        super().__init__()
        self._buffer: list[Any] = []  # items handed over, waiting for a batch to take them
        self._done = False

    def _extend(self, batch: Any) -> None:
        self._buffer.extend(batch)

    def _drop(self, count: int) -> None:
        del self._buffer[:count]

    def _took(self, size: int) -> None:
        """The first ``size`` items of the buffer are being taken."""

    async def _fetch(self) -> None:
        try:
            self._extend(await anext(self._open()))
        except StopAsyncIteration:
            self._done = True

    async def skip(self, count: int) -> int:
        buffer = self._buffer
        if not buffer and not self._done:
            await self._fetch()
        dropped = min(count, len(buffer))
        self._drop(dropped)
        if count > dropped and self._done and not buffer:
            self.exhausted = True  # ended before the page starts: an empty page
        return dropped

    async def take(self, size: int, most: int) -> list[Any]:
        buffer = self._buffer
        while len(buffer) < size and not self._done:
            await self._fetch()
        size = max(size, min(len(buffer), most))
        self._took(size)
        items = buffer[:size]
        self._drop(size)
        if self._done and not buffer:
            self.exhausted = True
        return items


class BatchesSource(_Listed):
    """:class:`CallableProvider`: its lists from ``batches()`` (a sync iterable's items
    come a worker-thread hop at a time)."""

    def __init__(self, provider: CallableProvider) -> None:
        super().__init__()
        self._provider = provider

    def _iterable(self) -> AsyncIterable[Any]:
        return self._provider.batches()


class KeyedBatchesSource(_Listed):
    """:class:`SupportsKeyedBatches`: ``(keys, entries)`` lists from
    ``keyed_batches(after, upto)``; the keys wait beside their items (no pair per row)."""

    def __init__(
        self, provider: SupportsKeyedBatches, key_range: tuple[Any, Any], order: KeyOrder
    ) -> None:
        super().__init__()
        self._provider, self._key_range, self._order = provider, key_range, order
        self._key_buffer: list[Any] = []

    def _iterable(self) -> AsyncIterable[Any]:
        return self._provider.keyed_batches(*self._key_range)

    def _extend(self, batch: Any) -> None:
        keys, items = batch
        if len(keys) != len(items):
            raise ProviderError(
                self._order.section,
                f"keyed_batches() gave {len(keys)} keys for {len(items)} items",
            )
        self._key_buffer.extend(keys)
        self._buffer.extend(items)

    def _drop(self, count: int) -> None:
        del self._buffer[:count]
        del self._key_buffer[:count]

    def _took(self, size: int) -> None:
        self.keys = keys = self._key_buffer[:size]
        self._order.check(keys)


class KeyOrder:
    """What a keyed source's keys must be, batch after batch: see :func:`check_keys`."""

    def __init__(self, section: str, key_range: tuple[Any, Any], repeats: bool) -> None:
        self.section, self.key_range, self.repeats = section, key_range, repeats
        self.last_key: Any = None

    def check(self, keys: list[Any]) -> None:
        after = self.key_range[0] if self.last_key is None else self.last_key
        self.last_key = check_keys(
            self.section, keys, self.key_range, after, self.last_key, self.repeats
        )


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
