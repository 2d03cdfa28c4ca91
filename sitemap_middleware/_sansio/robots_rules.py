"""robots.txt rules as RFC 9309 reads them: this module alone owns matching them.

``check`` asks, for every listed URL, whether robots.txt lets a crawler fetch it; the
middleware leaves out of its sitemaps what its own robots.txt disallows
(``exclusion.py``), a batch at a time: one regex of every ``Disallow`` picks the few URLs
worth the full decision.
RFC 9309 2.2.2: the group of the crawler's product token (case-insensitive; several
such groups combine; else the ``*`` groups), then the *longest* matching rule wins, and
``Allow`` wins a tie; ``*`` matches any characters and a final ``$`` ends the path.
``urllib.robotparser`` takes the first matching rule instead and knows no wildcards.

Matching never scans every rule for every URL (a hostile robots.txt of thousands of
rules times tens of thousands of URLs): rules without wildcards are looked up by the
path's prefixes of the lengths rules have, longest first; wildcard rules, longest first,
are tried only while they can still beat the best literal match. A wildcard rule is
matched piece by piece (``str.find``, leftmost), never by a backtracking regex: a rule
like ``/*a*a*a*a*a*a*a*b`` took a regex tens of seconds on a 60-character path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

__all__ = ["RobotsRules", "robots_path"]


@dataclass(slots=True)
class _Group:
    agents: list[str] = field(default_factory=list)
    rules: list[tuple[bool, str]] = field(default_factory=list)  # (allow, pattern)


def _normalise(path: str) -> str:
    # Rules and paths compare percent-decoded (RFC 9309 2.2.2), except '/' and '%2F'.
    return unquote(path.replace("%2F", "%252F").replace("%2f", "%252f"))


def robots_path(rest: str) -> str:
    """What rules match of a URL's part after its origin (path and query, no fragment)."""
    return _normalise(rest.partition("#")[0] or "/")


def _rule(allow: bool, pattern: str) -> str:
    return f"{'Allow' if allow else 'Disallow'}: {pattern}"


class RobotsRules:
    """Whether one user agent may fetch a URL, by one robots.txt's rules."""

    def __init__(self, text: str, user_agent: str) -> None:
        groups = _parse(text)
        token = user_agent.split("/", 1)[0].strip().lower()
        chosen = [g for g in groups if token in g.agents] or [g for g in groups if "*" in g.agents]
        literal: dict[str, bool] = {}
        wild: list[tuple[int, bool, _Glob, str]] = []
        disallows: list[str] = []
        for group in chosen:
            for allow, pattern in group.rules:
                pattern = _normalise(pattern)
                glob = _Glob(pattern)
                if not allow:
                    disallows.append(glob.prefilter)
                if "*" in pattern or pattern.endswith("$"):
                    wild.append((len(pattern), allow, glob, pattern))
                elif pattern in literal:
                    literal[pattern] = literal[pattern] or allow  # Allow wins a tie
                else:
                    literal[pattern] = allow
        self._literal = literal
        self._lengths = sorted({len(p) for p in literal}, reverse=True)
        self._wild = sorted(wild, key=lambda rule: (-rule[0], not rule[1]))
        #: Matches (from the start) every path some ``Disallow`` matches, and others:
        #: only those need :meth:`verdict`. None when nothing is disallowed.
        self.disallows = re.compile("|".join(disallows), re.DOTALL) if disallows else None

    def allowed(self, url: str) -> bool:
        """Whether the crawler may fetch ``url`` (its path and query)."""
        parts = urlsplit(url)
        path = _normalise((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        return self.verdict(path)[0]

    def verdict(self, path: str) -> tuple[bool, str]:
        """Whether the crawler may fetch ``path`` (as :func:`robots_path` gives it), and
        the rule that decided (``"Disallow: /x"``; empty when none matched)."""
        if path == "/robots.txt":
            return True, ""
        best, verdict, rule = -1, True, ""
        for length in self._lengths:
            if length <= len(path) and (found := self._literal.get(path[:length])) is not None:
                best, verdict, rule = length, found, _rule(found, path[:length])
                break
        for length, allow, glob, pattern in self._wild:
            if length < best or (length == best and not allow):
                break  # cannot beat the literal match
            if glob.match(path):
                return allow, _rule(allow, pattern)
        return verdict, rule


class _Glob:
    """A rule's pattern: ``*`` matches any characters, a final ``$`` ends the path."""

    __slots__ = ("_pieces", "_anchored", "prefilter")

    def __init__(self, pattern: str) -> None:
        self._anchored = pattern.endswith("$")
        self._pieces = (pattern[:-1] if self._anchored else pattern).split("*")
        literal = len(self._pieces) == 1 and self._anchored
        #: A regex (no wildcard: linear) matching every path this pattern matches.
        self.prefilter = re.escape(self._pieces[0]) + ("\\Z" if literal else "")

    def match(self, path: str) -> bool:
        """Whether the pattern matches ``path`` from its start (each piece found leftmost:
        the earliest place leaves the most room for the pieces after it)."""
        pieces = self._pieces
        if not path.startswith(pieces[0]):
            return False
        pos = len(pieces[0])
        if len(pieces) == 1:
            return not self._anchored or pos == len(path)
        for piece in pieces[1:-1]:
            found = path.find(piece, pos)
            if found < 0:
                return False
            pos = found + len(piece)
        last = pieces[-1]
        if self._anchored:
            return len(path) - len(last) >= pos and path.endswith(last)
        return path.find(last, pos) >= 0


def _parse(text: str) -> list[_Group]:
    groups: list[_Group] = []
    current: _Group | None = None
    in_rules = False
    for line in text.removeprefix("\ufeff").splitlines():  # a UTF-8 BOM starts no rule
        name, sep, value = line.split("#", 1)[0].partition(":")
        if not sep:
            continue
        name, value = name.strip().lower(), value.strip()
        if name == "user-agent":
            if current is None or in_rules:
                current = _Group()
                groups.append(current)
                in_rules = False
            current.agents.append(value.lower())
        elif name in ("allow", "disallow") and current is not None:
            in_rules = True
            if value:  # an empty rule matches nothing (RFC 9309 2.2.2)
                current.rules.append((name == "allow", value))
    return groups
