"""HTTP semantics of a served sitemap: validators, revalidation, HEAD, gzip and Vary.

Given the first GET (sent with ``Accept-Encoding: gzip``, as crawlers do), three more
requests test what RFC 9110 asks of a cacheable document: a conditional GET must get
304, HEAD must match GET, and a representation that depends on Accept-Encoding must
say so in ``Vary``.
"""

from __future__ import annotations

from .fetch import Fetched, Fetcher
from .findings import DocumentReport

__all__ = ["check_http"]

XML_TYPES = ("application/xml", "text/xml")
FEED_TYPES = ("application/atom+xml", "application/rss+xml", *XML_TYPES)
GZIP_TYPES = ("application/gzip", "application/x-gzip", "application/octet-stream")
#: Bodies smaller than this gain little from gzip; no warning for them.
GZIP_WORTH = 1024


def _media_type(fetched: Fetched) -> str:
    return (fetched.header("content-type") or "").split(";")[0].strip().lower()


def _varies_on_encoding(fetched: Fetched) -> bool:
    vary = (fetched.header("vary") or "").lower()
    return "*" in vary or "accept-encoding" in [v.strip() for v in vary.split(",")]


def check_content_type(first: Fetched, kind: str, report: DocumentReport) -> None:
    media = _media_type(first)
    gz_file = first.raw[:2] == b"\x1f\x8b" and "gzip" not in (
        first.header("content-encoding") or ""
    )
    expected = {"text": ("text/plain",), "feed": FEED_TYPES}.get(kind, XML_TYPES)
    expected = GZIP_TYPES if gz_file else expected
    if media not in expected:
        report.add(
            "warning",
            "content-type",
            f"Content-Type {media or 'missing'!r}; expected {expected[0]}",
        )


async def check_http(fetcher: Fetcher, first: Fetched, report: DocumentReport) -> None:
    """Revalidation, HEAD parity, gzip and Vary for the document ``first`` fetched."""
    url = first.url
    etag = first.header("etag")
    last_modified = first.header("last-modified")
    gzip_sent = (first.header("content-encoding") or "").lower() in ("gzip", "x-gzip")
    if not etag and not last_modified:
        report.add(
            "warning",
            "http-no-validators",
            "no ETag or Last-Modified: every crawl downloads the whole document again",
        )
    else:
        condition = {"If-None-Match": etag} if etag else {"If-Modified-Since": last_modified or ""}
        again = await fetcher.fetch(url, headers={"Accept-Encoding": "gzip", **condition})
        if again.error is None and again.status != 304:
            which = "If-None-Match" if etag else "If-Modified-Since"
            report.add(
                "warning",
                "http-no-304",
                f"a conditional GET ({which}) got {again.status}, not 304 Not Modified",
            )
        elif again.status == 304 and again.raw:
            report.add("error", "http-304-body", f"the 304 carries a {len(again.raw)}-byte body")
    head = await fetcher.fetch(url, "HEAD", headers={"Accept-Encoding": "gzip"})
    if head.error is None:
        mismatches = [
            f"{name} {head.header(name)!r} vs GET {first.header(name)!r}"
            for name in ("content-type", "etag", "content-encoding")
            if head.header(name) != first.header(name)
        ]
        if head.status != first.status:
            mismatches.insert(0, f"status {head.status} vs GET {first.status}")
        if mismatches:
            report.add(
                "error", "http-head-mismatch", "HEAD differs from GET: " + "; ".join(mismatches)
            )
        if head.raw:
            report.add("error", "http-head-body", f"HEAD answered with a {len(head.raw)}-byte body")
    plain = await fetcher.fetch(url, headers={"Accept-Encoding": "identity"})
    if plain.error is not None:
        return
    plain_gzip = (plain.header("content-encoding") or "").lower() in ("gzip", "x-gzip")
    if plain_gzip:
        report.add("error", "http-gzip-unasked", "gzip was sent to a client that refused it")
    if gzip_sent != plain_gzip and not (_varies_on_encoding(first) and _varies_on_encoding(plain)):
        report.add(
            "error",
            "http-vary-missing",
            "the content-coding depends on Accept-Encoding but Vary does not say so: "
            "caches can serve gzip to clients that cannot read it",
        )
    gz_file = first.raw[:2] == b"\x1f\x8b"
    if not gzip_sent and not gz_file and len(first.body) >= GZIP_WORTH:
        report.add(
            "warning",
            "http-no-gzip",
            f"{len(first.body):,} bytes sent uncompressed to a client that accepts gzip",
        )
