"""A bounded load test through real servers (slow: about half a minute each)."""

from __future__ import annotations

import json

import pytest

from benchmarks.load import run_load
from benchmarks.serve import memory_figures

REQUESTS = 5_000
#: Measured after gc + malloc_trim in the server, growth is under 1 MiB; a leak of 400
#: bytes per request would be 2 MiB.
MAX_RSS_GROWTH_KIB = 2 * 1024
#: A leak of one Python object per request would add 5,000 blocks.
MAX_BLOCKS_GROWTH = 1_000


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_five_thousand_mixed_requests(kind: str) -> None:
    """5,000 concurrent page / 304 / pass-through requests: no errors, right bodies, no leak."""
    result = run_load(kind, requests=REQUESTS, concurrency=200)
    print(result)
    assert result.errors == 0, "\n".join(result.error_kinds)
    assert result.wrong_bodies == 0
    assert set(result.statuses) == {200, 304}
    assert sum(result.statuses.values()) == REQUESTS
    assert result.rss_growth_kib < MAX_RSS_GROWTH_KIB
    assert result.python_blocks_growth < MAX_BLOCKS_GROWTH


def test_memory_figures_see_a_leak_of_one_object_per_request() -> None:
    """The probe the load test relies on does notice REQUESTS leaked objects."""
    before = json.loads(memory_figures())
    leaked = [object() for _ in range(REQUESTS)]
    after = json.loads(memory_figures())
    assert after["blocks"] - before["blocks"] > MAX_BLOCKS_GROWTH
    assert len(leaked) == REQUESTS
