"""The ETag recipe (sitemap_middleware._sansio.etag)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from sitemap_middleware._sansio.etag import (
    content_etag,
    document_etag,
    make_etag,
    representation_etag,
    version_parts,
)
from sitemap_middleware.providers import ProviderVersion


def test_etags_are_deterministic_and_differ_per_encoding() -> None:
    """The same inputs give the same tag; gzip and identity tags differ."""
    tag = make_etag("a", "b")
    assert tag == make_etag("a", "b") != make_etag("ab")
    assert representation_etag(tag, "identity") != representation_etag(tag, "gzip")
    assert representation_etag(tag, "gzip", gzip_file=True) not in (
        tag,
        representation_etag(tag, "gzip"),
    )


def test_document_etag_needs_every_section_to_vouch() -> None:
    """A document's tag exists only when every section reports a version, and changes with any."""
    one = document_etag("fp", "https://example.com/", "index", [("a", "1", "v1", "")])
    assert one is not None
    assert one != document_etag("fp", "https://example.com/", "index", [("a", "1", "v2", "")])
    assert one != document_etag("fp", "https://example.org/", "index", [("a", "1", "v1", "")])
    assert (
        document_etag("fp", "https://example.com/", "index", [("a", "1", "v1", ""), None]) is None
    )


def test_version_parts_and_content_etag() -> None:
    """An empty version says nothing; content tags follow the bytes and their kind."""
    assert version_parts(None) is None
    assert version_parts(ProviderVersion()) is None
    when = datetime(2024, 5, 1, tzinfo=timezone.utc)
    assert version_parts(ProviderVersion(token="t", last_modified=when)) == ("t", when.isoformat())
    assert content_etag("robots", b"a") == content_etag("robots", b"a")
    assert content_etag("robots", b"a") not in (
        content_etag("robots", b"b"),
        content_etag("xsl", b"a"),
    )


# -- review-core: defects found by the hostile review ---------------------------------


def test_news_window_moving_changes_the_etag(monkeypatch: pytest.MonkeyPatch) -> None:
    """An article leaving the news window changes the body, so the strong ETag must change
    (else a crawler's If-None-Match gets 304 for a document that is no longer the same)."""
    from datetime import timedelta

    import anyio

    from sitemap_middleware import NewsArticle, Section, SitemapEntry
    from sitemap_middleware._engine import planning
    from tests.harness.core import fetch, header, make_core

    published = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    article = SitemapEntry(
        "/news/1",
        news=NewsArticle(
            publication_name="Daily", language="en", publication_date=published, title="T"
        ),
    )
    core = make_core({"n": Section([article, "/about"], news=True)})

    def at(now: datetime) -> type[datetime]:
        class Clock(datetime):
            @classmethod
            def now(cls, tz: Any = None) -> Any:
                return now

        return Clock

    async def get(now: datetime) -> tuple[str | None, bytes]:
        monkeypatch.setattr(planning, "datetime", at(now))
        reply, body = await fetch(core, "/sitemap.xml")
        return header(reply, "ETag"), body

    async def main() -> None:
        tag_in, body_in = await get(published + timedelta(days=1))
        tag_out, body_out = await get(published + timedelta(days=3))
        assert b"/news/1" in body_in and b"/news/1" not in body_out
        assert tag_in != tag_out

    anyio.run(main)
