"""Response bodies: async byte streams the core hands to the adapters."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Protocol

from .._exceptions import SitemapError
from .._sansio.models import Admitted, SitemapEntry
from .._sansio.render import Chunker
from .stream import EntryStream, logger

__all__ = [
    "URLWriter",
    "bytes_body",
    "chain",
    "logging_abort",
    "opened",
    "text_body",
    "urlset_body",
]

LOG_ABORTED = "sitemap %s: aborting the response after headers were sent: %s"


class URLWriter(Protocol):
    """A streaming writer of one document of URLs: XML urlset, text or HTML view."""

    def open(self, first: Sequence[SitemapEntry] = ()) -> str: ...

    def urls(self, batch: Iterable[Admitted]) -> str: ...

    def close(self) -> str: ...


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


async def urlset_body(
    writer: URLWriter,
    streams: list[EntryStream],
    first: list[Admitted],
) -> AsyncIterator[bytes]:
    """Render a urlset (or text sitemap) from open streams; abort, never truncate quietly."""
    chunker = Chunker()
    try:  # errors are logged where the body meets the status line (logging_abort)
        # Every add() may complete a chunk: each one returned is sent, none dropped.
        if out := chunker.add(writer.open([entry for _, _, entry in first if entry is not None])):
            yield out
        batch = first
        for stream in streams:
            while True:
                if out := chunker.add(writer.urls(batch)):
                    yield out
                batch = await stream.next_batch()
                if not batch:
                    break
        # add() may itself return a full chunk: finish() never drops it.
        yield chunker.finish(writer.close())
    finally:
        for stream in streams:
            await stream.aclose()


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
