"""One structured log record and one observer call per served document; Prometheus metrics."""

from __future__ import annotations

import gzip
import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from sitemap_middleware import Renders, SitemapConfig, SitemapEntry
from sitemap_middleware._engine.core import RequestInfo
from sitemap_middleware._engine.observe import _EntryCounter
from sitemap_middleware.ops import PrometheusObserver, ServedDocument
from tests.harness.core import SitemapCore, fetch, header, make_core
from tests.harness.providers import CountingProvider

pytestmark = pytest.mark.anyio


class Recorder:
    def __init__(self) -> None:
        self.events: list[ServedDocument] = []

    def document_served(self, event: ServedDocument) -> None:
        self.events.append(event)


def observed_core(*observers: Any, **kwargs: Any) -> SitemapCore:
    kwargs.setdefault("max_urls_per_page", 10)
    sections = kwargs.pop("sections", None) or {
        "products": CountingProvider(25),
        "pages": ["/", "/about"],
    }
    return make_core(sections, observers=observers, **kwargs)


def served(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [getattr(r, "sitemap") for r in caplog.records if hasattr(r, "sitemap")]  # noqa: B009


async def test_log_record_per_page_names_section_page_urls_and_bytes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A served page logs one INFO record with its section, page, URL count and bytes."""
    caplog.set_level(logging.INFO, logger="sitemap_middleware")
    core = observed_core()
    reply, body = await fetch(core, "/sitemap-products-2.xml")
    assert reply.status == 200
    (record,) = served(caplog)
    assert record["document"] == "sitemap-products-2.xml"
    assert (record["status"], record["kind"], record["section"], record["page"]) == (
        200,
        "page",
        "products",
        2,
    )
    assert record["urls"] == 10 == body.count(b"<url>")
    assert record["bytes"] == len(body) and record["completed"] is True
    assert record["cache"] is None and record["duration"] > 0
    assert caplog.records[-1].levelno == logging.INFO
    assert "sitemap-products-2.xml 200: 10 urls" in caplog.records[-1].getMessage()


async def test_gzip_body_counts_urls_and_wire_bytes(caplog: pytest.LogCaptureFixture) -> None:
    """Gzip replies count entries of the decoded XML and bytes as sent (compressed)."""
    caplog.set_level(logging.INFO, logger="sitemap_middleware")
    core = observed_core()
    _, body = await fetch(core, "/sitemap-products-3.xml", accept_encoding="gzip")
    _, gz_file = await fetch(core, "/sitemap-products-1.xml.gz")
    page3, page1 = served(caplog)
    assert page3["encoding"] == "gzip" and page3["bytes"] == len(body)
    assert page3["urls"] == 5 == gzip.decompress(body).count(b"<url>")
    assert page1["document"] == "sitemap-products-1.xml.gz" and page1["urls"] == 10


async def test_index_robots_304_and_head_are_each_one_record() -> None:
    """The index counts its <sitemap> children; robots.txt, 304 and HEAD report no URLs."""
    recorder = Recorder()
    core = observed_core(recorder)
    reply, _ = await fetch(core, "/sitemap.xml")
    etag = header(reply, "etag")
    assert etag is not None
    await fetch(core, "/sitemap.xml", if_none_match=etag)
    await fetch(core, "/sitemap-pages-1.xml", method="HEAD")
    await fetch(core, "/robots.txt")
    kinds = [(e.kind, e.status, e.urls, e.method) for e in recorder.events]
    assert kinds == [
        ("root", 200, 4, "GET"),  # 3 product pages + 1 pages page
        ("root", 304, 0, "GET"),
        ("page", 200, 0, "HEAD"),
        ("robots", 200, 0, "GET"),
    ]


async def test_text_sitemap_counts_lines_and_errors_are_recorded() -> None:
    """Text sitemaps count lines; a 404 page is reported with its status."""
    recorder = Recorder()
    core = observed_core(recorder, text_sitemaps=True)
    _, body = await fetch(core, "/sitemap-pages-1.txt")
    await fetch(core, "/sitemap-products-9.xml")
    text, missing = recorder.events
    assert text.urls == 2 == len(body.splitlines())
    assert (missing.status, missing.urls, missing.page) == (404, 0, 9)


async def test_render_cache_miss_then_hit() -> None:
    """Pages rendered for their ETag report the render store: a miss, then a hit."""
    recorder = Recorder()

    def news() -> list[SitemapEntry]:
        return [SitemapEntry("/news/1", lastmod="2024-05-01")]

    core = observed_core(recorder, sections={"news": news}, renders=Renders(etag="content"))
    await fetch(core, "/sitemap-news-1.xml")
    await fetch(core, "/sitemap-news-1.xml")
    assert [e.cache for e in recorder.events] == ["miss", "hit"]


async def test_a_reply_joining_a_running_render_is_coalesced() -> None:
    """A request for a document whose render is under way shares it: cache="coalesced"."""
    recorder = Recorder()
    core = observed_core(
        recorder, sections={"products": CountingProvider(1500)}, max_urls_per_page=1500
    )
    request = RequestInfo("GET", "/sitemap-products-1.xml", {})
    target = core.route(request)
    assert target is not None
    first = await core.respond(target, request)
    assert first.body is not None
    head = await anext(first.body)  # the leader's render is running
    second = await core.respond(target, request)
    assert second.cache == "coalesced" and first.cache != "coalesced"
    rest = b"".join([head] + [chunk async for chunk in first.body])
    assert second.body is not None
    assert b"".join([chunk async for chunk in second.body]) == rest


async def test_aborted_body_is_reported_incomplete() -> None:
    """A provider failing mid-stream is reported with completed=False."""
    recorder = Recorder()
    core = observed_core(
        recorder,
        # The plan's pass succeeds; the page's own pass fails after its first bytes (two
        # pages: a one-page section's render would write what its plan read).
        sections={"products": CountingProvider(1500, fail_after=800, healthy_passes=1)},
        max_urls_per_page=1000,
    )
    with pytest.raises(Exception, match="database went away"):
        await fetch(core, "/sitemap-products-1.xml")
    assert recorder.events[-1].completed is False


async def test_failing_observer_is_logged_and_never_breaks_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An observer that raises is logged as a warning; the response is still complete."""

    class Broken:
        def document_served(self, event: ServedDocument) -> None:
            raise RuntimeError("metrics backend down")

    core = observed_core(Broken())
    reply, body = await fetch(core, "/sitemap-pages-1.xml")
    assert reply.status == 200 and body.endswith(b"</urlset>\n")
    assert any("metrics backend down" in r.getMessage() for r in caplog.records)


async def test_no_listener_leaves_the_body_untouched() -> None:
    """Without observers and with INFO off, the reply's body is the core's own generator."""
    logging.getLogger("sitemap_middleware").setLevel(logging.WARNING)
    core = observed_core()
    reply, _ = await fetch(core, "/sitemap-pages-1.xml")
    assert reply.body is not None and "_watched" not in repr(reply.body)


def test_observers_must_have_document_served() -> None:
    """A wrong observer is refused at configuration time, naming what is expected."""
    from sitemap_middleware import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"document_served\(event\)"):
        SitemapConfig(base_url="https://example.com", sections={"p": ["/"]}, observers=[print])  # type: ignore[list-item]


