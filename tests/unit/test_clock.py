"""Last-Modified never moves backwards and moves whenever a section's version changes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sitemap_middleware import ProviderVersion
from sitemap_middleware._engine.clock import ModifiedClock

T0 = datetime(2030, 1, 1, tzinfo=timezone.utc)


def test_last_modified_is_first_seen_time_and_moves_only_forwards() -> None:
    """A new token is stamped when first seen, at least a second after the last stamp."""
    now = [T0]
    clock = ModifiedClock(lambda: now[0])
    newest_lastmod = T0 - timedelta(days=3)
    a = ProviderVersion("a", newest_lastmod)
    assert clock.last_modified("s", "p", a) == T0
    now[0] = T0 + timedelta(hours=1)
    assert clock.last_modified("s", "p", a) == T0  # same content, same time
    # A delete of the newest row moves the provider's time backwards: we still move on.
    b = ProviderVersion("b", newest_lastmod - timedelta(days=1))
    assert clock.last_modified("s", "p", b) == T0 + timedelta(hours=1)
    # Two changes within one second: the second is still strictly later (HTTP dates
    # have one-second resolution, so If-Modified-Since could not tell them apart).
    c = ProviderVersion("c", None)
    assert clock.last_modified("s", "p", c) == T0 + timedelta(hours=1, seconds=1)
    # Back to an earlier token: content changed again, time moves forward, never back.
    assert clock.last_modified("s", "p", a) == T0 + timedelta(hours=1, seconds=2)
    # A provider time newer than the first-seen time wins; a version without a token
    # is all the provider knows.
    future = T0 + timedelta(days=1)
    assert clock.last_modified("t", "p", ProviderVersion("x", future)) == future
    assert clock.last_modified("u", "p", ProviderVersion(None, future)) == future
    assert clock.last_modified("u", "p", None) is None
