"""RFC 9309 rule matching in `check`: longest match, Allow wins ties, wildcards, groups."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware._ops.robots_rules import RobotsRules

ROBOTS = """\
User-agent: *
Disallow: /private/
Allow: /private/open
Disallow: /*.pdf$
Disallow: /tmp

User-agent: Googlebot
User-agent: other
Disallow: /no-google/
Allow: /no-google/yes
"""


@pytest.mark.parametrize(
    ("agent", "path", "allowed"),
    [
        ("bingbot", "/private/x", False),
        ("bingbot", "/private/open/page", True),  # longer Allow wins
        ("bingbot", "/docs/a.pdf", False),
        ("bingbot", "/docs/a.pdf?x=1", True),  # '$' ends the path
        ("bingbot", "/tmpfile", False),  # a prefix, not a directory
        ("bingbot", "/robots.txt", True),
        ("Googlebot/2.1", "/private/x", True),  # its own group only
        ("googlebot", "/no-google/a", False),
        ("Googlebot", "/no-google/yes", True),
        ("bingbot", "/%70rivate/x", False),  # percent-decoded before matching
    ],
)
def test_rules_are_read_as_rfc_9309_says(agent: str, path: str, allowed: bool) -> None:
    """Group by product token, longest match, Allow on ties, '*' and '$'."""
    assert RobotsRules(ROBOTS, agent).allowed("https://example.com" + path) is allowed


def _naive(rules: list[tuple[bool, str]], path: str) -> bool:
    """Every rule tried: the longest match wins, Allow on a tie (the RFC, literally)."""
    best: tuple[int, bool] | None = None
    for allow, pattern in rules:
        anchored = pattern.endswith("$")
        body = pattern[:-1] if anchored else pattern
        regex = ".*".join(re.escape(p) for p in body.split("*")) + ("\\Z" if anchored else "")
        if re.match(regex, path, re.DOTALL):
            key = (len(pattern), allow)
            best = key if best is None or key > best else best
    return True if best is None else best[1]


PATTERN = st.text(alphabet="/ab*$", min_size=1, max_size=6).map(lambda s: "/" + s)


@settings(max_examples=300, deadline=None)
@given(
    rules=st.lists(st.tuples(st.booleans(), PATTERN), max_size=12),
    path=st.text(alphabet="/ab.", max_size=8).map(lambda s: "/" + s),
)
def test_matching_agrees_with_trying_every_rule(rules: list[tuple[bool, str]], path: str) -> None:
    """The indexed matcher gives the answer of the literal reading of RFC 9309."""
    text = "User-agent: *\n" + "".join(
        f"{'Allow' if allow else 'Disallow'}: {pattern}\n" for allow, pattern in rules
    )
    if path == "/robots.txt":
        return
    assert RobotsRules(text, "bot").allowed("https://example.com" + path) is _naive(rules, path)
