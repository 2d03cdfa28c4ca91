"""XML text: this module alone owns escaping and the fragments written for values.

The renderer (:mod:`.urlset_writer`) writes documents; entry validation (:mod:`.models`) keeps
the ``<lastmod>``/``<changefreq>``/``<priority>`` fragments it builds once per entry, from
here, so every character that reaches a document was escaped by one of these functions.
"""

from __future__ import annotations

import re
from decimal import Decimal

from .types import CHANGEFREQS

__all__ = [
    "CHANGEFREQ_ELEMENT",
    "PRIORITY_ELEMENT",
    "escape",
    "escape_loc",
    "escaped_loc_size",
    "lastmod_element",
    "priority_element",
    "split_tail",
    "tail_lastmod",
]

# The elements for the seven words and the eleven usual priorities, built once: a
# lookup is both the validity check and the rendering for nearly every URL.
CHANGEFREQ_ELEMENT = {word: f"<changefreq>{word}</changefreq>" for word in CHANGEFREQS}
PRIORITY_ELEMENT = {p / 10: f"<priority>{p / 10:.4g}</priority>" for p in range(11)}


def lastmod_element(w3c_text: str) -> str:
    """``<lastmod>`` of a W3C date already formatted (digits, ``-``, ``:``, ``T``, ``+``)."""
    return "<lastmod>" + w3c_text + "</lastmod>"


def tail_lastmod(tail: str) -> str | None:
    """The W3C text of the ``<lastmod>`` an entry's tail starts with (the writers put it
    first: :func:`lastmod_element`), or None: :func:`split_tail`'s first part without its
    regular expression, for reading every entry of a page as it is written."""
    return tail[9 : tail.index("<", 9)] if tail.startswith("<lastmod>") else None


def priority_element(priority: float) -> str:
    """``<priority>`` of a checked value in [0, 1], as XML Schema's decimal (no exponent)."""
    text = f"{priority:.4g}"
    if "e" in text:  # 1e-05 is not a decimal; 0.00001 is
        text = format(Decimal(text), "f")
    return f"<priority>{text}</priority>"


# The shape of an entry's pre-rendered tail: each fragment optional, in this order, values
# never escaped (W3C dates, the seven words and numbers hold no markup characters).
_TAIL = re.compile(
    r"(?:<lastmod>([^<]*)</lastmod>)?(?:<changefreq>([^<]*)</changefreq>)?"
    r"(?:<priority>([^<]*)</priority>)?"
)


def split_tail(tail: str) -> tuple[str, str, str]:
    """The lastmod, changefreq and priority texts of an entry's tail (``""`` if absent).

    The inverse of the fragments above, for views that show the fields rather than the
    XML (the HTML view).
    """
    if not tail:
        return "", "", ""
    found = _TAIL.fullmatch(tail)
    if found is None:
        raise ValueError(f"not a tail written by simple_fields: {tail!r}")
    lastmod, changefreq, priority = found.groups("")
    return lastmod, changefreq, priority


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


def escaped_loc_size(length: int, ampersands: int, apostrophes: int) -> int:
    """``len(escape_loc(url))`` of URLs of ``length`` characters holding so many of each."""
    return length + 4 * ampersands + 5 * apostrophes  # &amp; and &apos;
