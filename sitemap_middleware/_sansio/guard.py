"""The guard's verdicts: which listed URLs are quarantined, per section, and since when.

No I/O: the engine (``_engine/guard.py``) probes and stores; this book answers the
exclusion step (``exclusion.py``) at once, a batch at a time, and names what a version
must (:meth:`GuardBook.token`: the set of a section's quarantined URLs, so plans and
ETags move exactly when it changes, as the robots token does).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime, timezone
from itertools import islice
from typing import NamedTuple

__all__ = ["GUARD", "GuardBook", "Verdict"]

#: The exclusion reason of a quarantined URL.
GUARD = "guard"
#: URLs waiting for a probe at most (more are noted again by a later render).
MAX_PENDING = 100_000
#: Verdicts kept in memory at most (least recently settled out).
MAX_KNOWN = 1_000_000
#: Verdicts a sweep for expired ones looks at, oldest first.
SWEEP_SCAN = 10_000
_MASK64 = (1 << 64) - 1


class Verdict(NamedTuple):
    """What a probe found: ``said`` is empty for an indexable page; ``transient`` for a
    5xx, 429 or no answer (reported, never left out); ``at`` and ``until`` are epoch
    seconds (when it was probed, when to probe again); ``digest``: of a 200's whole
    body (8 bytes of BLAKE2b, as an int), what the content ledger's guard source dates."""

    said: str
    at: float
    until: float
    transient: bool = False
    digest: int | None = None

    @property
    def quarantined(self) -> bool:
        return bool(self.said) and not self.transient

    def to_bytes(self) -> bytes:
        fields = [self.said, self.at, self.until, self.transient]
        return json.dumps(fields if self.digest is None else [*fields, self.digest]).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Verdict | None:
        """A stored verdict, or None for anything else (foreign or damaged)."""
        try:
            said, at, until, transient, *rest = json.loads(data)
        except (ValueError, TypeError, RecursionError):
            return None
        digest = rest[0] if len(rest) == 1 else None
        ok = isinstance(said, str) and isinstance(transient, bool) and len(rest) <= 1
        ok = ok and all(isinstance(t, int | float) and math.isfinite(t) for t in (at, until))
        if rest and not (type(digest) is int and 0 <= digest <= _MASK64):
            return None
        return cls(said, float(at), float(until), transient, digest) if ok else None

    def words(self) -> str:
        when = datetime.fromtimestamp(self.at, timezone.utc).isoformat(timespec="seconds")
        return f"{self.said} at {when.replace('+00:00', 'Z')}"


