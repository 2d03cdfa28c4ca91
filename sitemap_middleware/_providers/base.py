"""The provider protocol, its optional capabilities, and adapters for plain Python data.

A provider is anything with ``entries()`` returning an async iterable of entries (or URL
strings, or mappings of entry fields). The optional capabilities below let the core do
less work; without them it iterates.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from datetime import date, datetime
from itertools import islice
from time import perf_counter
from typing import Any, Protocol, TypeAlias, runtime_checkable

from .._exceptions import InvalidEntryError
from .._sansio.ledger import Carried
from .._sansio.models import Mapped, SitemapEntry, coerce_entry, map_each
from .._sansio.skip import SkipType
from .._sansio.values import to_datetime
from .identity import qualified_name
from .threads import MAX_SECTION_THREADS, WorkerThreads

__all__ = [
    "CallableProvider",
    "EntryLike",
    "ProviderLike",
    "ProviderVersion",
    "StaticProvider",
    "SupportsCount",
    "SupportsKeyedBatches",
    "SupportsKeyset",
    "SupportsPageLastModified",
    "SupportsPages",
    "SupportsRangeVersion",
    "SupportsVersion",
    "UrlProvider",
    "as_provider",
    "provider_identity",
]

EntryLike: TypeAlias = "SitemapEntry | str | Mapping[str, Any] | Mapped | SkipType"

#: Items pulled from a sync iterable by one worker-thread hop, at least (unless it ends).
#: Each hop is one call timed by ``provider_timeout``, so a hop takes more only while it
#: is quick: ``SYNC_STEP`` items at a time, as long as it has run under ``SYNC_HOP_SECONDS``,
#: up to ``MAX_SYNC_BATCH``. A slow row source (one query per row) is thus bound per 1,000
#: rows (growing hops by count alone made a 0.1 ms-per-row source miss a 1 s timeout),
#: and rows already in memory cross to the event loop in a few hops, not one per 1,000
#: (a hop costs about 0.1 ms, as much as 3,000 such rows).
SYNC_BATCH = 1000
SYNC_STEP = 250
MAX_SYNC_BATCH = 16 * SYNC_BATCH
SYNC_HOP_SECONDS = 0.005
#: The clock hops are timed with (a module attribute, so tests can set the time).
_now = perf_counter


@dataclass(frozen=True, slots=True)
class ProviderVersion:
    """What a provider knows about its own freshness, without listing entries.

    ``token`` changes whenever any entry changes (a revision number, a hash, ``max(id)``
    with a row count); ``last_modified`` is the newest ``lastmod`` of its entries. Either
    one lets the middleware answer conditional requests without iterating. A naive
    ``last_modified`` means UTC (it is stored with the UTC zone); a ``date`` means its
    midnight UTC.
    """

    token: str | None = None
    last_modified: datetime | None = None

    def __post_init__(self) -> None:
        if self.token is not None and not isinstance(self.token, str):
            raise TypeError(f"ProviderVersion.token must be a str or None, got {self.token!r}")
        modified = self.last_modified
        if modified is None:
            return
        if not isinstance(modified, date):
            raise TypeError(
                f"ProviderVersion.last_modified must be a datetime or None, got {modified!r}"
            )
        # The one place provider freshness gets its zone: versions from several
        # sections are compared (the index's Last-Modified is their maximum).
        object.__setattr__(self, "last_modified", to_datetime(modified))


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
class SupportsKeyedBatches(Protocol):
    """Capability: what ``keyed(after, upto)`` yields, a batch at a time as two lists
    of one length, ``(keys, entries)``.

    One await per batch, not per row (a keyset provider reads its rows a query at a
    time), and no pair per row.
    """

    def keyed_batches(
        self, after: Any, upto: Any
    ) -> AsyncIterable[tuple[list[Any], list[EntryLike]]]: ...


@runtime_checkable
class SupportsPageLastModified(Protocol):
    """Capability: the newest lastmod of each page of ``page_size`` entries.

    Pages are planned by bytes as well as count and the planning pass finds each page's
    newest entry lastmod itself; this is read only for pages whose entries carry none,
    when bytes moved no page boundary.
    """

    async def page_last_modified(self, page_size: int) -> Sequence[datetime | None]: ...


@runtime_checkable
class SupportsRangeVersion(Protocol):
    """Capability (keyset providers): how many rows ``after < key <= upto`` holds and
    their version alone, so a key-range page is validated at the cost of its own rows,
    not its whole section's. The token changes whenever a row of the range does (it is
    what the section's version is for the whole key space)."""

    async def range_version(self, after: Any, upto: Any) -> tuple[int, ProviderVersion]: ...


ProviderLike: TypeAlias = (
    "UrlProvider | Sequence[EntryLike] | Iterable[EntryLike] | AsyncIterable[EntryLike]"
    " | Callable[[], Any]"
)


