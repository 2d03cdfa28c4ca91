"""The HTML views' settings (:class:`HTMLView`), like those of ``_settings.py``.

``SitemapConfig(html=...)`` serves them; their markup is ``_sansio/html_writer.py``'s,
what they load and may run ``_sansio/html_assets.py``'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._exceptions import ConfigurationError
from ._sansio.html_assets import VIEW_DIGEST

__all__ = ["HTMLView"]

_FILE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class HTMLView:
    """Server-rendered HTML views of the sitemaps, for people (``SitemapConfig(html=...)``).

    ``SitemapConfig(html=True)`` is ``HTMLView()``: ``sitemap.html`` lists every sitemap
    page with its URL count and lastmod, and ``sitemap-<section>-<n>.html`` shows the
    URLs of one page. They work without XSLT or JavaScript, are sent with a strict
    Content-Security-Policy and ``noindex``, and stream like the XML.

    :param index_name: file name of the index view, in the sitemaps' directory.
    :param page_prefix: prefix of page views (``<prefix><section>-<n>.html``); ``None``
        uses ``SitemapConfig.page_prefix``, so each view sits beside its XML file.
    :param title: shown in headings and the browser's tab, with the site's address.
    """

    index_name: str = "sitemap.html"
    page_prefix: str | None = None
    title: str = "Sitemap"

    def __post_init__(self) -> None:
        name = self.index_name
        if not (isinstance(name, str) and _FILE_NAME.fullmatch(name) and name.endswith(".html")):
            raise ConfigurationError(
                f"HTMLView.index_name must be a file name ending in .html, got {name!r}"
            )
        prefix = self.page_prefix
        if prefix is not None and not (isinstance(prefix, str) and _FILE_NAME.fullmatch(prefix)):
            raise ConfigurationError(
                f"HTMLView.page_prefix must be a file-name prefix or None, got {prefix!r}"
            )
        title = self.title
        if not (isinstance(title, str) and title.strip() and title.isprintable()):
            raise ConfigurationError(
                f"HTMLView.title must be a non-empty one-line string, got {title!r}"
            )

    def page_name(self, default_prefix: str, section: str, page: int) -> str:
        prefix = default_prefix if self.page_prefix is None else self.page_prefix
        return f"{prefix}{section}-{page}.html"

    @property
    def fingerprint(self) -> str:
        """What shapes the views' bytes, for their ETags (the XML ETags leave it out)."""
        return f"html|{self.index_name}|{self.page_prefix}|{self.title}|{VIEW_DIGEST}"
