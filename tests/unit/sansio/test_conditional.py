"""RFC 9110 conditional request evaluation."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from sitemap_middleware._sansio.conditional import (
    is_not_modified,
    not_modified_filter,
)

LM = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("method", "inm", "ims", "etag", "lm", "expected"),
    [
        ("GET", '"abc"', None, "abc", None, True),
        ("GET", 'W/"abc"', None, "abc", None, True),
        ("GET", '"x", "abc"', None, "abc", None, True),
        ("GET", "*", None, "abc", None, True),
        ("GET", "*", None, None, LM, True),
        ("GET", '"x"', None, "abc", None, False),
        ("GET", '"x"', "Wed, 01 May 2024 12:00:00 GMT", "abc", LM, False),
        ("GET", None, "Wed, 01 May 2024 12:00:00 GMT", "abc", LM, True),
        ("GET", None, "Wed, 01 May 2024 11:59:59 GMT", "abc", LM, False),
        ("GET", None, "not a date", "abc", LM, False),
        ("GET", '"abc', None, "abc", None, False),
        ("GET", None, None, "abc", LM, False),
        ("HEAD", '"abc"', None, "abc", None, True),
        ("POST", '"abc"', None, "abc", None, False),
        ("GET", '"abc"', None, None, None, False),
    ],
    ids=lambda v: repr(v)[:24],
)
def test_is_not_modified(
    method: str,
    inm: str | None,
    ims: str | None,
    etag: str | None,
    lm: datetime | None,
    expected: bool,
) -> None:
    """If-None-Match (weak, lists, *) overrides If-Modified-Since; bad dates count as absent."""
    assert (
        is_not_modified(
            method, if_none_match=inm, if_modified_since=ims, etag=etag, last_modified=lm
        )
        is expected
    )


def test_not_modified_filter_keeps_only_allowed_headers() -> None:
    """A 304 carries no content headers."""
    headers = [
        ("Content-Type", "x"),
        ("ETag", '"a"'),
        ("Vary", "Accept-Encoding"),
        ("Content-Encoding", "gzip"),
        ("Cache-Control", "c"),
        ("Last-Modified", "d"),
    ]
    assert not_modified_filter(headers) == [
        ("ETag", '"a"'),
        ("Vary", "Accept-Encoding"),
        ("Cache-Control", "c"),
    ]
