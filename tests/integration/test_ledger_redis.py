"""The content ledger of a fleet sharing Redis (``SITEMAP_TEST_REDIS_URL``; skipped
without it): first-seen times and the guard's body digests written by one instance are
read by the others, and ``check --app`` in a new process each run reads them
(in process: tests/unit/engine/test_ledger.py, test_ledger_guard.py and
tests/unit/ops/test_ledger_check.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware import Guard, Ledger, Renders
from sitemap_middleware.stores import RedisRenderStore
from tests.unit.engine.test_ledger import START, T0, Rows, lastmods
from tests.unit.engine.test_ledger import _core as ledger_core
from tests.unit.engine.test_ledger import _get as ledger_get
from tests.unit.engine.test_ledger_guard import Pages
from tests.unit.engine.test_ledger_guard import _core as guarded_core
from tests.unit.engine.test_ledger_guard import _probed as probed
from tests.unit.ops.test_ledger_check import CODE

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_fleet_sharing_redis_writes_the_same_first_seen_times() -> None:
    """Instance A stamps; B (another clock, another process's memory) reads A's times from
    the section's hash; a restarted instance too. Saved in the background."""
    redis_url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if not redis_url:
        pytest.skip("SITEMAP_TEST_REDIS_URL is not set")
    prefix = f"test-{uuid.uuid4().hex}:"
    rows = Rows({"a": (1, None), "b": (1, START)})
    cores = []
    try:
        for offset in (0, 5000, 9000):
            store = RedisRenderStore(redis_url, prefix=prefix)
            core = ledger_core(
                rows, Ledger(source="digest"), [T0 + offset], renders=Renders(store=store)
            )
            cores.append(core)
            _, body, _ = await ledger_get(core)
            assert lastmods(body) == {
                "/a": "2025-06-15T15:06:40+00:00",
                "/b": "2024-01-01T00:00:00+00:00",
            }
            assert core.ledger is not None
            await core.ledger.settled()
        # B sees an edit first; A, planning again, adopts B's time
        rows.rows["a"] = (2, None)
        _, body_b, _ = await ledger_get(cores[1])
        assert cores[1].ledger is not None
        await cores[1].ledger.settled()
        _, body_a, _ = await ledger_get(cores[0])
        assert lastmods(body_a) == lastmods(body_b)
        assert lastmods(body_a)["/a"] == "2025-06-15T16:30:00+00:00"
    finally:
        for core in cores:
            await core.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_fleet_shares_body_digests_with_the_verdicts() -> None:
    """Instance A probes; B reads A's verdicts (with their digests) from Redis, probes
    nothing and writes the same lastmods."""
    redis_url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if not redis_url:
        pytest.skip("SITEMAP_TEST_REDIS_URL is not set")
    prefix = f"test-{uuid.uuid4().hex}:"
    pages = Pages({"/a": None, "/b": START})
    guard = Guard(ttl=3600, max_probes_per_minute=None)
    cores = []
    try:
        for offset in (0, 5000):
            store = RedisRenderStore(redis_url, prefix=prefix)
            core = guarded_core(pages, [T0 + offset], guard=guard, renders=Renders(store=store))
            cores.append(core)
        a, b = cores
        written_a, _ = await probed(a)
        assert a.ledger is not None
        await a.ledger.settled()
        asked = len(pages.asked)
        written_b, _ = await probed(b)
        assert len(pages.asked) == asked  # B adopted A's verdicts
        assert (
            written_b
            == written_a
            == {
                "/a": "2025-06-15T15:06:40+00:00",
                "/b": "2024-01-01T00:00:00+00:00",
            }
        )
    finally:
        for core in cores:
            await core.aclose()


def _cli(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sitemap_middleware",
            "check",
            "--app",
            "tests.sites.ledger_site:app",
            "--json",
            "--no-http-checks",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_cli_check_app_reads_the_fleets_ledger_from_redis() -> None:
    """Each run a new process: the first records first-seen times in Redis; the next,
    after a lastmod bump without content, reports it; one after a content change not."""
    redis_url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if not redis_url:
        pytest.skip("SITEMAP_TEST_REDIS_URL is not set")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LEDGER_PREFIX": f"test-{uuid.uuid4().hex}:",
    }
    runs = []
    for site in (
        {"/a": ["r1", "2024-01-01"], "/b": ["r1", "2024-01-01"]},
        {"/a": ["r1", "2024-05-01"], "/b": ["r1", "2024-01-01"]},
        {"/a": ["r2", "2024-06-01"], "/b": ["r1", "2024-01-01"]},
    ):
        runs.append(_cli({**env, "LEDGER_SITE": json.dumps(site)}))
    codes = [run["summary"]["codes"].get(CODE, 0) for run in runs]
    assert codes == [0, 1, 0]
    (finding,) = [f for f in runs[1]["findings"] if f["code"] == CODE]
    assert finding["url"] == "https://shop.example/a"
