"""A bounded load test through real servers (slow: about half a minute each)."""

from __future__ import annotations

import json

import pytest

from tests.harness.processes import run_python

REQUESTS = 5_000
#: Measured after gc + malloc_trim in the server, a round's growth is usually under 0.5 MiB
#: (once 2.04 MiB on a CI machine running other tests: thread stacks at peak concurrency);
#: a leak of 400 bytes per request would be 2 MiB in each of the two rounds.
MAX_RSS_GROWTH_KIB = 2 * 1024
#: A leak of one Python object per request would add 5,000 blocks to each round.
MAX_BLOCKS_GROWTH = 1_000


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_five_thousand_mixed_requests(kind: str) -> None:
    """Two rounds of 5,000 concurrent page / 304 / pass-through requests: no errors, right
    bodies, no leak — neither round's memory grows by what a per-request leak adds to both
    (``python -m benchmarks.load``, which prints its figures as JSON)."""
    done = run_python("-m", "benchmarks.load", kind, str(REQUESTS), "200")
    print(done.stdout)
    result = json.loads(done.stdout)
    assert result["errors"] == 0, "\n".join(result["error_kinds"])
    assert result["wrong_bodies"] == 0
    assert set(result["statuses"]) == {"200", "304"}  # JSON's keys are strings
    assert sum(result["statuses"].values()) == 2 * REQUESTS
    assert result["rss_growth_kib"] < MAX_RSS_GROWTH_KIB
    assert result["python_blocks_growth"] < MAX_BLOCKS_GROWTH


#: Leaks REQUESTS objects between two readings of the load test's memory probe (in the
#: benchmark's process: the probe reads the process it runs in).
LEAK = f"""
import json
from benchmarks.serve import memory_figures

before = json.loads(memory_figures())
leaked = [object() for _ in range({REQUESTS})]
after = json.loads(memory_figures())
print(json.dumps({{"growth": after["blocks"] - before["blocks"], "leaked": len(leaked)}}))
"""


def test_memory_figures_see_a_leak_of_one_object_per_request() -> None:
    """The probe the load test relies on does notice REQUESTS leaked objects."""
    result = json.loads(run_python("-c", LEAK).stdout)
    assert result["growth"] > MAX_BLOCKS_GROWTH
    assert result["leaked"] == REQUESTS
