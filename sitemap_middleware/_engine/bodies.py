"""Response bodies: async byte streams the core hands to the adapters."""

from __future__ import annotations

from collections.abc import AsyncIterator

from .._exceptions import SitemapError
from .._sansio.models import Admitted
from .._sansio.render import Chunker, TextWriter, UrlsetWriter
from .stream import EntryStream, logger

__all__ = ["bytes_body", "chain", "logging_abort", "opened", "urlset_body"]

LOG_ABORTED = "sitemap %s: aborting the response after headers were sent: %s"


async def bytes_body(data: bytes) -> AsyncIterator[bytes]:
    """A body of bytes already in memory (errors, robots.txt, the stylesheet)."""
    yield data


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
    writer: UrlsetWriter | TextWriter,
    streams: list[EntryStream],
    first: list[Admitted],
) -> AsyncIterator[bytes]:
    """Render a urlset (or text sitemap) from open streams; abort, never truncate quietly."""
    chunker = Chunker()
    try:  # errors are logged where the body meets the status line (logging_abort)
        chunker.add(writer.open([entry for _, _, entry in first if entry is not None]))
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
