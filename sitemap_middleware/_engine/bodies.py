"""Response bodies: async byte streams the core hands to the adapters."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from datetime import date, datetime
from typing import Protocol

from .._exceptions import SitemapError, SitemapLimitError
from .._logs import logger
from .._sansio.batches import Batch, PlainBatch
from .._sansio.models import Admitted, SitemapEntry
from .._sansio.urlset_writer import Chunker, LimitedWriter, UrlsetWriter
from .._sansio.values import to_datetime
from .._sansio.xml import tail_lastmod
from .stream import EntryStream

__all__ = [
    "ClosingBody",
    "SizedStream",
    "StoredBody",
    "stored_body",
    "URLWriter",
    "bytes_body",
    "chain",
    "logging_abort",
    "opened",
    "text_body",
    "urlset_body",
]

LOG_ABORTED = "sitemap %s: aborting the response after headers were sent: %s"
LOG_OUTGREW = (
    "sitemap %s: its key range outgrew the page budget since the index was made; "
    "serving its first %d URLs, the rest of the range waits for the next index"
)
LOG_OVERSIZE = (
    "sitemap section %r: skipping invalid entry: invalid loc %r: its <url> element "
    "(%d bytes) is larger than a whole page (max_bytes_per_page %d)"
)


class URLWriter(Protocol):
    """A streaming writer of one document of URLs: XML urlset, text or HTML view.

    ``full`` is true once a capped writer (a key-range page) holds all it may.
    """

    label: str
    full: bool
    count: int

    def open(self, first: Sequence[SitemapEntry] = ()) -> str: ...

    def urls(self, batch: Iterable[Admitted]) -> str: ...

    def close(self) -> str: ...


class StoredBody:
    """A body whole in memory (a stored render): replies send its ``Content-Length``, and
    adapters may hand ``data`` to the server at once (no task, no portal call).

    Iterated, it yields slices of ``SEND_BYTES``, so a server that buffers what a slow
    client has not taken yet buffers a slice, not a copy of the whole body.
    """

    __slots__ = ("_offset", "data")

    #: Bytes per slice: large enough that per-send costs vanish on an 8 MiB body.
    SEND_BYTES = 256 * 1024

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._offset = 0

    def __aiter__(self) -> StoredBody:
        return self

    async def __anext__(self) -> bytes:
        start = self._offset
        if start >= len(self.data):
            raise StopAsyncIteration
        self._offset = start + self.SEND_BYTES
        return self.data[start : self._offset]  # the whole body itself when it fits

    @property
    def length(self) -> int:
        return len(self.data)

    async def aclose(self) -> None:
        self._offset = len(self.data)


class SizedStream:
    """A stored body a store streams (checking it as it goes): its length is known, so
    replies send ``Content-Length``; a mismatch found mid-way aborts the reply, which a
    client then sees as short of that length, never as a complete document."""

    __slots__ = ("_chunks", "length")

    def __init__(self, length: int, chunks: AsyncIterator[bytes]) -> None:
        self.length = length
        self._chunks = chunks

    def __aiter__(self) -> SizedStream:
        return self

    async def __anext__(self) -> bytes:
        return await anext(self._chunks)

    async def aclose(self) -> None:
        await self._chunks.aclose()  # type: ignore[attr-defined]


def stored_body(
    found: bytes | AsyncIterator[bytes] | None, length: int
) -> StoredBody | SizedStream | None:
    """What a store's ``body()`` gave, as a body to send (``None``: a miss)."""
    if found is None:
        return None
    if isinstance(found, bytes):
        return StoredBody(found)
    return SizedStream(length, found)


async def bytes_body(data: bytes) -> AsyncIterator[bytes]:
    """A body of bytes already in memory (errors, robots.txt, the stylesheet)."""
    yield data


async def text_body(pieces: Iterable[str]) -> AsyncIterator[bytes]:
    """Strings (a document written piece by piece) as UTF-8 chunks of about CHUNK_SIZE.

    Every chunk :meth:`Chunker.add` completes is sent, and the rest once at the end.
    """
    chunker = Chunker()
    for piece in pieces:
        if out := chunker.add(piece):
            yield out
    if rest := chunker.flush():
        yield rest


