"""The documentation: every Python example of the README and docs/ runs as written and
serves valid sitemaps, the commands it shows print what it says, and the site builds with
warnings as errors (a broken link, anchor or docstring fails it)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from sitemap_middleware._engine.core import SitemapCore
from tests.docs_examples import (
    ALL_BLOCKS,
    BLOCKS,
    DOCS,
    LOCAL_DEVELOPMENT,
    PAGES,
    README,
    ROOT,
    Block,
    python_blocks,
    reports_nothing,
    run_block,
    section,
)
from tests.harness.core import fetch
from tests.harness.documents import check_document
from tests.harness.ports import free_port


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_example_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block executes; any app or config it defines serves a valid sitemap."""
    monkeypatch.chdir(tmp_path)
    run_block(block, tmp_path)


def test_examples_not_run_are_few_and_say_why() -> None:
    """A block left out of the run is marked `<!-- not run: reason -->`, with a reason;
    only the code a migration guide replaces is (its library is not installed)."""
    skipped = [block for block in ALL_BLOCKS if block.not_run is not None]
    assert len(skipped) <= 4, [block.name for block in skipped]
    for block in skipped:
        assert len(block.not_run or "") >= 20, block.name
        assert "/migrating/" in block.page.as_posix(), block.name


def test_the_docs_have_the_examples_they_promise() -> None:
    """Quickstarts for Flask, Starlette, FastAPI and Django, and a block per provider and
    extension."""
    text = "\n".join(block.source for block in BLOCKS)
    for name in (
        "Flask(",
        "Starlette(",
        "FastAPI(",
        "settings.configure(",
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


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    """`mkdocs build --strict` succeeds (links, anchors, the nav, the docstrings), and the
    API reference documents every public name of each public module."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed: pip install '.[docs]' (the test extra has it)")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    pages = {
        "sitemap_middleware": "",
        "sitemap_middleware.providers": "providers",
        "sitemap_middleware.stores": "stores",
        "sitemap_middleware.ops": "ops",
        "sitemap_middleware.django": "django",
    }
    for module, page in pages.items():
        html = (site / "reference" / "api" / page / "index.html").read_text(encoding="utf-8")
        documented = set(re.findall(r'id="([\w.]+)"', html))
        missing = [
            name
            for name in importlib.import_module(module).__all__
            if f"{module}.{name}" not in documented and not name.startswith("__")
        ]
        assert missing == [], (module, missing)


#: The package's private modules and packages (``_engine``, ``_sansio``, ``_config``...),
#: named as a path (``_engine/core.py``, ``_config.py``) or a dotted name.
_PRIVATE_NAMES = sorted(
    path.stem
    for path in (ROOT / "sitemap_middleware").iterdir()
    if path.name.startswith("_") and not path.name.startswith("__")
)
PRIVATE = re.compile(
    r"sitemap_middleware\._[a-z]|(?<![\w.<>-])(?:" + "|".join(_PRIVATE_NAMES) + r")(?:/|\.py\b)"
)


def test_pages_name_no_private_module() -> None:
    """Users read only public modules; the architecture page, which shows ARCHITECTURE.md,
    is the one place private modules are named."""
    architecture = DOCS / "explanation" / "architecture.md"
    for page in PAGES:
        if page == architecture:
            continue
        found = PRIVATE.findall(page.read_text(encoding="utf-8"))
        assert found == [], (page.relative_to(ROOT), found)


def test_where_names_live_lists_exported_names_only() -> None:
    """Each name the *Where names live* table gives a module is exported by it."""
    table = section(DOCS / "reference" / "api" / "index.md", "Where names live")
    rows = re.findall(r"^\| `(sitemap_middleware[\w.]*)` \| (.*) \|$", table, re.M)
    assert len(rows) == 5
    for module, holds in rows:
        exported = set(importlib.import_module(module).__all__)
        for name in re.findall(r"`(\w+)`", holds):
            if name.startswith("Supports"):  # "Supports*" stands for the capabilities
                continue
            assert name in exported, (module, name)


def test_feeds_example_serves_valid_feeds_and_llms_txt() -> None:
    """The *Feeds and llms.txt* block: its feeds are valid, its drafts left out."""
    from tests.harness.documents import check_atom, check_rss

    (block,) = [block for block in BLOCKS if "Feed(" in block.source]
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(block.source, block.name, "exec"), namespace)

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


def test_languages_on_other_hosts_example_serves_each_host() -> None:
    """The *Languages on other hosts* block: each host lists its own language, every URL
    with the three hosts' alternates and x-default, XSD-valid."""
    from sitemap_middleware._engine.core import RequestInfo
    from sitemap_middleware._engine.tenants import TenantCores
    from tests.harness.core import collect

    (block,) = [block for block in BLOCKS if "Languages(\n        sites=" in block.source]
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(block.source, block.name, "exec"), namespace)
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


def test_generate_example_runs_as_written(tmp_path: Path) -> None:
    """Each `$ ` line of the generate example, run in a shell, prints what follows it."""
    generate = section(DOCS / "how-to" / "export.md", "Generate files without an app:")
    (block,) = re.findall(r"```console\n(.*?)\n```", generate, re.S)
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


def test_local_development_runs_as_written(tmp_path: Path) -> None:
    """The *Local development* app under `flask run`, its base URL from $SITE_URL (the
    port swapped for a free one), checked over HTTP by the command below it: nothing to
    fix, and the server's log has the library's INFO line for each document served."""
    (block,) = python_blocks(LOCAL_DEVELOPMENT)
    text = LOCAL_DEVELOPMENT.read_text(encoding="utf-8")
    (commands,) = re.findall(r"```console\n(.*?)\n```", text, re.S)
    serve_command, check_command = commands.splitlines()
    assert 'os.environ.get("SITE_URL"' in block.source and "logging.basicConfig" in block.source
    (tmp_path / "app.py").write_text(block.source)
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
    reports_nothing(done.stdout, "OK: 2 documents, 2 URLs listed, 0 errors, 0 warnings")
    served = log.read_text()
    assert "INFO sitemap_middleware: served sitemap.xml 200: 2 urls" in served, served
    assert "INFO sitemap_middleware: served robots.txt 200" in served
    assert "WARNING sitemap_middleware" not in served


def test_readme_links_lead_to_pages_that_exist() -> None:
    """The README's links into docs/ (and the repository) name files that exist, and
    its anchors headings they have (mkdocs checks the links of docs/ itself)."""
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= 20
    for link in local:
        path, _, anchor = link.partition("#")
        assert (ROOT / path).is_file(), link
        if anchor:
            page = (ROOT / path).read_text(encoding="utf-8")
            slugs = {
                re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-")
                for h in re.findall(r"^#+ (.*)$", page, re.M)
            }
            assert anchor in slugs, link