class GuardBook:
    """Verdicts by URL, quarantined URLs by section, and the URLs waiting for a probe."""

    def __init__(self, action: str) -> None:
        self.excludes = action == "exclude"
        self._known: OrderedDict[str, Verdict] = OrderedDict()
        self._bad: dict[str, dict[str, Verdict]] = {}
        self._tokens: dict[str, str] = {}
        self._pending: dict[str, str] = {}  # url -> the section that listed it
        self._section_of: dict[str, str] = {}  # url -> the section its verdict was for
        self._flight: set[str] = set()  # taken for a probe, not settled yet
        #: Called when URLs start waiting (the engine starts its background task).
        self.wake: Callable[[], None] | None = None
        #: Told when a URL's body digest changes (the content ledger's guard source).
        self.on_digest: Callable[[str, int], None] | None = None

    def note(self, section: str, locs: list[str]) -> None:
        """Remember the URLs of a batch that have no fresh verdict (quick: one lookup each)."""
        now = time.time()
        known, pending = self._known, self._pending
        added = False
        for loc in locs:
            verdict = known.get(loc)
            if (verdict is None or verdict.until <= now) and loc not in pending:
                if len(pending) >= MAX_PENDING:
                    break
                pending[loc] = section
                added = True
        if added and self.wake is not None:
            self.wake()

    def sweep(self, now: float) -> None:
        """Note again the URLs whose verdict expired (from the oldest verdict, SWEEP_SCAN
        of them at most): a section whose plan and render are kept (its version
        unchanged) is admitted by no one, so nothing else would probe its URLs again.
        A transient verdict behind a newer one waits for that one."""
        due: dict[str, list[str]] = {}
        for url, verdict in islice(self._known.items(), SWEEP_SCAN):
            if verdict.until > now:
                if verdict.transient:
                    continue
                break  # (verdicts after it were settled later, with the same ttl)
            section = self._section_of.get(url)
            if section is not None and url not in self._pending and url not in self._flight:
                due.setdefault(section, []).append(url)
        for section, urls in due.items():
            self.note(section, urls)

    def left_out(self, section: str, locs: list[str]) -> list[int]:
        """Positions of the quarantined ``locs`` (none in ``report`` mode)."""
        bad = self._bad.get(section)
        if not bad or not self.excludes:
            return []
        return [i for i, loc in enumerate(locs) if loc in bad]

    def take(self, count: int) -> list[tuple[str, str]]:
        """Up to ``count`` waiting ``(url, section)`` pairs, oldest first."""
        taken: list[tuple[str, str]] = []
        pending = self._pending
        while pending and len(taken) < count:
            url = next(iter(pending))
            taken.append((url, pending.pop(url)))
            self._flight.add(url)
        return taken

    def landed(self, urls: list[str]) -> None:
        """Taken URLs are settled (or failed): no longer in flight."""
        self._flight.difference_update(urls)

    def waiting(self) -> int:
        return len(self._pending)

    def unprobed(self) -> int:
        """URLs waiting for a probe or in flight (none: the guard has settled)."""
        return len(self._pending) + len(self._flight)

    def probed(self) -> int:
        """URLs with a verdict, fresh or not."""
        return len(self._known)

    def _learn(self, url: str, verdict: Verdict) -> Verdict:
        """Know ``verdict`` (a transient one keeps the body digest known before it)."""
        before = self._known.get(url)
        known = before.digest if before is not None else None
        if verdict.digest is None and verdict.transient and known is not None:
            verdict = verdict._replace(digest=known)
        self._known[url] = verdict
        self._known.move_to_end(url)
        while len(self._known) > MAX_KNOWN:
            self._section_of.pop(self._known.popitem(last=False)[0], None)
        if verdict.digest is not None and verdict.digest != known and self.on_digest:
            self.on_digest(url, verdict.digest)
        return verdict

    def settle(self, url: str, section: str, verdict: Verdict) -> bool:
        """Record a verdict; True when the section's quarantined set changed."""
        verdict = self._learn(url, verdict)
        self._section_of[url] = section
        bad = self._bad.setdefault(section, {})
        was = url in bad
        if verdict.quarantined:
            bad[url] = verdict
        else:
            bad.pop(url, None)
        if was == verdict.quarantined:
            return False
        digest = hashlib.sha256("\n".join(sorted(bad)).encode("utf-8", "surrogatepass"))
        self._tokens[section] = f"guard>{digest.hexdigest()[:16]}" if bad else ""
        return True

    def recall(self, url: str, verdict: Verdict) -> None:
        """Know a stored verdict (``explain``), without touching any section's quarantine."""
        self._learn(url, verdict)

    def digest(self, url: str) -> int | None:
        """The digest of ``url``'s body at its last 200 (None: none known)."""
        verdict = self._known.get(url)
        return verdict.digest if verdict is not None else None

    def token(self, section: str) -> str:
        """What a section's version must name (its quarantined URLs; ``""``: none)."""
        return self._tokens.get(section, "") if self.excludes else ""

    def view_token(self) -> str:
        """What an HTML index view must name: every section's quarantine, either mode."""
        return ",".join(f"{s}={t}" for s, t in sorted(self._tokens.items()) if t)

    def quarantined(self, section: str) -> list[tuple[str, Verdict]]:
        """A section's quarantined URLs and their verdicts, by URL."""
        return sorted(self._bad.get(section, {}).items())

    def verdict(self, url: str) -> Verdict | None:
        return self._known.get(url)

    def why(self, url: str) -> str | None:
        """``left out by the guard: answered 404 at <time>`` (exclude mode), else None."""
        verdict = self._known.get(url)
        if verdict is None or not verdict.quarantined or not self.excludes:
            return None
        return f"left out by the guard: {verdict.words()}"