@given(st.lists(st.integers(min_value=0, max_value=400), max_size=12), st.booleans())
def test_entry_count_is_independent_of_chunk_boundaries(cuts: list[int], gz: bool) -> None:
    """Counting <url>/<sitemap> markers gives the same total however the body is split."""
    body = b"<urlset><url><loc>a</loc></url><url><loc>b&lt;url&gt;</loc></url>" * 6
    data = gzip.compress(body) if gz else body
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    counter = _EntryCounter(text=False, gzipped=gz)
    for chunk in chunks:
        counter.feed(chunk)
    assert counter.count == 12


async def test_prometheus_metrics_move_with_requests() -> None:
    """The Prometheus exporter counts documents, URLs, bytes and render durations."""
    registry = CollectorRegistry()
    core = observed_core(PrometheusObserver(registry))

    def value(name: str, **labels: str) -> float:
        return registry.get_sample_value(name, labels) or 0.0

    assert value("sitemap_documents_served_total", kind="page", status="200", cache="none") == 0
    _, body = await fetch(core, "/sitemap-products-1.xml")
    await fetch(core, "/sitemap-products-2.xml", accept_encoding="gzip")
    await fetch(core, "/sitemap-products-99.xml")
    assert value("sitemap_documents_served_total", kind="page", status="200", cache="none") == 2
    assert value("sitemap_documents_served_total", kind="page", status="404", cache="none") == 1
    assert value("sitemap_urls_written_total", section="products") == 20
    assert value("sitemap_response_body_bytes_total", kind="page", encoding="identity") >= len(body)
    assert value("sitemap_render_duration_seconds_count", kind="page") == 3
    assert value("sitemap_responses_aborted_total", kind="page") == 0
