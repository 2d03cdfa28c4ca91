"""A bounded load test through real servers (slow: about a minute)."""

from __future__ import annotations

import pytest

from benchmarks.load import run_load

#: RSS may wobble with allocator arenas; a leak of even 1 KiB per request would show as
#: ~10 MiB over 10,000 requests.
MAX_RSS_GROWTH_KIB = 8 * 1024


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_ten_thousand_mixed_requests(kind: str) -> None:
    """10,000 concurrent page / 304 / pass-through requests: no errors, right bodies, no leak."""
    result = run_load(kind, requests=10_000, concurrency=200)
    print(result)
    assert result.errors == 0 and result.wrong_bodies == 0
    assert set(result.statuses) == {200, 304}
    assert sum(result.statuses.values()) == 10_000
    assert result.rss_growth_kib < MAX_RSS_GROWTH_KIB
