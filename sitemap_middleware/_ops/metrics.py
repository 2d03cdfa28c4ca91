"""Prometheus metrics for served documents (the ``prometheus`` extra).

Names follow OpenTelemetry's conventions as Prometheus exports them: a ``sitemap_``
namespace, base units in the name (``_seconds``, ``_bytes``), ``_total`` on counters,
and few low-cardinality labels (the document kind and section, never its URL).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._engine.observe import ServedDocument

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["PrometheusObserver"]

#: Render times from 1 ms (a cached page) to 1 minute (a 50,000-URL page off a slow DB).
DURATION_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)


class PrometheusObserver:
    """A :class:`DocumentObserver` that keeps Prometheus metrics of what is served.

    Metrics (label names in brackets):

    * ``sitemap_documents_served_total`` [kind, status, cache]: documents answered.
    * ``sitemap_render_duration_seconds`` [kind]: request to last byte, as a histogram.
    * ``sitemap_urls_written_total`` [section]: ``<url>`` entries written (``index`` for
      the ``<sitemap>`` children of an index, ``root`` for ``sitemap.xml``); the rows of
      the HTML views are shown to people, not written for crawlers, and are not counted.
    * ``sitemap_response_body_bytes_total`` [kind, encoding]: body bytes sent.
    * ``sitemap_responses_aborted_total`` [kind]: bodies cut short (provider failure
      mid-stream or client gone).
    * ``sitemap_entries_excluded_total`` [section, reason]: items left out on purpose
      (reason ``provider``: SKIP; ``pattern``: ``Section(exclude=...)``; ``robots``: our
      robots.txt disallows them; ``guard``: quarantined by ``Guard``), counted once per
      content (per section version) by the planning pass, not per request.
    * ``sitemap_guard_probes_total`` [section, outcome]: the guard's verdicts
      (``quarantined``, ``indexable``, ``unanswered``; ``shared``: read from the store).
    * ``sitemap_lastmod_moved_without_content_total`` [section]: URLs whose lastmod moved
      while their content digest did not (``Ledger``): held, once per content.

    Usage::

        from prometheus_client import make_asgi_app
        metrics = PrometheusObserver()
        config = SitemapConfig(..., observers=[metrics])
        app.mount("/metrics", make_asgi_app())

    :param registry: where the metrics are registered; by default prometheus_client's
        global ``REGISTRY``. Pass your own to create more than one observer per process.
    :param namespace: the metric-name prefix.
    """

    def __init__(
        self, registry: CollectorRegistry | None = None, *, namespace: str = "sitemap"
    ) -> None:
        try:
            from prometheus_client import REGISTRY, Counter, Histogram
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "PrometheusObserver needs prometheus_client: "
                "the prometheus extra (from a clone: pip install '.[prometheus]')"
            ) from exc
        registry = REGISTRY if registry is None else registry
        self.documents = Counter(
            f"{namespace}_documents_served",
            "Sitemap documents served (robots.txt, index, pages, stylesheet, key file).",
            ["kind", "status", "cache"],
            registry=registry,
        )
        self.duration = Histogram(
            f"{namespace}_render_duration_seconds",
            "Time from request to the last byte of a sitemap document.",
            ["kind"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.urls = Counter(
            f"{namespace}_urls_written",
            "Entries written into sitemap documents.",
            ["section"],
            registry=registry,
        )
        self.bytes = Counter(
            f"{namespace}_response_body_bytes",
            "Body bytes sent for sitemap documents, after content-coding.",
            ["kind", "encoding"],
            registry=registry,
        )
        self.aborted = Counter(
            f"{namespace}_responses_aborted",
            "Sitemap bodies cut short by a failing provider or a departed client.",
            ["kind"],
            registry=registry,
        )
        self.excluded = Counter(
            f"{namespace}_entries_excluded",
            "Items a section left out on purpose (SKIP, exclude patterns, robots.txt), "
            "once per content.",
            ["section", "reason"],
            registry=registry,
        )
        self.probes = Counter(
            f"{namespace}_guard_probes",
            "The guard's verdicts on listed URLs: quarantined, indexable, unanswered "
            "(5xx, 429, no answer) or shared (read from the store, not probed).",
            ["section", "outcome"],
            registry=registry,
        )
        self.held = Counter(
            f"{namespace}_lastmod_moved_without_content",
            "URLs whose lastmod moved while their content did not (Ledger): the time "
            "their content was first seen is written; once per content.",
            ["section"],
            registry=registry,
        )

    def lastmods_held(self, section: str, count: int) -> None:
        """Count URLs whose lastmod moved without their content (the ledger's, once each)."""
        self.held.labels(section).inc(count)

    def urls_probed(self, section: str, outcome: str, count: int) -> None:
        """Count the guard's verdicts (called by the middleware's background probes)."""
        self.probes.labels(section, outcome).inc(count)

    def entries_excluded(self, section: str, reason: str, count: int) -> None:
        """Count items a planning pass left out on purpose (called by the middleware)."""
        self.excluded.labels(section, reason).inc(count)

    def document_served(self, event: ServedDocument) -> None:
        """Count one served document (called by the middleware)."""
        self.documents.labels(event.kind, str(event.status), event.cache or "none").inc()
        self.duration.labels(event.kind).observe(event.duration)
        if event.urls and not event.kind.startswith("html_"):
            section = event.section or event.kind
            self.urls.labels(section).inc(event.urls)
        if event.bytes:
            self.bytes.labels(event.kind, event.encoding).inc(event.bytes)
        if not event.completed:
            self.aborted.labels(event.kind).inc()
