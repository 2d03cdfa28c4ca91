"""Every Python example in the README runs as written and serves valid sitemaps."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from benchmarks.common import free_port
from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from tests.helpers import check_document, fetch

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The *Local development* section: its app runs on a real server with its own base URL
#: (test_readme_local_development_runs_as_written), not in this process.
LOCAL = README.read_text().split("\n## Local development\n", 1)[1].split("\n## ", 1)[0]
BLOCKS = [
    block
    for block in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    if block not in LOCAL
]

#: Django examples run in their own interpreter (Django's settings are per process), in
#: the test project (tests/djangoproject) with its app importable as ``shop``, as a
#: project's own app would be. They must define ``application``; its robots.txt and
#: sitemap.xml are written to files for the test to check.
DJANGO_HARNESS = """
import os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "tests.djangoproject.settings"
import anyio, django, httpx
django.setup()
from tests.djangoproject.data import seed
seed()
import tests.djangoproject.shop as shop
import tests.djangoproject.shop.models, tests.djangoproject.shop.sitemaps
sys.modules.update({"shop": shop, "shop.models": shop.models, "shop.sitemaps": shop.sitemaps})
namespace = {"__name__": "readme_example"}
exec(compile(open(sys.argv[1]).read(), "README.md", "exec"), namespace)
app = namespace["application"]

async def get(path):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://example.com") as client:
        return (await client.get(path)).content

for name in ("robots.txt", "sitemap.xml"):
    from sitemap_middleware import ASGISitemapMiddleware
    if isinstance(app, ASGISitemapMiddleware):
        body = anyio.run(get, "/" + name)
    else:
        from werkzeug.test import Client
        body = Client(app).get("/" + name, headers={"Host": "example.com"}).data
    open(name, "wb").write(body)
"""


def _check_app(app: Any) -> None:
    if hasattr(app, "test_client"):  # Flask
        client = app.test_client()
        robots = client.get("/robots.txt").text
        sitemap = client.get("/sitemap.xml").data
    else:

        async def get() -> tuple[str, bytes]:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://testserver"
            ) as client:
                return (await client.get("/robots.txt")).text, (
                    await client.get("/sitemap.xml")
                ).content

        robots, sitemap = anyio.run(get)
    assert "Sitemap: https://example.com/sitemap.xml" in robots
    assert check_document(sitemap).all_pages is not None


@pytest.mark.parametrize("source", BLOCKS, ids=[f"block-{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block executes; any app or config it defines serves a valid sitemap."""
    monkeypatch.chdir(tmp_path)
    if "sitemap_middleware.django" in source:
        _run_django_example(source, tmp_path)
        return
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(source, str(README), "exec"), namespace)
    if "app" in namespace:
        _check_app(namespace["app"])
    elif isinstance(namespace.get("config"), SitemapConfig):

        async def serve() -> bytes:
            core = SitemapCore(namespace["config"])
            reply, body = await fetch(core, "/sitemap.xml")
            assert reply.status == 200, body
            engine = getattr(namespace.get("provider"), "_engine", None)
            if engine is not None:  # close pooled aiosqlite connections on this loop
                await engine.dispose()
            return body

        check_document(anyio.run(serve))