class StaticProvider:
    """A fixed list of entries or URL strings, validated once, up front.

    Supports every capability: count, pages, version (a hash of the entries) and
    per-page last-modified times.
    """

    def __init__(self, items: Iterable[EntryLike], *, _digest_key: str | None = None) -> None:
        # ``_digest_key``: the ledger's key mappings may carry (``Ledger``); such items
        # stay Carried with their digest (the version names it; admission unwraps them)
        self._entries: tuple[Any, ...] = tuple(_numbered(items, _digest_key))
        digest = hashlib.sha256()
        for entry in self._entries:
            digest.update(repr(entry).encode("utf-8", "surrogatepass"))
        # Converted once: the version and every index's page lastmods are read from it.
        entries: list[SitemapEntry | SkipType] = [
            e.entry if type(e) is Carried else e for e in self._entries
        ]
        self._dates = [
            None if isinstance(e, SkipType) or e.lastmod is None else to_datetime(e.lastmod)
            for e in entries
        ]
        known = [d for d in self._dates if d is not None]
        self._version = ProviderVersion(digest.hexdigest()[:32], max(known) if known else None)

    async def entries(self) -> AsyncIterator[SitemapEntry | SkipType]:
        for entry in self._entries:
            yield entry

    async def page(self, offset: int, limit: int) -> AsyncIterator[SitemapEntry | SkipType]:
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
    thread, ``SYNC_BATCH`` items per hop (more while a hop is quick, see there), so a
    blocking ORM query never stalls the event loop.

    ``provider_timeout`` binds sync code too: a request stops waiting for a blocked
    thread at once. The thread itself cannot be stopped; it goes on until the blocking
    call returns. At most ``max_threads`` threads work for this provider at a time,
    blocked ones included, so a hung database holds a bounded number of threads and
    other sections keep theirs.

    ``map``: a function from what ``factory`` yields (rows, objects) to an entry. The
    middleware calls it row by row, so a row it raises on is left out and logged with
    the row, and the rest of the page is served. (An exception raised inside a
    generator ends that generator: only the library can catch per row.)
    """

    def __init__(
        self,
        factory: Callable[[], Any],
        *,
        map: Callable[[Any], EntryLike | None] | None = None,
        max_threads: int = MAX_SECTION_THREADS,
        _identity: str | None = None,
    ) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be callable, got {factory!r}")
        if map is not None and not callable(map):
            raise TypeError(f"map must be callable, got {map!r}")
        self._factory = factory
        self._identity = _identity or "callable:" + qualified_name(factory)
        self._map = map
        self._is_async = inspect.iscoroutinefunction(factory) or inspect.isasyncgenfunction(factory)
        # Calling a generator function runs none of its code (that waits for the first
        # next(), in a worker thread): no hop is needed to make the generator.
        self._makes_generator = inspect.isgeneratorfunction(factory) or (
            not inspect.isroutine(factory) and inspect.isgeneratorfunction(type(factory).__call__)
        )
        self._threads = WorkerThreads(max_threads)

    async def _call(self) -> Any:
        if self._is_async or self._makes_generator:
            result = self._factory()
        else:
            result = await self._threads.run(self._factory)
        if inspect.isawaitable(result):
            result = await result
        return result

    def batches(self) -> AsyncIterator[list[EntryLike]]:
        """What ``entries()`` yields, in lists: one await per list, not per entry.

        Lists come ``SYNC_BATCH`` items at a time, sync iterables in growing lists (one
        worker-thread hop per list); an async iterable one item at a time, as it produces
        them.
        """
        batches = self._batches()
        return batches if self._map is None else self._mapped(batches, self._map)

    async def _mapped(
        self, batches: AsyncIterator[list[EntryLike]], function: Callable[[Any], EntryLike | None]
    ) -> AsyncIterator[list[EntryLike]]:
        name = getattr(function, "__name__", "map")
        try:
            async for batch in batches:
                # Row by row: a failing row costs that row only (its error is its item).
                yield map_each(function, batch, name)
        finally:
            await batches.aclose()  # type: ignore[attr-defined]

    async def _batches(self) -> AsyncIterator[list[EntryLike]]:
        result = await self._call()
        if isinstance(result, AsyncIterable):
            iterator = aiter(result)
            try:
                async for item in iterator:
                    yield [item]
            finally:
                aclose = getattr(iterator, "aclose", None)
                if aclose is not None:
                    await aclose()
        elif isinstance(result, list | tuple):
            for start in range(0, len(result), SYNC_BATCH):
                yield list(result[start : start + SYNC_BATCH])
        elif isinstance(result, Iterable):
            sync_iter = iter(result)
            close = getattr(sync_iter, "close", None)
            # Once a hop fails or is given up, closing is the worker's job: a generator
            # must not be closed while a (hung) thread still executes it.
            closed_by_worker = False
            try:
                while True:
                    try:
                        batch = await self._threads.run(_take, sync_iter, cleanup=close)
                    except BaseException:
                        closed_by_worker = True
                        raise
                    if not batch:
                        break
                    yield batch
            finally:
                if close is not None and not closed_by_worker:
                    close()
        else:
            raise TypeError(f"provider factory returned {type(result).__name__}, not an iterable")

    async def entries(self) -> AsyncIterator[EntryLike]:
        batches = self.batches()
        try:
            async for batch in batches:
                for item in batch:
                    yield item
        finally:
            await batches.aclose()  # type: ignore[attr-defined]


def provider_identity(provider: UrlProvider) -> str:
    """What tells this provider's data apart from another's, the same in every process.

    In render-store keys (``_engine/keys.py``): deployments sharing a store never share
    pages. A provider's own ``cache_identity`` string, else a :class:`StaticProvider`'s
    content hash, a :class:`CallableProvider`'s function name, or its class name.
    """
    identity = getattr(provider, "cache_identity", None)
    if isinstance(identity, str):
        return identity
    if isinstance(provider, StaticProvider):
        return "static:" + (provider._version.token or "")
    if isinstance(provider, CallableProvider):
        return provider._identity
    return "class:" + qualified_name(type(provider))


def _take(iterator: Iterator[EntryLike]) -> list[EntryLike]:
    """One hop's items (run in a worker thread): see ``SYNC_BATCH``. Fewer than
    ``SYNC_BATCH`` only when the iterator is done."""
    started = _now()
    batch = list(islice(iterator, SYNC_BATCH))
    if len(batch) < SYNC_BATCH:
        return batch
    while len(batch) < MAX_SYNC_BATCH and _now() - started < SYNC_HOP_SECONDS:
        step = list(islice(iterator, SYNC_STEP))
        batch += step
        if len(step) < SYNC_STEP:
            break
    return batch


#: The provider protocol's methods: isinstance() on a runtime-checkable Protocol only
#: sees that the attribute exists, so a plain value there would fail on every request.
_METHODS = ("entries", "count", "page", "version", "page_last_modified")


def _check_methods(provider: object) -> None:
    missing = object()
    for name in _METHODS:
        attribute = getattr(provider, name, missing)
        if attribute is not missing and not callable(attribute):
            raise TypeError(
                f"{type(provider).__name__}.{name} is {attribute!r} "
                f"({type(attribute).__name__}), not a method: a provider's {name} must be "
                f"a method (see the {'UrlProvider' if name == 'entries' else 'Supports*'} "
                "protocols), or absent"
            )


def as_provider(value: ProviderLike, digest_key: str | None = None) -> UrlProvider:
    """Adapt a provider-like value: a provider, a list, a re-iterable or a callable.

    One-shot iterators (generator objects) are refused: they would serve one request and
    then an empty sitemap. Pass the generator *function* instead. ``digest_key``: the
    content ledger's key, which a list's mappings may carry.
    """
    if isinstance(value, UrlProvider):
        _check_methods(value)
        return value
    if isinstance(value, list | tuple):
        return StaticProvider(value, _digest_key=digest_key)
    if callable(value):
        return CallableProvider(value)
    if isinstance(value, AsyncIterable):
        if isinstance(value, AsyncIterator):
            raise TypeError(
                "an async iterator can be iterated once only; pass the async generator "
                "function (or a callable returning the iterable) instead"
            )
        return CallableProvider(lambda: value, _identity="iterable:" + qualified_name(type(value)))
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        if iter(value) is value:
            raise TypeError(
                "an iterator can be iterated once only; pass the generator function "
                "(or a callable returning the iterable) instead"
            )
        return CallableProvider(lambda: value, _identity="iterable:" + qualified_name(type(value)))
    raise TypeError(f"cannot use {type(value).__name__} as a URL provider")


def _numbered(
    items: Iterable[EntryLike], key: str | None
) -> Iterator[SitemapEntry | SkipType | Carried]:
    """Each item as an entry; a bad one is named by its position (what a user edits).
    :data:`SKIP` stays in its place (left out when served, and counted); a mapping
    carrying the ledger's ``key`` is kept with its digest."""
    for number, item in enumerate(items):
        if isinstance(item, SkipType):
            yield item
            continue
        try:
            if key is not None and isinstance(item, Mapping) and key in item:
                fields = {k: v for k, v in item.items() if k != key}
                yield Carried(coerce_entry(fields), item[key])
                continue
            yield coerce_entry(item)
        except InvalidEntryError as exc:
            raise InvalidEntryError(
                exc.field, exc.value, f"{exc.reason} (StaticProvider item {number} ({item!r:.80}))"
            ) from None
