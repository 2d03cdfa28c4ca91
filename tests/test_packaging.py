"""The package is ready to publish: `python -m build` and `twine check` as a release would run.

The sdist holds the package, README, CHANGELOG and LICENSE (plus what hatchling always adds);
the wheel holds the package (py.typed and the XSL included) and its metadata, never the
tests, benchmarks, scripts or a virtual environment. The wheel installs and imports on its own.
"""

from __future__ import annotations

import email
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import sitemap_middleware

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sitemap_middleware"
VERSION = sitemap_middleware.__version__


def _package_files() -> set[str]:
    """What the package directory holds: sources, py.typed, static files (no bytecode)."""
    found = {
        path.relative_to(ROOT).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert {"sitemap_middleware/py.typed", "sitemap_middleware/static/sitemap.xsl"} <= found
    return found


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdist and wheel built as a release builds them (isolated; the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return out


def test_build_makes_one_sdist_and_one_wheel_twine_accepts(dist: Path) -> None:
    names = sorted(p.name for p in dist.iterdir())
    assert names == [
        f"sitemap_middleware-{VERSION}-py3-none-any.whl",
        f"sitemap_middleware-{VERSION}.tar.gz",
    ]
    check = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *sorted(map(str, dist.iterdir()))],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("PASSED") == 2, check.stdout


def test_sdist_holds_the_package_and_its_documents_only(dist: Path) -> None:
    top = f"sitemap_middleware-{VERSION}/"
    with tarfile.open(dist / f"sitemap_middleware-{VERSION}.tar.gz") as sdist:
        names = {m.name.removeprefix(top) for m in sdist.getmembers() if m.isfile()}
    documents = {"README.md", "CHANGELOG.md", "LICENSE", "pyproject.toml", "PKG-INFO"}
    # Hatchling adds .gitignore so a wheel built from the sdist leaves out what git ignores.
    assert names == _package_files() | documents | {".gitignore"}


def test_wheel_holds_the_package_and_its_metadata_only(dist: Path) -> None:
    info = f"sitemap_middleware-{VERSION}.dist-info/"
    with zipfile.ZipFile(dist / f"sitemap_middleware-{VERSION}-py3-none-any.whl") as wheel:
        names = set(wheel.namelist())
        metadata = email.message_from_bytes(wheel.read(info + "METADATA"))
        entry_points = wheel.read(info + "entry_points.txt").decode()
    meta = {
        info + n for n in ("METADATA", "WHEEL", "RECORD", "entry_points.txt", "licenses/LICENSE")
    }
    assert names == _package_files() | meta
    assert metadata["Name"] == "sitemap-middleware" and metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    assert metadata["Requires-Python"] == ">=3.10"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "## Quickstart" in metadata.get_payload()  # the README is the project page
    assert "sitemap-middleware = sitemap_middleware.__main__:main" in entry_points


def test_wheel_installs_and_imports_on_its_own(dist: Path, tmp_path: Path) -> None:
    """Installed from the wheel alone (not the checkout), the package finds its files."""
    target = tmp_path / "site"
    wheel = dist / f"sitemap_middleware-{VERSION}-py3-none-any.whl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    probe = (
        "import importlib.resources, sitemap_middleware as m;"
        "files = importlib.resources.files(m);"
        "print(m.__file__, m.__version__, files.joinpath('py.typed').is_file(),"
        " files.joinpath('static/sitemap.xsl').read_text()[:5])"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {probe}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    location, version, typed, xsl = done.stdout.split()
    assert location.startswith(str(target)) and version == VERSION
    assert typed == "True" and xsl == "<?xml"
