"""Entry streams over providers that hand over lists read exactly what item-by-item reads."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware._engine.stream import BATCH_SIZE, EntryStream
from sitemap_middleware._sansio.urls import BaseURL
from sitemap_middleware.providers import CallableProvider

BASE = BaseURL.parse("https://example.com")


class OneByOne:
    """The same URLs from a plain async generator (no lists)."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    async def entries(self) -> AsyncIterator[str]:
        for url in self.urls:
            yield url


async def _read(
    provider: object, offset: int, limit: int | None, batch_size: int = BATCH_SIZE
) -> tuple[list[str], int]:
    stream = EntryStream(
        "s",
        provider,  # type: ignore[arg-type]
        BASE,
        offset=offset,
        limit=limit,
        timeout=5,
        strict=False,
        batch_size=batch_size,
    )
    out: list[str] = []
    try:
        while batch := await stream.next_batch():
            # Larger batches only of what was handed over, and never past a limit.
            assert len(batch) <= max(BATCH_SIZE, batch_size)
            assert limit is None or len(batch) <= BATCH_SIZE
            out += [loc for loc, _, _ in batch]
    finally:
        await stream.aclose()
    return out, stream.pulled


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 2600),
    offset=st.integers(0, 2700),
    limit=st.none() | st.integers(0, 2600),
    generator=st.booleans(),
    batch_size=st.sampled_from([BATCH_SIZE, 1000, 3000]),
)
def test_batched_reads_match_item_by_item(
    n: int, offset: int, limit: int | None, generator: bool, batch_size: int
) -> None:
    """Any offset and limit over a list or a generator, in batches of any size: same
    URLs, same raw count."""
    urls = [f"https://example.com/p/{i}" for i in range(n)]
    factory = (lambda: (u for u in urls)) if generator else (lambda: urls)

    async def both() -> None:
        batched = await _read(CallableProvider(factory), offset, limit, batch_size)
        plain = await _read(OneByOne(urls), offset, limit)
        assert batched == plain

    anyio.run(both)
