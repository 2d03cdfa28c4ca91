"""Faulty providers and hostile data through real servers (uvicorn and werkzeug).

Each test here once answered 500, a stale document or nothing at all (issue 12).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any

import anyio
import httpx
import pytest
from werkzeug.http import parse_date

from sitemap_middleware import Renders, Section, SitemapEntry
from sitemap_middleware._providers.threads import MAX_SECTION_THREADS
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import make_config
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.servers import serve

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
    config = make_config(sections)
    with serve(server, config) as url:
        index = httpx.get(url + "/sitemap_index.xml")
        page = httpx.get(url + "/sitemap-naive-1.xml")
    assert index.status_code == 200, index.text
    assert len(child_urls(check_document(index.content))) == 2
    # Never older than the newest provider time (12:00 UTC, the naive one): here it is
    # when this content was first seen, which is later.
    newest = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    for reply in (index, page):
        modified = parse_date(reply.headers["last-modified"])
        assert modified is not None and modified >= newest


@servers
def test_lastmod_at_the_end_of_time_is_served(server: str) -> None:
    """A lastmod past year 9999 in UTC never overflows the HTTP date (no 500)."""
    entries = [SitemapEntry("/a", lastmod="9999-12-31T23:59:59-01:00"), SitemapEntry("/b")]
    config = make_config({"p": entries})
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
        assert modified is not None and modified.year < 9999
    assert conditional.status_code in (200, 304)


@servers
def test_idna_2008_hosts_in_locs(server: str) -> None:
    """faß.de is xn--fa-hia.de (UTS 46, as browsers), not fass.de (IDNA 2003)."""
    config = make_config(
        {"p": ["https://faß.de/straße", "/a", "https://FASS.de/x"]}, base_url="https://faß.de/"
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


class Switchable:
    """A provider without validators whose data source can be switched off mid-way.

    ``fail_at``: the entry index at which reading raises (``None``: never).
    """

    def __init__(self, size: int, fail_at: int | None = None) -> None:
        self.size = size
        self.fail_at = fail_at

    async def entries(self) -> AsyncIterator[str]:
        for i in range(self.size):
            if self.fail_at is not None and i >= self.fail_at:
                raise ConnectionError("database went away")
            yield f"/item/{i}"


@servers
def test_render_mode_never_stores_an_index_missing_a_section(server: str) -> None:
    """An index rendered while a section was down is no-store and gone once it recovers."""
    flaky = Switchable(3, fail_at=0)
    sections: dict[str, Any] = {"flaky": flaky, "ok": Switchable(2)}
    config = make_config(sections, renders=Renders(etag="content"), max_urls_per_page=2)
    with serve(server, config) as url:
        down = httpx.get(url + "/sitemap_index.xml")
        flaky.fail_at = None
        up = httpx.get(url + "/sitemap_index.xml")
        again = httpx.get(url + "/sitemap_index.xml", headers={"If-None-Match": up.headers["etag"]})
    assert down.status_code == 200
    assert child_urls(check_document(down.content)) == ["https://example.com/sitemap-ok-1.xml"]
    assert down.headers["cache-control"] == "no-store" and "etag" not in down.headers
    assert child_urls(check_document(up.content)) == [
        "https://example.com/sitemap-flaky-1.xml",
        "https://example.com/sitemap-flaky-2.xml",
        "https://example.com/sitemap-ok-1.xml",
    ]
    assert up.headers["cache-control"] == "public, max-age=3600"
    assert again.status_code == 304


@servers
def test_render_mode_failure_before_the_first_byte_is_503(
    server: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A provider failing while the page renders into the cache: 503 with Retry-After."""
    flaky = Switchable(2000, fail_at=1500)  # after the first batch: mid-render
    config = make_config({"p": flaky}, renders=Renders(etag="content"))
    with caplog.at_level(logging.DEBUG, logger="sitemap_middleware"), serve(server, config) as url:
        failed = httpx.get(url + "/sitemap-p-1.xml")
        flaky.fail_at = None
        recovered = httpx.get(url + "/sitemap-p-1.xml")
    assert failed.status_code == 503 and failed.headers["retry-after"] == "120"
    assert failed.headers["cache-control"] == "no-store"
    assert recovered.status_code == 200
    assert len(page_urls(check_document(recovered.content))) == 2000
    messages = [r.getMessage() for r in caplog.records if r.name == "sitemap_middleware"]
    assert not any("after headers were sent" in m for m in messages), messages
    assert any("cannot be rendered (503)" in m for m in messages), messages


