"""The README: at most 200 lines, a quickstart per framework that runs as written (on a
real server, then `check --app`, which finds nothing), the same code as the tutorial's."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.docs_examples import DOCS, README, ROOT, python_blocks, reports_nothing, section
from tests.harness.documents import check_document
from tests.harness.ports import free_port

QUICKSTART = section(README, "Quickstart")
QUICKSTARTS = dict(part.split("\n", 1) for part in re.split(r"^### ", QUICKSTART, flags=re.M)[1:])
#: The port each documented command listens on when not told otherwise, and how it is
#: told another.
DEFAULT_PORTS = {"flask": 5000, "uvicorn": 8000, "gunicorn": 8000}
PORT_OPTIONS = {"flask": "--port {}", "uvicorn": "--port {}", "gunicorn": "--bind 127.0.0.1:{}"}
#: Where the tutorial holds each quickstart's code (the page, the block's position on it).
TUTORIAL = {
    "Flask": (DOCS / "tutorial" / "flask.md", 0),
    "FastAPI": (DOCS / "tutorial" / "starlette.md", 1),
    "Django": (DOCS / "tutorial" / "django.md", 0),
}


def test_readme_is_at_most_200_lines() -> None:
    """What it is, the two commands, a quickstart per framework, links into docs/: the
    rest lives in the documentation."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, len(lines)
    assert "## The two commands" in lines and "## Documentation" in lines


def test_readme_has_a_quickstart_per_framework() -> None:
    assert list(QUICKSTARTS) == ["Flask", "FastAPI", "Django"]


@pytest.mark.parametrize("framework", list(QUICKSTARTS))
def test_the_tutorial_holds_the_readme_quickstart(framework: str) -> None:
    """The tutorial's page for the framework shows the README's code, exactly (the block
    tests run both; this keeps them one example)."""
    (source,) = re.findall(r"```python\n(.*?)```", QUICKSTARTS[framework], re.S)
    page, position = TUTORIAL[framework]
    assert python_blocks(page)[position].source == source


@pytest.mark.parametrize("framework", list(QUICKSTARTS))
def test_readme_quickstart_runs_as_written(framework: str, tmp_path: Path) -> None:
    """Save the block as app.py, run the command under it, open the URLs it names.

    Each URL answers 200 on a real server (the documented port swapped for a free one, as
    a second app on the machine would need), and every URL the sitemap lists is a page the
    app itself serves.
    """
    part = QUICKSTARTS[framework]
    install, command, _ = re.findall(r"```console\n(.*?)\n```", part, re.S)
    (source,) = re.findall(r"```python\n(.*?)```", part, re.S)
    urls = re.findall(r"<(http://127\.0\.0\.1:\d+/[^>]*)>", part)
    assert install.startswith("pip install ") and urls, part
    for name in install.split()[2:]:  # what it tells to install is what the example needs
        assert importlib.metadata.distribution(name), name
    argv = shlex.split(command)
    documented = {urlsplit(u).port for u in urls}
    assert documented == {DEFAULT_PORTS[argv[0]]}, (command, urls)
    (tmp_path / "app.py").write_text(source)
    port = free_port()
    argv = [
        str(Path(sys.executable).parent / argv[0]),
        *argv[1:],
        *PORT_OPTIONS[argv[0]].format(port).split(),
    ]
    log = tmp_path / "server.log"
    with log.open("w") as output:
        process = subprocess.Popen(argv, cwd=tmp_path, stdout=output, stderr=subprocess.STDOUT)
    try:
        local = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(local + "/robots.txt", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "the quickstart did not start"
                time.sleep(0.1)
        for url in urls:
            response = httpx.get(url.replace(f":{urlsplit(url).port}/", f":{port}/"))
            assert response.status_code == 200, (url, response.text[:200])
        sitemap = check_document(httpx.get(local + "/sitemap.xml").content)
        listed = [urlsplit(page.url) for page in sitemap.all_pages()]
        assert listed and {u.netloc for u in listed} == {"example.com"}
        for url in listed:  # the example lists only pages it serves
            assert httpx.get(local + url.path).status_code == 200, url.path
    finally:
        process.terminate()
        process.wait(20)


#: Runs `sitemap-middleware ARGS` with the library's records on stderr, as a user who
#: configured logging would see them.
LOGGED_CLI = (
    "import logging, sys\n"
    "logging.basicConfig(level=logging.INFO, format='%(levelname)s %(name)s: %(message)s')\n"
    "from sitemap_middleware.__main__ import main\n"
    "main(sys.argv[1:])\n"
)


@pytest.mark.parametrize("framework", list(QUICKSTARTS))
def test_readme_quickstart_ends_with_a_clean_check(framework: str, tmp_path: Path) -> None:
    """Each quickstart ends with `sitemap-middleware check --app app:app`: run as written on
    its app.py, it exits 0 and finds nothing (the verdict the README quotes), and serving
    every document and listed URL logs no warning of the library."""
    part = QUICKSTARTS[framework]
    *_, command = re.findall(r"```console\n(.*?)\n```", part, re.S)
    assert command == "sitemap-middleware check --app app:app"
    assert part.rstrip().endswith("```"), "the check is the quickstart's last step"
    (verdict,) = re.findall(r"`(OK: [^`]*)`", part)
    (source,) = re.findall(r"```python\n(.*?)```", part, re.S)
    (tmp_path / "app.py").write_text(source)
    done = subprocess.run(
        [sys.executable, "-c", LOGGED_CLI, *shlex.split(command)[1:]],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    reports_nothing(done.stdout, verdict)
    assert "INFO sitemap_middleware: served sitemap.xml 200" in done.stderr, done.stderr
    assert not re.search(r"^(WARNING|ERROR|CRITICAL) sitemap_middleware", done.stderr, re.M), (
        done.stderr
    )
