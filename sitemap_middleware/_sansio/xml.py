"""XML text: this module alone owns escaping and the fragments written for values.

The renderer (:mod:`.render`) writes documents; entry validation (:mod:`.models`) keeps
the ``<lastmod>``/``<changefreq>``/``<priority>`` fragments it builds once per entry, from
here, so every character that reaches a document was escaped by one of these functions.
"""

from __future__ import annotations

from decimal import Decimal

from .types import CHANGEFREQS

__all__ = [
    "CHANGEFREQ_ELEMENT",
    "PRIORITY_ELEMENT",
    "escape",
    "escape_loc",
    "lastmod_element",
    "priority_element",
]

# The elements for the seven words and the eleven usual priorities, built once: a
# lookup is both the validity check and the rendering for nearly every URL.
CHANGEFREQ_ELEMENT = {word: f"<changefreq>{word}</changefreq>" for word in CHANGEFREQS}
PRIORITY_ELEMENT = {p / 10: f"<priority>{p / 10:.4g}</priority>" for p in range(11)}


def lastmod_element(w3c_text: str) -> str:
    """``<lastmod>`` of a W3C date already formatted (digits, ``-``, ``:``, ``T``, ``+``)."""
    return "<lastmod>" + w3c_text + "</lastmod>"


def priority_element(priority: float) -> str:
    """``<priority>`` of a checked value in [0, 1], as XML Schema's decimal (no exponent)."""
    text = f"{priority:.4g}"
    if "e" in text:  # 1e-05 is not a decimal; 0.00001 is
        text = format(Decimal(text), "f")
    return f"<priority>{text}</priority>"


def escape(text: str) -> str:
    """Entity-escape the five XML specials (sitemaps.org requires all five)."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if "'" in text:
        text = text.replace("'", "&apos;")
    if '"' in text:
        text = text.replace('"', "&quot;")
    return text


def escape_loc(url: str) -> str:
    """Escape a normalised URL for XML text."""
    # Normalised URLs percent-encode < > " and spaces; only & and ' can remain.
    if "&" in url:
        url = url.replace("&", "&amp;")
    if "'" in url:
        url = url.replace("'", "&apos;")
    return url
