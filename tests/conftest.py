from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Where tests keep files for people to look at (browser screenshots, validator reports).
ARTIFACTS = pytest.StashKey[Path]()


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run async tests on asyncio and on trio: the core claims both."""
    return str(request.param)


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A folder for artifacts (``SITEMAP_ARTIFACTS_DIR``, else in pytest's temp dir)."""
    chosen = os.environ.get("SITEMAP_ARTIFACTS_DIR")
    folder = Path(chosen) if chosen else tmp_path_factory.getbasetemp() / "artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    request.config.stash[ARTIFACTS] = folder
    return folder


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Name the artifacts the run kept, so people can find the screenshots."""
    folder = config.stash.get(ARTIFACTS, None)
    if folder is None:
        return
    files = sorted(p.name for p in folder.iterdir())
    terminalreporter.write_sep("-", f"artifacts: {len(files)} files in {folder}")
    for name in files:
        terminalreporter.write_line(f"  {name}")