async def opened(body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """A document opener for bodies that need no setup before the status line."""
    return body


async def chain(head: list[bytes], rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """Chunks already rendered, then the rest of the stream (closed with this body)."""
    try:
        for chunk in head:
            yield chunk
        async for chunk in rest:
            yield chunk
    finally:
        await rest.aclose()  # type: ignore[attr-defined]


class ClosingBody:
    """A urlset body whose ``aclose()`` closes its streams even if it never started.

    An async generator closed before its first ``__anext__`` never runs its ``finally``:
    a HEAD (which opens a body only to learn its status) would leave the provider's
    iterator to the garbage collector.
    """

    def __init__(self, body: AsyncGenerator[bytes, None], streams: list[EntryStream]) -> None:
        self._body = body
        self._streams = streams

    def __aiter__(self) -> ClosingBody:
        return self

    async def __anext__(self) -> bytes:
        return await self._body.__anext__()

    async def aclose(self) -> None:
        try:
            await self._body.aclose()
        finally:
            for stream in self._streams:
                await stream.aclose()  # idempotent: a second close does nothing


async def urlset_body(
    writer: URLWriter,
    streams: list[EntryStream],
    first: Batch,
    outgrew: Callable[[bool], None] | None = None,
    allow_empty: bool = False,
    dated: datetime | None = None,
) -> AsyncGenerator[bytes, None]:
    """Render a urlset (or text sitemap) from open streams; abort, never truncate quietly.

    ``outgrew``: called when a page outgrows its budget (a capped one is closed there,
    any other aborted), and when every entry it read was too large for a page (a page
    planned from row counts: such an empty document would be invalid, so it is aborted
    instead, unless ``allow_empty``). Its argument says whether the page's bytes missed
    its plan (False: more rows than a page holds, rows inserted since the index: the
    data's news, not a wrong estimate). ``dated``: the lastmod the index gave the page
    (one planned from row counts dates its pages by the lastmod column): an entry newer
    than it is a miss too (the page is served)."""
    chunker = Chunker()
    try:  # errors are logged where the body meets the status line (logging_abort)
        # Every add() may complete a chunk: each one returned is sent, none dropped.
        if out := chunker.add(writer.open([entry for _, _, entry in first if entry is not None])):
            yield out
        batch = first
        for stream in streams:
            while True:
                try:
                    out = chunker.add(writer.urls(batch))
                except SitemapLimitError:  # (an uncapped file: its plan was wrong)
                    if outgrew is not None:
                        outgrew(True)
                    raise
                if out:
                    yield out
                if dated is not None and outgrew is not None and _newer(batch, dated):
                    outgrew(True)
                    dated = None
                if writer.full:  # a key-range page that outgrew its budget: close it here
                    logger.warning(LOG_OUTGREW, writer.label, writer.count)
                    if outgrew is not None:
                        # (full by bytes: a miss; by count: more rows than a page holds)
                        by_count = isinstance(writer, LimitedWriter) and (
                            writer.count >= writer.max_items
                        )
                        outgrew(not by_count)
                    break
                if isinstance(writer, UrlsetWriter) and writer.oversize:
                    for loc, size in writer.oversize:
                        logger.warning(LOG_OVERSIZE, stream.name, loc, size, writer.max_bytes)
                    writer.oversize.clear()
                batch = await stream.next_batch()
                if not batch:
                    break
        if outgrew is not None and not writer.count and not allow_empty:
            outgrew(True)
            raise SitemapError(f"{writer.label}: no entry of this page fits a page")
        # add() may itself return a full chunk: finish() never drops it.
        yield chunker.finish(writer.close())
    finally:
        for stream in streams:
            await stream.aclose()


def _newer(batch: Batch, dated: datetime) -> bool:
    """Whether an entry of ``batch`` is dated after ``dated``."""
    if isinstance(batch, PlainBatch):
        return batch.newest is not None and batch.newest > dated
    for _, tail, entry in batch:
        # (a plain entry's date is in its tail alone)
        lastmod: date | str | None = entry.lastmod if entry is not None else tail_lastmod(tail)
        if lastmod is not None and to_datetime(lastmod) > dated:
            return True
    return False


async def logging_abort(label: str, body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``body`` as sent after the status line: a failure is logged once and re-raised.

    A failure after the status line cannot become an error page: re-raising makes the
    server drop the connection, so no client mistakes the partial body for a complete
    sitemap (no closing tag is ever written after a gap).
    """
    try:
        async for chunk in body:
            yield chunk
    except (SitemapError, ValueError) as exc:
        logger.error(LOG_ABORTED, label, exc)
        raise
    finally:
        await body.aclose()  # type: ignore[attr-defined]
