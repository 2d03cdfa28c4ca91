"""What a section leaves out on purpose: ``SKIP``, ``Section(exclude=...)``, robots.txt.

This module alone decides which admitted URLs are left out *on purpose* (not invalid):

- an item that is :data:`SKIP` (a provider, ``map=``, ``to_entry``, a location function
  may give it; a mapping that returns ``None`` gives it too): reason ``"provider"``;
- a URL matching a glob of ``Section(exclude=[...])``: reason ``"pattern"``;
- a URL our own robots.txt disallows, for user-agent ``*`` or for any configured group
  (RFC 9309 matching, ``robots_rules.py``): reason ``"robots"``;
- a URL the guard quarantined (``Guard(action="exclude")``, verdicts in ``guard.py``):
  reason ``"guard"``. Every admitted URL is also noted for the guard to probe.

Globs and robots rules match the same string: the URL's path and query from the site
root, percent-decoded except ``%2F`` (:func:`robots_path`), without its fragment.
Globs are ``fnmatch`` globs, as the route providers' ``include``/``exclude``
(:class:`PathPatterns`, one precompiled regex): ``*`` matches any characters, ``/``
included. Both are applied a batch at a time, and not at all when there is nothing to
apply. Planning and rendering call the same :meth:`Exclusion.reasons`, so a page plan
and its page leave out the same URLs.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Iterable, Sequence

from .._exceptions import ConfigurationError
from .._settings import Robots
from .guard import GUARD, GuardBook
from .ledger import LedgerBook
from .robots import render_robots
from .robots_rules import RobotsRules, robots_path
from .skip import SKIP, SkipType

__all__ = [
    "GUARD",
    "SKIP",
    "SkipType",
    "Exclusion",
    "PathPatterns",
    "RobotsExclusion",
    "check_patterns",
    "robots_exclusion",
]


#: Why a URL was left out on purpose.
PROVIDER, PATTERN, ROBOTS = "provider", "pattern", "robots"


def check_patterns(owner: str, name: str, value: object) -> tuple[str, ...]:
    """Glob patterns as a tuple of strings, or a ConfigurationError."""
    given = (value,) if isinstance(value, str) else value
    patterns = tuple(given) if isinstance(given, Iterable) else None
    if patterns is None or not all(isinstance(p, str) and p for p in patterns):
        raise ConfigurationError(f"{owner}.{name} must be glob patterns (strings), got {value!r}")
    return patterns


class PathPatterns:
    """``fnmatch`` globs (case-sensitive, as ``fnmatchcase``), compiled into one regex."""

    __slots__ = ("patterns", "_each", "_any")

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self._each = [re.compile(fnmatch.translate(p)) for p in self.patterns]
        joined = "|".join(f"(?:{regex.pattern})" for regex in self._each)
        self._any = re.compile(joined) if self.patterns else None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def match(self, path: str) -> bool:
        """Whether any of the globs matches ``path``."""
        return self._any is not None and self._any.match(path) is not None

    def matches(self, paths: list[str]) -> list[int]:
        """Positions of the paths some glob matches (one regex over the batch)."""
        if self._any is None:
            return []
        hits = list(map(self._any.match, paths))
        return [i for i, hit in enumerate(hits) if hit is not None] if any(hits) else []

    def which(self, path: str) -> str | None:
        """The first glob that matches ``path`` (what ``explain`` names)."""
        return next(
            (p for p, r in zip(self.patterns, self._each, strict=True) if r.match(path)), None
        )


#: A group's ``User-agent:`` line (RFC 9309 2.2.1: matched case-insensitively).
_USER_AGENT = re.compile(r"^[ \t]*user-agent[ \t]*:[ \t]*([^\s#]+)", re.I | re.M)


class RobotsExclusion:
    """The robots.txt rules a sitemap honours: for ``*`` and for each configured group.

    In ``append`` mode the app's own file counts too, once this process has read it
    (:meth:`learn`, when robots.txt is served); :attr:`token` names the rules in force,
    so versions (plans, ETags) move when they change.
    """

    def __init__(self, text: str, agents: Sequence[str]) -> None:
        #: ``*`` and the agents whose groups count (lower-cased product tokens).
        self._honoured = {"*", *(agent.lower() for agent in agents)}
        self._configured = self._rules(text)
        self._app: list[tuple[str, RobotsRules]] = []
        self.token = ""

    def _rules(self, text: str) -> list[tuple[str, RobotsRules]]:
        """A rule set for ``*`` and for each honoured agent the file names a group for
        (an agent without one follows ``*``'s, already counted)."""
        named = _USER_AGENT.findall(text.removeprefix("\ufeff"))
        agents = dict.fromkeys(["*", *(a for a in named if a.lower() in self._honoured)])
        pairs = [(agent, RobotsRules(text, agent)) for agent in agents]
        return [(agent, rules) for agent, rules in pairs if rules.disallows is not None]

    def learn(self, text: str) -> None:
        """Take the app's own robots.txt (append mode) as part of the rules."""
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        if digest != self.token.partition(">")[2]:
            self._app = self._rules(text)
            self.token = f"robots>{digest}" if self._app else ""

    def __bool__(self) -> bool:
        return bool(self._configured or self._app)

    def disallowed(self, paths: list[str]) -> list[int]:
        """Positions of the paths a rule set disallows (prefiltered by one regex each)."""
        found: set[int] = set()
        for _, rules in (*self._configured, *self._app):
            prefilter = rules.disallows
            assert prefilter is not None
            hits = list(map(prefilter.match, paths))
            if any(hits):
                found.update(
                    i for i, hit in enumerate(hits) if hit and not rules.verdict(paths[i])[0]
                )
        return sorted(found)

    def why(self, path: str) -> str | None:
        """``Disallow: /x for user-agent '*'``, or None when every rule set allows it."""
        for agent, rules in (*self._configured, *self._app):
            allowed, rule = rules.verdict(path)
            if not allowed:
                return f"robots.txt rule {rule!r} for user-agent {agent!r}"
        return None


class Exclusion:
    """One section's patterns, the site's robots rules and its guard, applied to admitted
    URLs (``section``: whose quarantine the guard reads)."""

    __slots__ = ("patterns", "robots", "guard", "section", "ledger")

    def __init__(
        self,
        patterns: Sequence[str] = (),
        robots: RobotsExclusion | None = None,
        guard: GuardBook | None = None,
        section: str = "",
        ledger: LedgerBook | None = None,
    ):
        self.patterns = PathPatterns(patterns)
        self.robots = robots
        self.guard = guard
        self.section = section
        #: The content ledger (not an exclusion: it rides along to every admission step).
        self.ledger = ledger

    def __bool__(self) -> bool:
        present = self.guard is not None or self.ledger is not None
        return bool(self.patterns) or bool(self.robots) or present

    @property
    def token(self) -> str:
        """What of the rules a version must name (the app's robots.txt, once known; the
        section's quarantined URLs; the ledger's records)."""
        robots = self.robots.token if self.robots is not None else ""
        guard = self.guard.token(self.section) if self.guard is not None else ""
        ledger = self.ledger.token(self.section) if self.ledger is not None else ""
        return "|".join(t for t in (robots, guard, ledger) if t)

    def reasons(self, locs: list[str], cut: int) -> dict[int, str]:
        """Positions of the absolute ``locs`` left out, and why (``cut``: the origin's
        length, where the path starts)."""
        if not self:
            return {}
        left: dict[int, str] = {}
        if self.patterns or self.robots:
            paths = [loc[cut:] for loc in locs]
            joined = "".join(paths)
            if "%" in joined or "#" in joined:  # else each is already as rules read it
                paths = list(map(robots_path, paths))
            if self.robots:
                left.update(dict.fromkeys(self.robots.disallowed(paths), ROBOTS))
            if self.patterns:
                left.update(dict.fromkeys(self.patterns.matches(paths), PATTERN))
        if self.guard is not None:  # (what is left out on purpose is never probed)
            rest = [u for i, u in enumerate(locs) if i not in left] if left else locs
            self.guard.note(self.section, rest)
            for position in self.guard.left_out(self.section, locs):
                left.setdefault(position, GUARD)
        return left

    def why(self, loc: str, cut: int) -> str | None:
        """Why ``loc`` is left out, in words, or None (what ``explain`` says)."""
        path = robots_path(loc[cut:])
        pattern = self.patterns.which(path)
        if pattern is not None:
            return f"excluded by pattern {pattern!r}"
        robots = self.robots.why(path) if self.robots else None
        if robots is None and self.guard is not None:
            return self.guard.why(loc)
        return robots


def robots_exclusion(robots: Robots | None) -> RobotsExclusion | None:
    """The rules of our own robots.txt that sitemaps honour: its groups' (generate mode;
    in append mode the app's file too, once read). None when robots.txt is the app's
    alone, or nothing can be disallowed."""
    if robots is None:
        return None
    found = RobotsExclusion(render_robots(robots.groups, ()), robots.sitemap_agents)
    return found if found or robots.mode == "append" else None
