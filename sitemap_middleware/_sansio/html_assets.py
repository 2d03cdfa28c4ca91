"""What the HTML views load and may run, and the headers that enforce it (pure).

This module alone owns the views' assets and security policy: their stylesheet and script,
read once from ``static/view.css`` and ``static/view.js`` and inlined, and the
Content-Security-Policy that allows exactly those two by the SHA-256 hashes computed here at
import. The markup itself is written by :mod:`.html_writer`; the views' settings
(:class:`HTMLView`) are in ``_html_settings.py``.
"""

from __future__ import annotations

import base64
import hashlib
import html
from importlib import resources
from typing import Protocol

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "HTML_HEADERS",
    "HTML_TYPE",
    "SCRIPT",
    "STYLE",
    "VIEW_DIGEST",
    "stylesheet",
]

HTML_TYPE = "text/html; charset=utf-8"
_STATIC = resources.files("sitemap_middleware").joinpath("static")
STYLE = _STATIC.joinpath("view.css").read_text("utf-8")
SCRIPT = _STATIC.joinpath("view.js").read_text("utf-8")
_XSL = _STATIC.joinpath("sitemap.xsl").read_text("utf-8")
#: Where the stylesheet links to the HTML view when that is on (an XML comment otherwise).
_XSL_LINK_SLOT = "<!-- link to the HTML view -->"


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


class View(Protocol):
    """What the stylesheet reads of an ``HTMLView`` (the settings import this module)."""

    @property
    def index_name(self) -> str: ...
    @property
    def page_prefix(self) -> str | None: ...


def stylesheet(view: View | None, page_prefix: str) -> bytes:
    """The built-in XSL; with the HTML views on, it links to the index view, and its
    script points that link at a page's own view (the prefixes map the file names)."""
    link = ""
    if view is not None:
        # Relative: the transformed page's address is the XML document's, in the same
        # directory as the view. Escaped, though file names hold no specials.
        href = html.escape(view.index_name)
        xml_prefix = html.escape(page_prefix)
        view_prefix = html.escape(view.page_prefix or page_prefix)
        link = (
            '<p id="html-view">Browsers are removing XSLT, which draws this table. '
            f'<a href="{href}" id="html-view-link" data-xml-prefix="{xml_prefix}" '
            f'data-view-prefix="{view_prefix}">Open the HTML view</a>: it works in every '
            "browser.</p>"
        )
    return _XSL.replace(_XSL_LINK_SLOT, link).encode("utf-8")
