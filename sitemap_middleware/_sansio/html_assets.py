"""The human view's settings, assets and security policy (pure).

This module alone owns what the HTML views load and may run: their stylesheet and script,
read once from ``static/view.css`` and ``static/view.js`` and inlined, and the
Content-Security-Policy that allows exactly those two by the SHA-256 hashes computed here at
import. The markup itself is written by :mod:`.html_writer`.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from importlib import resources

from .._exceptions import ConfigurationError

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "HTML_HEADERS",
    "HTML_TYPE",
    "SCRIPT",
    "STYLE",
    "VIEW_DIGEST",
    "HTMLView",
]

HTML_TYPE = "text/html; charset=utf-8"
_STATIC = resources.files("sitemap_middleware").joinpath("static")
STYLE = _STATIC.joinpath("view.css").read_text("utf-8")
SCRIPT = _STATIC.joinpath("view.js").read_text("utf-8")
_FILE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _csp_hash(source: str) -> str:
    # CSP3 hash-source: base64 of the SHA-256 of the element's exact text content.
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


#: Nothing loads but the inline style and script whose hashes are listed: no external
#: asset, no other inline code (an injected <script> would not run even if escaping
#: failed), no framing by other sites, no forms, no <base> rewriting, and DOM sinks such
#: as innerHTML refused (Trusted Types with no policy: view.js uses none).
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {_csp_hash(STYLE)}; script-src {_csp_hash(SCRIPT)}; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; "
    "require-trusted-types-for 'script'; trusted-types 'none'"
)
#: Headers of every HTML view: the CSP, no sniffing, same-origin only (no embedding, no
#: cross-origin reads, no referrer to other sites) and never indexed.
HTML_HEADERS = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Referrer-Policy", "same-origin"),
    ("X-Robots-Tag", "noindex"),
)
#: Changes whenever the markup's assets do: part of every HTML ETag.
VIEW_DIGEST = hashlib.sha256((STYLE + "\x1f" + SCRIPT).encode()).hexdigest()[:16]


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
