from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import parallel

#: Where tests keep files for people to look at (browser screenshots, validator reports).
ARTIFACTS = pytest.StashKey[Path]()
#: The Django project of the Django tests (and of the benchmark that runs Django's views).
DJANGO_SETTINGS = "tests.djangoproject.settings"


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, services of this worker's own (tests/parallel.py)."""
    parallel.isolate()


def pytest_unconfigure(config: pytest.Config) -> None:
    parallel.release()


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run async tests on asyncio and on trio: the core claims both."""
    return str(request.param)


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A folder for artifacts (``SITEMAP_ARTIFACTS_DIR``, else in pytest's temp dir; one
    for all xdist workers, whose own temp dirs are folders of the run's)."""
    chosen = os.environ.get("SITEMAP_ARTIFACTS_DIR")
    base = tmp_path_factory.getbasetemp()
    if parallel.worker() is not None:
        base = base.parent
    folder = Path(chosen) if chosen else base / "artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    request.config.stash[ARTIFACTS] = folder
    workeroutput = getattr(request.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller's summary names it
        workeroutput["artifacts"] = str(folder)
    return folder


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller learns where each worker kept its artifacts."""
    folder = getattr(node, "workeroutput", {}).get("artifacts")
    if folder is not None:
        node.config.stash[ARTIFACTS] = Path(folder)


@pytest.fixture(scope="session")
def django_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Django set up on a fresh SQLite file (and PostgreSQL if available), seeded.

    Yields the environment a server subprocess needs to serve the same databases.
    """
    import django
    from django.conf import settings

    if settings.configured and os.environ.get("DJANGO_SETTINGS_MODULE") != DJANGO_SETTINGS:
        pytest.fail(
            "Django settings were configured by another test first; run tests/unit/django alone"
        )
    path = Path(tmp_path_factory.mktemp("django")) / "db.sqlite3"
    os.environ["SITEMAP_DJANGO_DB"] = str(path)
    os.environ["DJANGO_SETTINGS_MODULE"] = DJANGO_SETTINGS
    django.setup()
    from tests.djangoproject.data import seed

    seed("default")
    if "pg" in settings.DATABASES:
        seed("pg")
    yield {"DJANGO_SETTINGS_MODULE": DJANGO_SETTINGS, "SITEMAP_DJANGO_DB": str(path)}
    from django.db import connections

    connections.close_all()


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
