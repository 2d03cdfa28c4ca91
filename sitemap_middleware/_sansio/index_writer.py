"""The sitemap index: one ``<sitemapindex>`` of up to 50,000 children."""

from __future__ import annotations

from datetime import date

from .limits import MAX_INDEX_ENTRIES
from .urlset_writer import SITEMAP_NS, LimitedWriter, prolog
from .values import format_w3c
from .xml import escape_loc

__all__ = ["IndexWriter"]


class IndexWriter(LimitedWriter):
    """Writes one ``<sitemapindex>`` (up to 50,000 children)."""

    CLOSING = "</sitemapindex>\n"

    def __init__(self, *, stylesheet_href: str | None = None, max_bytes: int) -> None:
        super().__init__(
            label="sitemap index",
            max_items=MAX_INDEX_ENTRIES,
            max_bytes=max_bytes,
            closing=self.CLOSING,
        )
        self._stylesheet_href = stylesheet_href

    def open(self) -> str:
        return self._start(f'{prolog(self._stylesheet_href)}<sitemapindex xmlns="{SITEMAP_NS}">\n')

    def sitemap(self, loc: str, lastmod: date | None) -> str:
        text = f"<sitemap><loc>{escape_loc(loc)}</loc>"
        if lastmod is not None:
            text += f"<lastmod>{format_w3c(lastmod)}</lastmod>"
        return self._account(text + "</sitemap>\n")

    def close(self) -> str:
        return self.CLOSING
