"""The provider protocol, its optional capabilities, and adapters for plain Python data.

A provider is anything with ``entries()`` returning an async iterable of entries (or URL
strings, or mappings of entry fields). The optional capabilities below let the core do
less work; without them it iterates.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any, Protocol, TypeAlias, runtime_checkable

import anyio.to_thread

from .._sansio.models import Mapped, SitemapEntry, coerce_entry
from .._sansio.values import to_datetime

__all__ = [
    "CallableProvider",
    "EntryLike",
    "ProviderLike",
    "ProviderVersion",
    "StaticProvider",
    "SupportsCount",
    "SupportsKeyset",
    "SupportsPageLastModified",
    "SupportsPages",
    "SupportsVersion",
    "UrlProvider",
    "as_provider",
]

EntryLike: TypeAlias = "SitemapEntry | str | Mapping[str, Any] | Mapped"

#: Items pulled from a sync iterable per worker-thread hop: large enough to amortise
#: the hop, small enough to keep the first bytes quick.
SYNC_BATCH = 1000


@dataclass(frozen=True, slots=True)
class ProviderVersion:
    """What a provider knows about its own freshness, without listing entries.

    ``token`` changes whenever any entry changes (a revision number, a hash, ``max(id)``
    with a row count); ``last_modified`` is the newest ``lastmod`` of its entries. Either
    one lets the middleware answer conditional requests without iterating.
    """

    token: str | None = None
    last_modified: datetime | None = None


@runtime_checkable
class UrlProvider(Protocol):
    """The entries of one section: the only method every provider must have."""

    def entries(self) -> AsyncIterable[EntryLike]:
        """Yield every entry of the section, in a stable order."""
        ...


@runtime_checkable
class SupportsCount(Protocol):
    """Capability: how many entries there are, cheaply (plans the index)."""

    async def count(self) -> int: ...


@runtime_checkable
class SupportsPages(Protocol):
    """Capability: entries ``offset`` to ``offset + limit`` without reading the ones before."""

    def page(self, offset: int, limit: int) -> AsyncIterable[EntryLike]: ...


@runtime_checkable
class SupportsVersion(Protocol):
    """Capability: a version token and/or last-modified time (validators without iterating)."""

    async def version(self) -> ProviderVersion: ...


@runtime_checkable
class SupportsKeyset(Protocol):
    """Capability: entries paired with a unique, ordered key, read by key range.

    ``keyed(after, upto)`` yields ``(key, entry)`` in increasing key order for every key
    with ``after < key <= upto`` (``None`` leaves that end open). Pages are then key
    ranges recorded in the plan, so a row keeps its page while others come and go.
    Keys must be unique and never ``None``.
    """

    def keyed(self, after: Any, upto: Any) -> AsyncIterable[tuple[Any, EntryLike]]: ...


@runtime_checkable
class SupportsPageLastModified(Protocol):
    """Capability: the newest lastmod of each page of ``page_size`` entries.

    No longer read by the middleware: pages are planned by bytes as well as count, and
    the planning pass finds each page's newest lastmod itself.
    """

    async def page_last_modified(self, page_size: int) -> Sequence[datetime | None]: ...


ProviderLike: TypeAlias = (
    "UrlProvider | Sequence[EntryLike] | Iterable[EntryLike] | AsyncIterable[EntryLike]"
    " | Callable[[], Any]"
)


class StaticProvider:
    """A fixed list of entries or URL strings, validated once, up front.

    Supports every capability: count, pages, version (a hash of the entries) and
    per-page last-modified times.
    """

    def __init__(self, items: Iterable[EntryLike]) -> None:
        self._entries: tuple[SitemapEntry, ...] = tuple(coerce_entry(i) for i in items)
        digest = hashlib.sha256()
        for entry in self._entries:
            digest.update(repr(entry).encode("utf-8", "surrogatepass"))
        # Converted once: the version and every index's page lastmods are read from it.
        self._dates = [None if e.lastmod is None else to_datetime(e.lastmod) for e in self._entries]
        known = [d for d in self._dates if d is not None]
        self._version = ProviderVersion(digest.hexdigest()[:32], max(known) if known else None)

    async def entries(self) -> AsyncIterator[SitemapEntry]:
        for entry in self._entries:
            yield entry

    async def page(self, offset: int, limit: int) -> AsyncIterator[SitemapEntry]:
        for entry in self._entries[offset : offset + limit]:
            yield entry

    async def count(self) -> int:
        return len(self._entries)

    async def version(self) -> ProviderVersion:
        return self._version

    async def page_last_modified(self, page_size: int) -> list[datetime | None]:
        pages = []
        for start in range(0, len(self._dates), page_size):
            known = [d for d in self._dates[start : start + page_size] if d is not None]
            pages.append(max(known) if known else None)
        return pages


class CallableProvider:
    """Entries from calling ``factory()`` on every request.

    ``factory`` may be a sync or async function, or a sync or async generator function;
    it may return a list, any iterable or an async iterable. Sync code runs in a worker
    thread, ``SYNC_BATCH`` items per hop, so a blocking ORM query never stalls the event
    loop.

    ``map``: a function from what ``factory`` yields (rows, objects) to an entry. The
    middleware calls it row by row, so a row it raises on is left out and logged with
    the row, and the rest of the page is served. (An exception raised inside a
    generator ends that generator: only the library can catch per row.)
    """

    def __init__(
        self, factory: Callable[[], Any], *, map: Callable[[Any], EntryLike] | None = None
    ) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be callable, got {factory!r}")
        if map is not None and not callable(map):
            raise TypeError(f"map must be callable, got {map!r}")
        self._factory = factory
        self._map = map
        self._is_async = inspect.iscoroutinefunction(factory) or inspect.isasyncgenfunction(factory)

    def entries(self) -> AsyncIterator[EntryLike]:
        items = self._items()
        return items if self._map is None else self._mapped(items, self._map)

    async def _mapped(
        self, items: AsyncIterator[EntryLike], function: Callable[[Any], EntryLike]
    ) -> AsyncIterator[EntryLike]:
        name = getattr(function, "__name__", "map")
        try:
            async for item in items:
                yield Mapped(function, item, name)  # resolved row by row by the middleware
        finally:
            await items.aclose()  # type: ignore[attr-defined]

    async def _items(self) -> AsyncIterator[EntryLike]:
        if self._is_async:
            result = self._factory()
        else:
            result = await anyio.to_thread.run_sync(self._factory)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, AsyncIterable):
            iterator = aiter(result)
            try:
                async for item in iterator:
                    yield item
            finally:
                aclose = getattr(iterator, "aclose", None)
                if aclose is not None:
                    await aclose()
        elif isinstance(result, list | tuple):
            for item in result:
                yield item
        elif isinstance(result, Iterable):
            sync_iter = iter(result)
            try:
                while batch := await anyio.to_thread.run_sync(_take, sync_iter):
                    for item in batch:
                        yield item
            finally:
                close = getattr(sync_iter, "close", None)
                if close is not None:
                    close()
        else:
            raise TypeError(f"provider factory returned {type(result).__name__}, not an iterable")


def _take(iterator: Iterable[EntryLike]) -> list[EntryLike]:
    return list(islice(iterator, SYNC_BATCH))


def as_provider(value: ProviderLike) -> UrlProvider:
    """Adapt a provider-like value: a provider, a list, a re-iterable or a callable.

    One-shot iterators (generator objects) are refused: they would serve one request and
    then an empty sitemap. Pass the generator *function* instead.
    """
    if isinstance(value, UrlProvider):
        return value
    if isinstance(value, list | tuple):
        return StaticProvider(value)
    if callable(value):
        return CallableProvider(value)
    if isinstance(value, AsyncIterable):
        if isinstance(value, AsyncIterator):
            raise TypeError(
                "an async iterator can be iterated once only; pass the async generator "
                "function (or a callable returning the iterable) instead"
            )
        return CallableProvider(lambda: value)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        if iter(value) is value:
            raise TypeError(
                "an iterator can be iterated once only; pass the generator function "
                "(or a callable returning the iterable) instead"
            )
        return CallableProvider(lambda: value)
    raise TypeError(f"cannot use {type(value).__name__} as a URL provider")
