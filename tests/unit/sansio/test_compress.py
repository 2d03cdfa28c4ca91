"""Accept-Encoding negotiation and incremental gzip."""

from __future__ import annotations

import gzip
import zlib

import pytest

from sitemap_middleware._sansio.compress import GzipStream, choose_encoding


@pytest.mark.parametrize(
    ("header", "enabled", "expected"),
    [
        (None, True, "identity"),
        ("", True, "identity"),
        ("gzip", True, "gzip"),
        ("gzip, deflate, br", True, "gzip"),
        ("GZIP", True, "gzip"),
        ("x-gzip", True, "gzip"),
        ("gzip;q=0", True, "identity"),
        ("*", True, "gzip"),
        ("*;q=0", True, None),
        ("*;q=0, identity", True, "identity"),
        ("identity;q=0", True, None),
        ("identity;q=0, gzip", True, "gzip"),
        ("gzip;q=0.5, identity;q=1", True, "identity"),
        ("gzip;q=1, identity;q=0.5", True, "gzip"),
        ("br", True, "identity"),
        ("gzip", False, "identity"),
        ("identity;q=0", False, None),
        ("gzip;q=abc", True, "identity"),
        (";;;,,q=", True, "identity"),
        ("gzip;q=-1", True, "identity"),
        ("\x00\xff", True, "identity"),
    ],
    ids=repr,
)
def test_choose_encoding(header: str | None, enabled: bool, expected: str | None) -> None:
    """q-values are respected, '*' covers unnamed codings, malformed headers never raise."""
    assert choose_encoding(header, enabled) == expected


def test_gzip_stream_round_trips_and_flushes_each_chunk() -> None:
    """Each compressed chunk is decodable on arrival; the whole is a valid gzip file."""
    stream = GzipStream(6)
    decoder = zlib.decompressobj(31)
    parts = []
    for i in range(5):
        chunk = f"<url>{i}</url>".encode() * 1000
        data = stream.compress(chunk)
        assert decoder.decompress(data) == chunk  # sync flush: nothing held back
        parts.append(data)
    parts.append(stream.finish())
    assert gzip.decompress(b"".join(parts)) == b"".join(
        f"<url>{i}</url>".encode() * 1000 for i in range(5)
    )
