"""Pure routing: which of our documents (if any) a request path names."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from .._config import SitemapConfig

__all__ = ["Kind", "Target", "match", "page_name"]

#: Page numbers beyond this are certainly past the end (50,000 pages x 50,000 URLs).
MAX_PAGE_DIGITS = 9
STYLESHEET_NAME = "sitemap.xsl"
TEXT_SITEMAP_NAME = "sitemap.txt"


class Kind(enum.Enum):
    ROBOTS = "robots"
    ROOT = "root"  # sitemap.xml: a urlset when everything fits, else the index
    INDEX = "index"
    PAGE = "page"
    STYLESHEET = "stylesheet"


@dataclass(frozen=True, slots=True)
class Target:
    """A document we answer: its kind, format and, for pages, section and page number.

    ``page`` is 0 for a malformed page number (leading zero, too long): ours, but a 404.
    """

    kind: Kind
    text: bool = False
    gzip_file: bool = False
    section: str | None = None
    page: int = 0

    @property
    def is_sitemap(self) -> bool:
        return self.kind in (Kind.ROOT, Kind.INDEX, Kind.PAGE)


def page_name(config: SitemapConfig, section: str, page: int, ext: str = "xml") -> str:
    return f"{config.page_prefix}{section}-{page}.{ext}"


def _page_pattern(config: SitemapConfig) -> re.Pattern[str]:
    return re.compile(
        re.escape(config.page_prefix)
        + r"(?P<section>[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*)-(?P<page>\d+)\.(?P<ext>xml|txt)"
    )


_PATTERNS: dict[str, re.Pattern[str]] = {}


def match(path: str, config: SitemapConfig) -> Target | None:
    """The target a request path names, or ``None`` to pass the request to the app."""
    if config.robots_path is not None and path == config.robots_path:
        return Target(Kind.ROBOTS)
    directory = config.base.directory
    if not path.startswith(directory):
        return None
    name = path[len(directory) :]
    if "/" in name or not name:
        return None
    gzip_file = name.endswith(".gz") and config.gzip_files
    if gzip_file:
        name = name[:-3]
    if name == config.sitemap_name:
        return Target(Kind.ROOT, gzip_file=gzip_file)
    if name == config.index_name:
        return Target(Kind.INDEX, gzip_file=gzip_file)
    if config.text_sitemaps and name == TEXT_SITEMAP_NAME:
        return Target(Kind.ROOT, text=True, gzip_file=gzip_file)
    if config.stylesheet is True and name == STYLESHEET_NAME and not gzip_file:
        return Target(Kind.STYLESHEET)
    pattern = _PATTERNS.get(config.page_prefix)
    if pattern is None:
        pattern = _PATTERNS.setdefault(config.page_prefix, _page_pattern(config))
    found = pattern.fullmatch(name)
    if found is None or config.section(found["section"]) is None:
        return None
    text = found["ext"] == "txt"
    if text and not config.text_sitemaps:
        return None
    digits = found["page"]
    page = int(digits) if len(digits) <= MAX_PAGE_DIGITS and digits[0] != "0" else 0
    return Target(Kind.PAGE, text=text, gzip_file=gzip_file, section=found["section"], page=page)
