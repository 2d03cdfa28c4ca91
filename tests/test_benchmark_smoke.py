"""The benchmark suite runs end to end on a tiny workload (no timings are asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import run


@pytest.mark.slow
def test_benchmark_suite_runs_on_a_tiny_workload(tmp_path: Path) -> None:
    """Every scenario produces rows and both result files are written."""
    results = run.main(["--smoke", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "smoke.json").read_text())
    assert saved["smoke"] is True
    for key in ("in_process", "over_http", "index", "gzip_levels", "throughput"):
        assert results[key], key
    assert results["in_process"][0]["case"].startswith("floor")
    assert all(row["bytes"] > 0 for row in results["in_process"])
    assert "## One 50,000-URL page, in process" in (tmp_path / "smoke.md").read_text()
