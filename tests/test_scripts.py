"""scripts/demo installs what its options need, and runs pip only when something changed.

The scripts run for real (bash) in a copy of the repository's skeleton whose
`.venv/bin/python` is a stand-in that records how it was called, so no package is
installed and no network is used.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../calls"
if [ "$2" = pip ] && [ -n "${FAIL_PIP:-}" ]; then echo "pip: no such package" >&2; exit 1; fi
exit 0
"""


def _skeleton(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("demo", "venv"):
        shutil.copy(ROOT / "scripts" / name, repo / "scripts" / name)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    python = repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return repo


def _demo(repo: Path, *args: str, fail_pip: bool = False) -> tuple[int, list[str], str]:
    """Run scripts/demo; return its exit code, the stand-in python's calls and stderr."""
    calls = repo / ".venv" / "calls"
    calls.unlink(missing_ok=True)
    env = {"PATH": "/usr/bin:/bin", **({"FAIL_PIP": "1"} if fail_pip else {})}
    done = subprocess.run(
        ["bash", "scripts/demo", *args], cwd=repo, env=env, capture_output=True, text=True
    )
    lines = calls.read_text().splitlines() if calls.exists() else []
    return done.returncode, lines, done.stderr


def _pip(calls: list[str]) -> list[str]:
    return [c.split(" -e ", 1)[1] for c in calls if c.startswith("-m pip install")]


def test_demo_installs_the_demo_extra_once(tmp_path: Path) -> None:
    repo = _skeleton(tmp_path)
    code, calls, _ = _demo(repo, "--port", "8001")
    assert code == 0 and _pip(calls) == [".[demo]"]
    assert calls[-1] == "-m sitemap_middleware demo --port 8001"
    code, calls, _ = _demo(repo, "--port", "8001")  # nothing changed: no pip
    assert code == 0 and calls == ["-m sitemap_middleware demo --port 8001"]


def test_demo_with_redis_url_installs_the_redis_extra(tmp_path: Path) -> None:
    repo = _skeleton(tmp_path)
    _demo(repo)
    for args in (["--redis-url", "redis://127.0.0.1:6379/0"], ["--redis-url=redis://h/1"]):
        code, calls, _ = _demo(repo, *args)
        assert code == 0 and _pip(calls) == ([".[demo,redis]"] if "--redis-url" in args else [])
        assert calls[-1] == "-m sitemap_middleware demo " + " ".join(args)
    code, calls, _ = _demo(repo)  # both installs are remembered
    assert code == 0 and _pip(calls) == []


def test_demo_reinstalls_when_pyproject_changes(tmp_path: Path) -> None:
    repo = _skeleton(tmp_path)
    _demo(repo)
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n# a new dependency\n")
    code, calls, _ = _demo(repo)
    assert code == 0 and _pip(calls) == [".[demo]"]


def test_failed_pip_stops_the_demo_and_is_tried_again(tmp_path: Path) -> None:
    repo = _skeleton(tmp_path)
    code, calls, stderr = _demo(repo, fail_pip=True)
    assert code == 1 and _pip(calls) == [".[demo]"] and len(calls) == 1  # demo not started
    assert "pip: no such package" in stderr and "the next run tries again" in stderr
    code, calls, _ = _demo(repo)
    assert code == 0 and _pip(calls) == [".[demo]"]
