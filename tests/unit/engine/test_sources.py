"""Provider sources (``_engine/sources.py``): one per capability, each reading what
``entries()`` reads, picked in one order."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware._engine.sources import (
    BatchesSource,
    EntriesSource,
    KeyedBatchesSource,
    KeyedSource,
    PageSource,
    open_source,
)
from sitemap_middleware._engine.stream import EntryStream
from sitemap_middleware._sansio.urls import BaseURL
from sitemap_middleware.providers import CallableProvider

BASE = BaseURL.parse("https://example.com")


class Entries:
    """``entries()`` alone: URL ``/p/<key>`` for each key, keys 2, 4, 6, ..."""

    def __init__(self, n: int, chunks: list[int] | None = None) -> None:
        self.keys = [2 * (i + 1) for i in range(n)]
        self.chunks = chunks or [7]
        self.closed = 0

    def _in(self, after: Any, upto: Any) -> list[int]:
        return [
            k for k in self.keys if (after is None or k > after) and (upto is None or k <= upto)
        ]

    async def entries(self) -> AsyncIterator[str]:
        try:
            for key in self.keys:
                yield f"/p/{key}"
        finally:
            self.closed += 1


class Pages(Entries):
    async def page(self, offset: int, limit: int) -> AsyncIterator[str]:
        try:
            for key in self.keys[offset : offset + limit]:
                yield f"/p/{key}"
        finally:
            self.closed += 1


class Keyed(Entries):
    async def keyed(self, after: Any, upto: Any) -> AsyncIterator[tuple[int, str]]:
        try:
            for key in self._in(after, upto):
                yield key, f"/p/{key}"
        finally:
            self.closed += 1


class KeyedBatches(Keyed):
    async def keyed_batches(
        self, after: Any, upto: Any
    ) -> AsyncIterator[tuple[list[int], list[str]]]:
        keys, at, turn = self._in(after, upto), 0, 0
        try:
            while at < len(keys):  # lists of the sizes asked for, in turn (0: an empty list)
                size = self.chunks[turn % len(self.chunks)]
                chunk, at, turn = keys[at : at + size], at + size, turn + 1
                yield chunk, [f"/p/{key}" for key in chunk]
        finally:
            self.closed += 1


def _callable(n: int) -> CallableProvider:
    return CallableProvider(lambda: [f"/p/{2 * (i + 1)}" for i in range(n)])


@pytest.mark.parametrize(
    ("provider", "keyed", "limit", "source"),
    [
        (KeyedBatches(3), True, None, KeyedBatchesSource),
        (KeyedBatches(3), True, 5, KeyedBatchesSource),
        (Keyed(3), True, None, KeyedSource),
        (KeyedBatches(3), False, None, EntriesSource),  # the whole section, not a range
        (Pages(3), False, 5, PageSource),
        (Pages(3), False, None, EntriesSource),  # no length: read to the end
        (CallableProvider(lambda: ["/"]), False, 5, BatchesSource),
        (Entries(3), False, 5, EntriesSource),
    ],
)
def test_a_source_is_picked_by_capability_in_one_order(
    provider: Any, keyed: bool, limit: int | None, source: type
) -> None:
    picked = open_source("s", provider, offset=0, limit=limit, keyed=keyed, key_range=(None, None))
    assert type(picked) is source


async def _read(stream: EntryStream, keyed: bool) -> tuple[list[tuple[Any, str]], int]:
    out: list[tuple[Any, str]] = []
    try:
        while raw := await stream.next_raw():
            start = stream.pulled - len(raw)
            for place, item in enumerate(stream.admit_one_by_one(raw)):
                assert item is not None  # (every URL valid)
                out.append((stream.key_at(start + place) if keyed else None, item[0]))
    finally:
        await stream.aclose()
    return out, stream.pulled


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 1300),
    offset=st.integers(0, 1400),
    limit=st.none() | st.integers(0, 1300),
    chunks=st.lists(st.integers(0, 900), min_size=1, max_size=4).filter(any),
    after=st.none() | st.integers(0, 2600),
    span=st.none() | st.integers(0, 2600),
    kind=st.sampled_from(["pages", "callable", "keyed", "keyed_batches"]),
)
def test_every_source_reads_what_entries_reads(
    n: int,
    offset: int,
    limit: int | None,
    chunks: list[int],
    after: int | None,
    span: int | None,
    kind: str,
) -> None:
    """Any offset and limit (a key range for keyed sources), lists of any sizes: the same
    URLs with the same keys, and the same raw count, as ``entries()`` read item by item."""
    keyed = kind.startswith("keyed")
    upto = None if span is None else (after or 0) + span
    key_range = (after, upto) if keyed else (None, None)
    make = {"pages": Pages, "keyed": Keyed, "keyed_batches": KeyedBatches}

    async def both() -> None:
        provider = _callable(n) if kind == "callable" else make[kind](n, chunks)
        plain = Entries(n)
        kw: dict[str, Any] = {"offset": offset, "limit": limit, "timeout": 5, "strict": False}
        stream = EntryStream("s", provider, BASE, keyed=keyed, key_range=key_range, **kw)
        read = await _read(stream, keyed)
        keys = plain._in(*key_range)[offset:][: limit if limit is not None else None]
        expected = [(k if keyed else None, f"https://example.com/p/{k}") for k in keys]
        if not keyed:
            assert read == await _read(EntryStream("s", plain, BASE, **kw), False)
        assert read == (expected, len(expected))

    anyio.run(both)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Entries, Pages, Keyed, KeyedBatches])
async def test_a_stream_closed_early_closes_its_source(kind: type[Entries]) -> None:
    provider = kind(2000, [300])
    stream = EntryStream(
        "s",
        provider,
        BASE,
        limit=None if kind is not Pages else 2000,
        timeout=5,
        strict=False,
        keyed=kind in (Keyed, KeyedBatches),
    )
    assert await stream.next_batch()
    assert provider.closed == 0
    await stream.aclose()
    assert provider.closed == 1