def _run_django_example(source: str, tmp_path: Path) -> None:
    (tmp_path / "example.py").write_text(source)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SITEMAP_DJANGO_DB": str(tmp_path / "db.sqlite3"),
    }
    env.pop("SITEMAP_TEST_POSTGRES_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", DJANGO_HARNESS, "example.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Sitemap: https://example.com/sitemap.xml" in (tmp_path / "robots.txt").read_text()
    check_document((tmp_path / "sitemap.xml").read_bytes())


def test_readme_has_the_examples_it_promises() -> None:
    """Quickstarts for Flask, Starlette and FastAPI, and one block per provider and extension."""
    text = "\n".join(BLOCKS)
    for name in (
        "Flask(",
        "Starlette(",
        "FastAPI(",
        "StaticProvider",
        "TextFileProvider",
        "DirectoryProvider",
        "FlaskRoutesProvider",
        "SQLAlchemyProvider",
        "Image(",
        "Video(",
        "NewsArticle(",
        "Alternate(",
        "WSGISitemapMiddleware(\n    application",
        "DjangoQuerySetProvider(",
        "DjangoRoutesProvider(",
    ):
        assert name in text, name


QUICKSTART = README.read_text().split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
QUICKSTARTS = dict(
    section.split("\n", 1) for section in re.split(r"^### ", QUICKSTART, flags=re.M)[1:]
)
#: The port each documented command listens on when not told otherwise.
DEFAULT_PORTS = {"flask": 5000, "uvicorn": 8000}


def test_readme_has_a_quickstart_per_framework() -> None:
    assert list(QUICKSTARTS) == ["Flask", "Starlette", "FastAPI"]


@pytest.mark.parametrize("framework", list(QUICKSTARTS))
def test_readme_quickstart_runs_as_written(framework: str, tmp_path: Path) -> None:
    """Save the block as app.py, run the command under it, open the URLs it names.

    Each URL answers 200 on a real server (the documented port swapped for a free one, as
    a second app on the machine would need), and every URL the sitemap lists is a page the
    app itself serves.
    """
    section = QUICKSTARTS[framework]
    install, command, _ = re.findall(r"```console\n(.*?)\n```", section, re.S)
    (source,) = re.findall(r"```python\n(.*?)```", section, re.S)
    urls = re.findall(r"<(http://127\.0\.0\.1:\d+/[^>]*)>", section)
    assert install.startswith("pip install ") and urls, section
    for name in install.split()[2:]:  # what it tells to install is what the example needs
        assert importlib.metadata.distribution(name), name
    argv = shlex.split(command)
    documented = {urlsplit(u).port for u in urls}
    assert documented == {DEFAULT_PORTS[argv[0]]}, (command, urls)
    (tmp_path / "app.py").write_text(source)
    port = free_port()
    argv = [str(Path(sys.executable).parent / argv[0]), *argv[1:], "--port", str(port)]
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


def _reports_nothing(stdout: str, verdict: str) -> None:
    """A text report without a finding (an ERROR, WARNING or INFO line) or a hint, whose
    verdict line starts as ``verdict``."""
    assert not re.search(r"^  (ERROR|WARNING|INFO) |^hint: ", stdout, re.M), stdout
    assert stdout.splitlines()[-1].startswith(verdict), stdout


@pytest.mark.parametrize("framework", list(QUICKSTARTS))
def test_readme_quickstart_ends_with_a_clean_check(framework: str, tmp_path: Path) -> None:
    """Each quickstart ends with `sitemap-middleware check --app app:app`: run as written on
    its app.py, it exits 0 and finds nothing (the verdict the README quotes), and serving
    every document and listed URL logs no warning of the library."""
    section = QUICKSTARTS[framework]
    *_, command = re.findall(r"```console\n(.*?)\n```", section, re.S)
    assert command == "sitemap-middleware check --app app:app"
    (verdict,) = re.findall(r"`(OK: [^`]*)`", section)
    (source,) = re.findall(r"```python\n(.*?)```", section, re.S)
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
    _reports_nothing(done.stdout, verdict)
    assert "INFO sitemap_middleware: served sitemap.xml 200" in done.stderr, done.stderr
    assert not re.search(r"^(WARNING|ERROR|CRITICAL) sitemap_middleware", done.stderr, re.M), (
        done.stderr
    )


def test_readme_local_development_runs_as_written(tmp_path: Path) -> None:
    """The *Local development* app under `flask run`, its base URL from $SITE_URL (the
    port swapped for a free one), checked over HTTP by the command below it: nothing to
    fix, and the server's log has the library's INFO line for each document served."""
    (source,) = re.findall(r"```python\n(.*?)```", LOCAL, re.S)
    (commands,) = re.findall(r"```console\n(.*?)\n```", LOCAL, re.S)
    serve_command, check_command = commands.splitlines()
    assert 'os.environ.get("SITE_URL"' in source and "logging.basicConfig" in source
    (tmp_path / "app.py").write_text(source)
    port = free_port()
    local = f"http://127.0.0.1:{port}"
    argv = shlex.split(serve_command)
    argv = [str(Path(sys.executable).parent / argv[0]), *argv[1:], "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SITE_URL": local}
    log = tmp_path / "server.log"
    with log.open("w") as output:
        server = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=output, stderr=output)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(local + "/", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "the example did not start"
                time.sleep(0.1)
        check = shlex.split(check_command.replace(":5000/", f":{port}/"))
        assert check[:2] == ["sitemap-middleware", "check"] and check[2] == local + "/"
        done = subprocess.run(
            [sys.executable, "-m", "sitemap_middleware", *check[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.terminate()
        server.wait(20)
    assert done.returncode == 0, done.stdout + done.stderr
    _reports_nothing(done.stdout, "OK: 2 documents, 2 URLs listed, 0 errors, 0 warnings")
    served = log.read_text()
    assert "INFO sitemap_middleware: served sitemap.xml 200: 2 urls" in served, served
    assert "INFO sitemap_middleware: served robots.txt 200" in served
    assert "WARNING sitemap_middleware" not in served


def test_readme_feeds_example_serves_valid_feeds_and_llms_txt() -> None:
    """The *Feeds and llms.txt* block: its feeds are valid, its drafts left out."""
    from tests.unit.test_feeds import check_atom, check_rss

    (source,) = [block for block in BLOCKS if "Feed(" in block]
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(source, str(README), "exec"), namespace)

    async def serve() -> dict[str, bytes]:
        core = SitemapCore(namespace["config"])
        bodies = {}
        for path in ("/feed.atom", "/feed.rss", "/llms.txt", "/robots.txt"):
            reply, bodies[path] = await fetch(core, path)
            assert reply.status == 200, bodies[path]
        return bodies

    bodies = anyio.run(serve)
    atom = check_atom(bodies["/feed.atom"])
    ids = [e.findtext("{http://www.w3.org/2005/Atom}id") for e in atom.iter("{*}entry")]
    assert ids == [
        "https://example.com/blog/latte-art",
        "https://example.com/blog/caf%C3%A9-opening",
    ]
    check_rss(bodies["/feed.rss"])
    llms = bodies["/llms.txt"].decode()
    assert llms.startswith("# Example\n\n> A coffee shop.\n\n## Blog\n\n- [")
    assert "- [Latte art & foam](https://example.com/blog/latte-art)" in llms
    assert "https://example.com/blog/drafts" in llms and "## Pages" in llms
    assert "Sitemap: https://example.com/feed.rss" in bodies["/robots.txt"].decode()


def test_readme_languages_on_other_hosts_example_serves_each_host() -> None:
    """The *Languages on other hosts* block: each host lists its own language, every URL
    with the three hosts' alternates and x-default, XSD-valid."""
    from sitemap_middleware._engine.core import RequestInfo
    from sitemap_middleware._engine.tenants import TenantCores
    from tests.helpers import collect

    (source,) = [block for block in BLOCKS if "Languages(\n        sites=" in block]
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(source, str(README), "exec"), namespace)
    hosts = ("example.com", "de.example.com", "example.fr")

    async def serve() -> dict[str, bytes]:
        cores = TenantCores(namespace["tenants"])
        bodies = {}
        for host in hosts:
            request = RequestInfo("GET", "/sitemap.xml", {"host": host})
            target = cores.route(request)
            assert target is not None
            reply = await cores.respond(target, request)
            assert reply.status == 200
            bodies[host] = await collect(reply)
        await cores.aclose()
        return bodies

    bodies = anyio.run(serve)
    for host in hosts:
        sitemap = check_document(bodies[host])
        assert [page.url for page in sitemap.all_pages()] == [
            f"https://{host}/products/1",
            f"https://{host}/products/2",
        ]
        text = bodies[host].decode()
        for other in hosts:
            assert f'href="https://{other}/products/1"' in text
        assert text.count("<xhtml:link") == 8  # en, de, fr, x-default for each URL


GENERATE = (
    README.read_text().split("\n### Generate files without an app:", 1)[1].split("\n### ", 1)[0]
)


def test_readme_generate_example_runs_as_written(tmp_path: Path) -> None:
    """Each `$ ` line of the generate example, run in a shell, prints what follows it."""
    (block,) = re.findall(r"```console\n(.*?)\n```", GENERATE, re.S)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }
    steps = re.split(r"^\$ ", block, flags=re.M)[1:]
    assert len(steps) == 3
    for step in steps:
        command, _, expected = step.partition("\n")
        done = subprocess.run(
            command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected.strip(), command
    assert (tmp_path / "public" / "sitemap.xml").is_file()
