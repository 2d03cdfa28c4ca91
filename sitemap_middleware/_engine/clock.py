"""Last-Modified that never moves backwards and moves whenever content changes.

A provider's newest lastmod is not enough: deleting the newest row moves it backwards,
and a rename or a delete elsewhere leaves it unchanged, so If-Modified-Since would
answer 304 for changed content. This module alone decides Last-Modified: for a
section whose version has a token it is ``max(newest lastmod, when this process first
saw the current token)``, and a new token is always stamped at least one second (the
resolution of HTTP dates) after the previous Last-Modified.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from .._providers.base import ProviderVersion

__all__ = ["ModifiedClock"]

_SECOND = timedelta(seconds=1)


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


class ModifiedClock:
    """First-seen times of section versions, per section and base URL (in process)."""

    def __init__(self, now: Callable[[], datetime] = _now) -> None:
        self._now = now
        #: key -> (token, Last-Modified given for it)
        self._seen: dict[tuple[str, str], tuple[str, datetime]] = {}

    def last_modified(
        self, section: str, prefix: str, version: ProviderVersion | None
    ) -> datetime | None:
        """Last-Modified of a section's content at ``version``, or None if unknown."""
        if version is None:
            return None
        provided = version.last_modified
        if provided is not None:
            provided = provided.replace(microsecond=0)
            if provided.tzinfo is None:  # naive means UTC, as for entries
                provided = provided.replace(tzinfo=timezone.utc)
        if not version.token:
            return provided
        key = (section, prefix)
        seen = self._seen.get(key)
        if seen is not None and seen[0] == version.token:
            stamp = seen[1]
        else:
            stamp = self._now()
            if seen is not None and stamp <= seen[1]:
                stamp = seen[1] + _SECOND  # changed within the same second: still later
        if provided is not None and provided > stamp:
            stamp = provided
        self._seen[key] = (version.token, stamp)
        return stamp
