"""XML escaping (sitemap_middleware._sansio.xml)."""

from __future__ import annotations

import pytest

from sitemap_middleware._sansio.xml import escape, escape_loc, priority_element


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a&b", "a&amp;b"),
        ("<t>", "&lt;t&gt;"),
        ("it's", "it&apos;s"),
        ('"q"', "&quot;q&quot;"),
        ("plain", "plain"),
    ],
)
def test_escape_handles_all_five_entities(raw: str, escaped: str) -> None:
    """All five XML specials are entity-escaped, as sitemaps.org requires."""
    assert escape(raw) == escaped


def test_escape_loc_escapes_what_a_normalised_url_can_hold() -> None:
    """A normalised URL can still hold & and ' (RFC 3986 sub-delims): both are escaped."""
    assert escape_loc("https://e.com/a?b=1&c='x'") == "https://e.com/a?b=1&amp;c=&apos;x&apos;"


def test_priority_element_is_decimal() -> None:
    """Priorities are written as numbers the XSD reads as decimals."""
    assert priority_element(0.5) == "<priority>0.5</priority>"
