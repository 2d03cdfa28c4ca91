"""scripts/demo and scripts/docs install what they need, and run pip only when something
changed.

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
    for name in ("demo", "docs", "venv"):
        shutil.copy(ROOT / "scripts" / name, repo / "scripts" / name)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    python = repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    mkdocs = python.parent / "mkdocs"  # records its arguments beside the stand-in python's
    mkdocs.write_text('#!/usr/bin/env bash\necho "mkdocs $*" >> "$(dirname "$0")/../calls"\n')
    mkdocs.chmod(0o755)
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


def test_docs_installs_the_docs_extra_once_and_serves(tmp_path: Path) -> None:
    """`bash scripts/docs` installs the docs extra (once) and runs `mkdocs serve` with the
    options it was given."""
    repo = _skeleton(tmp_path)
    calls = repo / ".venv" / "calls"
    for expected_pip in ([".[docs]"], []):
        calls.unlink(missing_ok=True)
        done = subprocess.run(
            ["bash", "scripts/docs", "--dev-addr", "127.0.0.1:8001"],
            cwd=repo,
            env={"PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
        )
        lines = calls.read_text().splitlines()
        assert done.returncode == 0, done.stderr
        assert _pip(lines) == expected_pip
        assert lines[-1] == "mkdocs serve --dev-addr 127.0.0.1:8001"


# -- scripts/test: says what it installs and starts before doing it --------------------------

#: The tools scripts/test and scripts/venv use before their first install, linked into a
#: folder that is the whole PATH, so which packages look present is up to each test.
TOOLS = ("bash", "dirname", "ls", "sort", "tail", "sha256sum", "cut", "grep", "cat", "sh", "mktemp")
RECORDER = '#!/bin/sh\necho "$(basename "$0") $*" >> "$(dirname "$0")/../calls"\n'


def _test_skeleton(tmp_path: Path, present: tuple[str, ...], *, uid: int) -> Path:
    """The repository's skeleton for scripts/test; ``present``: the commands that exist
    (``initdb`` stands for PostgreSQL's binaries); ``uid``: who runs it (0 is root)."""
    repo = _skeleton(tmp_path)
    shutil.copy(ROOT / "scripts" / "test", repo / "scripts" / "test")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    fakes = {
        "id": f'#!/bin/sh\n[ "$1" = -u ] && echo {uid} || echo {"root" if uid == 0 else "dev"}\n',
        "nproc": "#!/bin/sh\necho 2\n",
        "apt-get": RECORDER,
        **{name: RECORDER for name in present if name != "initdb"},
    }
    pgbin = tmp_path / "pgbin"
    pgbin.mkdir()
    if "initdb" in present:
        fakes.update({f"../pgbin/{name}": RECORDER for name in ("initdb", "pg_ctl")})
    for name, text in fakes.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return repo


def _test(repo: Path, *args: str, **env: str) -> tuple[int, str, str, list[str]]:
    """Run scripts/test; its exit code, stdout, stderr and the commands it ran."""
    tmp = repo.parent
    done = subprocess.run(
        [shutil.which("bash") or "/bin/bash", "scripts/test", *args],
        cwd=repo,
        env={"PATH": str(tmp / "bin"), "SITEMAP_TEST_PGBIN": str(tmp / "pgbin"), **env},
        capture_output=True,
        text=True,
    )
    calls = tmp / "calls"
    ran = calls.read_text().splitlines() if calls.exists() else []
    ran += (
        (repo / ".venv" / "calls").read_text().splitlines()
        if (repo / ".venv" / "calls").exists()
        else []
    )
    return done.returncode, done.stdout, done.stderr, ran


def test_test_plan_names_each_install_and_changes_nothing(tmp_path: Path) -> None:
    """--plan lists the Debian packages it would install (with why) and the pip step."""
    repo = _test_skeleton(tmp_path, ("redis-server", "redis-cli", "java"), uid=0)
    code, out, _, ran = _test(repo, "--plan")
    assert code == 0 and ran == []  # no apt-get, no pip, no server
    assert out.startswith("scripts/test will:\n  apt-get install:\n")
    assert "    postgresql             PostgreSQL server:" in out
    assert "    chromium               headless Chromium:" in out
    assert "redis-server " not in out and "default-jre-headless" not in out
    assert "  pip: the test extras into .venv (sitemap-middleware[test], editable)" in out
    assert "PostgreSQL (as user postgres) and Redis (as user root)" in out
    assert out.endswith("pytest with coverage on 2 pytest-xdist workers\n")


def test_test_without_root_stops_before_installing_what_is_missing(tmp_path: Path) -> None:
    """Not root and a package missing: the plan, then the exact packages, and exit 1."""
    repo = _test_skeleton(tmp_path, ("initdb", "redis-server", "redis-cli", "java"), uid=1000)
    code, out, err, ran = _test(repo)
    assert code == 1 and ran == []
    assert "apt-get install (needs root: you are dev):\n    chromium " in out
    assert "PostgreSQL (as user dev) and Redis (as user dev)" in out
    assert "missing Debian packages, and installing them needs root" in err
    assert "sudo apt-get install -y chromium" in err


def test_test_plan_with_everything_present(tmp_path: Path) -> None:
    """Nothing to install once the packages and the test extras are there; the caller's
    -n wins over the default workers, SITEMAP_TEST_WORKERS=0 runs in one process."""
    present = ("initdb", "redis-server", "redis-cli", "chromium", "java")
    repo = _test_skeleton(tmp_path, present, uid=1000)
    subprocess.run(["bash", "scripts/venv", "test"], cwd=repo, check=True)
    code, out, _, _ = _test(repo, "--plan")
    assert code == 0
    assert "  apt: nothing (PostgreSQL, Redis, Chromium and Java are installed)\n" in out
    assert "  pip: nothing (.venv has the test extras of this pyproject.toml)\n" in out
    assert "on 2 pytest-xdist workers" in _test(repo, "--plan", "-m", "not slow")[1]
    assert "with the -n/-p options given" in _test(repo, "--plan", "-n", "3")[1]
    assert "in one process" in _test(repo, "--plan", SITEMAP_TEST_WORKERS="0")[1]
