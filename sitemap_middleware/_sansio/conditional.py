"""Conditional requests: this module alone evaluates them (RFC 9110 §13).

The validator headers a reply carries, whether a GET/HEAD is answered 304, and which
headers a 304 keeps. What goes into a tag is :mod:`.etag`'s rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from werkzeug.http import http_date, quote_etag
from werkzeug.sansio.http import is_resource_modified

__all__ = [
    "NOT_MODIFIED_HEADERS",
    "is_not_modified",
    "last_modified_at",
    "not_modified_filter",
    "validator_headers",
]

#: RFC 9110 §15.4.5: a 304 carries these (and no content headers).
NOT_MODIFIED_HEADERS = frozenset(
    ("cache-control", "content-location", "date", "etag", "expires", "vary")
)


def last_modified_at(value: datetime | None, now: datetime) -> datetime | None:
    """The Last-Modified to send with a reply made at ``now`` (both aware datetimes).

    RFC 9110 §8.8.2.1: a modification time in the future "MUST" be replaced by the
    time of the reply. That also keeps dates such as ``9999-12-31T23:59:59-01:00``
    (year 10000 in UTC) out of the HTTP date, which cannot hold them.
    """
    if value is None or value <= now:  # aware comparisons never overflow
        return value
    return now


def validator_headers(etag: str | None, last_modified: datetime | None) -> list[tuple[str, str]]:
    headers = []
    if etag is not None:
        headers.append(("ETag", quote_etag(etag)))
    if last_modified is not None:
        headers.append(("Last-Modified", http_date(last_modified)))
    return headers


def is_not_modified(
    method: str,
    *,
    if_none_match: str | None,
    if_modified_since: str | None,
    etag: str | None,
    last_modified: datetime | None,
) -> bool:
    """True when a GET/HEAD may be answered 304 (RFC 9110 §13.1.2, §13.1.3, §13.2.2).

    werkzeug's tested function does weak comparison, lists and ``*``, lets
    If-None-Match override If-Modified-Since, and treats malformed dates as absent.
    Only GET and HEAD may get a 304; other methods never reach here as ours.
    """
    if method not in ("GET", "HEAD"):
        return False
    if if_none_match is None and if_modified_since is None:
        return False
    if etag is None and last_modified is None:
        return False
    if if_none_match is not None and etag is None:
        # No tag to compare: "*" matches any current representation, anything else
        # cannot match, and RFC 9110 §13.2.2 says to ignore If-Modified-Since then.
        return if_none_match.strip() == "*"
    return not is_resource_modified(
        http_if_none_match=if_none_match,
        http_if_modified_since=if_modified_since,
        etag=etag,
        last_modified=last_modified,
    )


def not_modified_filter(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers of a full response that a 304 may carry."""
    return [(k, v) for k, v in headers if k.lower() in NOT_MODIFIED_HEADERS]
