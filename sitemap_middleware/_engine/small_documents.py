"""The small documents: robots.txt, the stylesheet and the IndexNow key file.

Each is a few bytes known before the reply (no provider is read, nothing is stored):
tagged by their bytes. robots.txt's reply is built by the core (``_robots``): never
compressed, never a Last-Modified; its text is written here.
"""

from __future__ import annotations

from .._config import SitemapConfig
from .._logs import logger
from .._sansio.etag import content_etag
from .._sansio.html_assets import stylesheet
from .._sansio.robots import AppRobots, robots_text
from .._sansio.routing import Kind, Target
from .._sansio.urls import BaseURL
from .answer import TEXT_TYPE, XSL_TYPE, Document, HTTPError, unavailable
from .bodies import bytes_body, opened

__all__ = ["LOG_APP_ROBOTS", "SmallDocuments", "stylesheet_bytes"]

LOG_APP_ROBOTS = (
    "sitemap robots.txt: the app's own robots.txt could not be read (%s); answering 503"
)


class SmallDocuments:
    """The stylesheet's and the key file's :class:`Document`, and robots.txt's bytes."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self._stylesheet = stylesheet_bytes(config)
        self._stylesheet_etag = content_etag("xsl", self._stylesheet)

    def get(self, target: Target) -> Document:
        """The stylesheet or the IndexNow key file."""
        if target.kind is Kind.STYLESHEET:
            data = self._stylesheet
            return Document(XSL_TYPE, self._stylesheet_etag, None, lambda: opened(bytes_body(data)))
        if target.kind is Kind.INDEXNOW_KEY:
            key = (self.config.indexnow_key or "").encode("ascii")
            etag = content_etag("indexnow", key)
            return Document(TEXT_TYPE, etag, None, lambda: opened(bytes_body(key)))
        raise HTTPError(404, "Not Found")  # pragma: no cover - routing names no other

    def robots(self, base: BaseURL, app_robots: AppRobots | None) -> tuple[bytes, str]:
        """robots.txt's bytes and ETag; 503 when append mode has no answer of the app's."""
        config = self.config
        robots = config.robots
        assert robots is not None  # routing names robots.txt only when configured
        urls = [base.file_url(config.sitemap_name)]
        urls += (base.origin_url(loc) for loc in config.external_sitemaps)
        urls += (base.file_url(feed.name) for feed in config.feeds)  # engines take feeds
        text = robots_text(robots, urls, app_robots)
        if text is None:
            problem = "no answer"
            if app_robots is not None:
                problem = app_robots.problem or f"it answered {app_robots.status}"
            logger.error(LOG_APP_ROBOTS, problem)
            raise unavailable(config)
        if robots.mode == "append":
            self._learn_robots(text)
        data = text.encode("utf-8")
        return data, content_etag("robots", data)

    def _learn_robots(self, text: str) -> None:
        """Append mode: the robots.txt served is what sitemaps honour from now on."""
        for section in self.config.resolved_sections:
            if section.exclusion is not None and section.exclusion.robots is not None:
                section.exclusion.robots.learn(text)
                return  # one RobotsExclusion, shared by every section


def stylesheet_bytes(config: SitemapConfig) -> bytes:
    """The built-in XSL (``_sansio/html_assets.py``), linking to the HTML views when on."""
    return stylesheet(config.html_view, config.page_prefix)
