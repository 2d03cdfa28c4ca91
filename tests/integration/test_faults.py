"""Faulty providers and hostile data through real servers (uvicorn and werkzeug).

Each test here once answered 500, a stale document or nothing at all (issue 12).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any

import httpx
import pytest
from werkzeug.http import parse_date

from sitemap_middleware import ProviderVersion, SitemapEntry
from tests.helpers import check_document, child_urls, page_urls
from tests.integration.servers import make_config, serve

servers = pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])


class Versioned:
    """A provider that reports ``last_modified`` as given (naive or aware)."""

    def __init__(self, urls: list[str], modified: datetime) -> None:
        self.urls = urls
        self.modified = modified

    async def entries(self) -> AsyncIterator[str]:
        for url in self.urls:
            yield url

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="t", last_modified=self.modified)


@servers
def test_naive_and_aware_versions_in_one_index(server: str) -> None:
    """A naive last_modified (UTC by convention) and an aware one: the index is served."""
    sections: dict[str, Any] = {
        "naive": Versioned(["/a"], datetime(2024, 5, 1, 12, 0)),
        "aware": Versioned(["/b"], datetime(2024, 5, 1, 11, 0, tzinfo=timezone.utc)),
    }
    config = make_config("https://example.com", sections)
    with serve(server, config) as url:
        index = httpx.get(url + "/sitemap_index.xml")
        page = httpx.get(url + "/sitemap-naive-1.xml")
    assert index.status_code == 200, index.text
    assert index.headers["last-modified"] == "Wed, 01 May 2024 12:00:00 GMT"
    assert len(child_urls(check_document(index.content))) == 2
    assert page.headers["last-modified"] == "Wed, 01 May 2024 12:00:00 GMT"


@servers
def test_lastmod_at_the_end_of_time_is_served(server: str) -> None:
    """A lastmod past year 9999 in UTC never overflows the HTTP date (no 500)."""
    entries = [SitemapEntry("/a", lastmod="9999-12-31T23:59:59-01:00"), SitemapEntry("/b")]
    config = make_config("https://example.com", {"p": entries})
    with serve(server, config) as url:
        responses = [
            httpx.get(url + path)
            for path in ("/sitemap.xml", "/sitemap-p-1.xml", "/sitemap_index.xml")
        ]
        conditional = httpx.get(
            url + "/sitemap-p-1.xml",
            headers={"If-Modified-Since": "Fri, 31 Dec 9999 23:59:59 GMT"},
        )
    for response in responses:
        assert response.status_code == 200, response.text
        assert b"9999-12-31T23:59:59-01:00" in response.content
        # RFC 9110 8.8.2.1: a Last-Modified in the future is replaced by the time of the reply.
        modified = parse_date(response.headers["last-modified"])
        sent = parse_date(response.headers["date"])
        assert modified is not None and sent is not None and modified <= sent
    assert conditional.status_code in (200, 304)


@servers
def test_idna_2008_hosts_in_locs(server: str) -> None:
    """faß.de is xn--fa-hia.de (UTS 46, as browsers), not fass.de (IDNA 2003)."""
    config = make_config(
        "https://faß.de/", {"p": ["https://faß.de/straße", "/a", "https://FASS.de/x"]}
    )
    with serve(server, config) as url:
        page = httpx.get(url + "/sitemap.xml")
        robots = httpx.get(url + "/robots.txt")
    assert page.status_code == 200
    assert page_urls(check_document(page.content)) == [
        "https://xn--fa-hia.de/stra%C3%9Fe",
        "https://xn--fa-hia.de/a",
    ]
    assert "Sitemap: https://xn--fa-hia.de/sitemap.xml" in robots.text