@servers
def test_render_mode_failure_after_the_first_byte_aborts(server: str) -> None:
    """Past the render cap the page streams; a failure then aborts and caches nothing."""
    flaky = Switchable(20_000)
    config = make_config(
        {"p": flaky},
        renders=Renders(etag="content", max_bytes=64 * 1024, plan_ttl=60),
    )
    with serve(server, config) as url:
        # Planned while the source is up (a failure while planning is a 503, before any
        # byte); the page's own pass then fails mid-stream.
        assert httpx.get(url + "/sitemap_index.xml").status_code == 200
        flaky.fail_at = 15_000
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(url + "/sitemap-p-1.xml", headers={"Accept-Encoding": "identity"})
        flaky.fail_at = None
        recovered = httpx.get(url + "/sitemap-p-1.xml")
    assert recovered.status_code == 200
    assert len(page_urls(check_document(recovered.content))) == 20_000


class HungRows:
    """A sync data source that blocks (a hung query) until the test releases it."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.release = threading.Event()
        self.entered = 0
        self._lock = threading.Lock()

    def _block(self) -> None:
        with self._lock:
            self.entered += 1
        self.release.wait()

    def rows(self) -> Any:
        if self.where == "factory":  # the function itself blocks before returning rows
            self._block()
            return ["/late"]
        return self._generate()

    def _generate(self) -> Iterator[str]:
        yield "/first"
        self._block()  # the second batch hangs
        yield "/late"


def _rows() -> Iterator[str]:
    yield from ("/a", "/b")


@servers
@pytest.mark.parametrize("where", ["factory", "generator"])
def test_timeout_binds_hung_sync_providers(server: str, where: str) -> None:
    """A hung sync provider answers 503 at provider_timeout while its thread still blocks."""
    hung = HungRows(where)
    config = make_config(
        {"hung": hung.rows, "ok": _rows},
        provider_timeout=0.5,
        max_urls_per_page=1,
    )
    try:
        with serve(server, config) as url:
            # Bounded, so a request that waits for the hung thread fails the test.
            page = httpx.get(url + "/sitemap-hung-1.xml", timeout=20)
            # Answered while the thread is (or, on a loaded machine, is about to be) blocked.
            assert not hung.release.is_set()
            assert _eventually(lambda: hung.entered == 1)
            index = httpx.get(url + "/sitemap_index.xml", timeout=20)
            ok = httpx.get(url + "/sitemap-ok-1.xml", timeout=20)
    finally:
        hung.release.set()
    if where == "factory":
        assert page.status_code == 503 and page.headers["retry-after"] == "120"
    else:  # the first batch came: the page started, then was cut off
        assert page.status_code == 503 or b"</urlset>" not in page.content
    assert index.status_code == 200 and index.headers["cache-control"] == "no-store"
    assert child_urls(check_document(index.content)) == [
        "https://example.com/sitemap-ok-1.xml",
        "https://example.com/sitemap-ok-2.xml",
    ]
    assert ok.status_code == 200


@servers
def test_hung_sync_work_does_not_starve_other_sections(server: str) -> None:
    """40 requests stuck on one sync section: its threads are capped, other sections serve."""
    hung = HungRows("factory")
    config = make_config({"hung": hung.rows, "ok": _rows}, provider_timeout=0.5)
    try:
        with serve(server, config) as url, httpx.Client(timeout=20) as client:
            with ThreadPoolExecutor(40) as pool:
                stuck = list(
                    pool.map(
                        lambda _: client.get(url + "/sitemap-hung-1.xml").status_code, range(40)
                    )
                )
            assert not hung.release.is_set()
            entered = hung.entered
            ok = [client.get(url + "/sitemap-ok-1.xml") for _ in range(3)]
    finally:
        hung.release.set()
    assert stuck == [503] * 40
    assert 1 <= entered <= MAX_SECTION_THREADS  # abandoned threads count against the cap
    assert [r.status_code for r in ok] == [200] * 3
    assert page_urls(check_document(ok[0].content)) == [
        "https://example.com/a",
        "https://example.com/b",
    ]


class SlowSkip:
    """No page access: a deep page means reading past every entry before it, slowly."""

    async def entries(self) -> AsyncIterator[str]:
        for i in range(3000):
            if i % 500 == 0:
                await anyio.sleep(0.1)  # each batch is quick; all of them are not
            yield f"/item/{i}"


@servers
def test_timeout_applies_per_batch_while_skipping_to_a_deep_page(server: str) -> None:
    """Skipping 2,500 entries takes several batches, each within provider_timeout: 200."""
    config = make_config(
        {"p": Section(SlowSkip(), max_urls=500)},
        provider_timeout=0.4,
    )
    with serve(server, config) as url:
        page = httpx.get(url + "/sitemap-p-6.xml", timeout=20)
    assert page.status_code == 200, page.text
    assert page_urls(check_document(page.content))[0] == "https://example.com/item/2500"


def _eventually(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    """Whether ``condition`` holds within ``seconds`` (a bound, not a measured duration)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False
