"""Content-coding negotiation and incremental gzip."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterable

from werkzeug.datastructures import Accept
from werkzeug.http import parse_accept_header

from .types import Encoding

__all__ = [
    "GzipStream",
    "choose_encoding",
    "gzip_bytes",
    "gzip_chunks",
    "parse_accept_encoding",
]

# wbits 16 + 15: a gzip container (RFC 1952) around a full-window deflate stream.
_GZIP_WBITS = 31


def parse_accept_encoding(value: str) -> Accept:
    """Parse Accept-Encoding; the one place that knows werkzeug's parser API."""
    # werkzeug 3.2 moves this to Accept.from_header; keep the call in one spot.
    from_header = getattr(Accept, "from_header", None)
    if from_header is not None:  # pragma: no cover - werkzeug >= 3.2
        return from_header(value)  # type: ignore[no-any-return]
    return parse_accept_header(value)


def choose_encoding(accept_encoding: str | None, gzip_enabled: bool) -> Encoding | None:
    """Pick gzip or identity for a request; ``None`` means nothing acceptable (406).

    RFC 9110 §12.5.3: no header means the client did not ask for a coding, so we send
    identity (never gzip unasked). ``q=0`` refuses a coding; ``*`` covers codings not
    named; identity is acceptable unless refused by ``identity;q=0`` or ``*;q=0``.
    A malformed header parses as far as it can and never raises.
    """
    if accept_encoding is None:
        return "identity"
    accept = parse_accept_encoding(accept_encoding)
    q_star: float | None = None
    q_identity: float | None = None
    q_gzip: float | None = None
    for value, quality in accept:
        name = value.strip().lower()
        if name == "*":
            q_star = quality
        elif name == "identity":
            q_identity = quality
        elif name in ("gzip", "x-gzip"):
            q_gzip = quality if q_gzip is None else max(q_gzip, quality)
    if q_gzip is None:
        q_gzip = q_star if q_star is not None else 0.0
    if q_identity is None:
        q_identity = q_star if q_star is not None and q_star == 0 else 1.0
    if gzip_enabled and q_gzip > 0 and q_gzip >= q_identity:
        return "gzip"
    if q_identity > 0:
        return "identity"
    if gzip_enabled and q_gzip > 0:
        return "gzip"
    return None


class GzipStream:
    """Incremental gzip: each chunk comes out compressed and flushed at once.

    ``Z_SYNC_FLUSH`` after every chunk costs a few bytes per 64 KiB but lets the client
    decompress what has arrived so far: the stream stays a stream.
    """

    __slots__ = ("_compressor",)

    def __init__(self, level: int) -> None:
        self._compressor = zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)

    def compress(self, chunk: bytes) -> bytes:
        return self._compressor.compress(chunk) + self._compressor.flush(zlib.Z_SYNC_FLUSH)

    def finish(self) -> bytes:
        return self._compressor.flush(zlib.Z_FINISH)


async def gzip_chunks(chunks: AsyncIterator[bytes], level: int) -> AsyncIterator[bytes]:
    """Compress an async byte stream chunk by chunk; closes the source when closed."""
    stream = GzipStream(level)
    try:
        async for chunk in chunks:
            data = stream.compress(chunk)
            if data:
                yield data
        yield stream.finish()
    finally:
        await chunks.aclose()  # type: ignore[attr-defined]


def gzip_bytes(chunks: Iterable[bytes], level: int) -> bytes:
    """The bytes :func:`gzip_chunks` sends for ``chunks``, at once (a stored render's gzip
    body: compressed once, sent often, byte for byte what its first gzip reader got, so
    one strong ETag names one body). zlib releases the GIL: run it in a worker thread."""
    stream = GzipStream(level)
    return b"".join([*map(stream.compress, chunks), stream.finish()])
