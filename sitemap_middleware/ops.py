"""Operations around the middleware, from Python.

- reading a sitemap back: :func:`parse_sitemap` (:class:`ParsedSitemap`,
  :class:`SitemapParseError`);
- what changed between two runs: :func:`take_snapshot`, :class:`Snapshot`,
  :func:`changed_urls`; telling search engines: :class:`IndexNowNotifier`
  (:class:`IndexNowBatch`, :class:`IndexNowResult`);
- pushing a SQLAlchemy model's writes to IndexNow on commit: :func:`notify_on_commit`
  (:class:`SQLAlchemyPush`); Django's ``notify_on_change`` is in
  :mod:`sitemap_middleware.django`;
- observing every reply: ``SitemapConfig(observers=...)`` takes any
  :class:`DocumentObserver` (it hears a :class:`ServedDocument`), such as
  :class:`PrometheusObserver`;
- :class:`ExportPathError`, raised by ``export`` for a path outside its directory.

``check``, ``export``, ``generate``, ``explain`` and ``notify`` are commands of the
``sitemap-middleware`` CLI (the ``cli`` extra), not Python functions.
"""

from __future__ import annotations

from ._engine.observe import DocumentObserver, ServedDocument
from ._exceptions import ExportPathError, SitemapParseError
from ._ops.indexnow import IndexNowBatch, IndexNowNotifier, IndexNowResult
from ._ops.metrics import PrometheusObserver
from ._ops.parse import ParsedSitemap, parse_sitemap
from ._ops.snapshots import Snapshot, changed_urls, take_snapshot
from ._ops.sql_push import SQLAlchemyPush, notify_on_commit
from ._public import publish as _publish

__all__ = [
    "DocumentObserver",
    "ExportPathError",
    "IndexNowBatch",
    "IndexNowNotifier",
    "IndexNowResult",
    "ParsedSitemap",
    "PrometheusObserver",
    "SQLAlchemyPush",
    "ServedDocument",
    "SitemapParseError",
    "Snapshot",
    "changed_urls",
    "notify_on_commit",
    "parse_sitemap",
    "take_snapshot",
]

_publish(globals(), __all__)
