"""The code blocks of the README and of docs/: found, run and checked as written.

Every ```python block of ``README.md`` and ``docs/**/*.md`` runs (``tests/test_docs.py``).
A block that is deliberately partial says why in a ``<!-- not run: reason -->`` comment
on the line before it. Django blocks run in their own interpreter (Django's settings are
per process); the others run here, and any app or configuration they define must serve
a valid sitemap.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from tests.harness.core import fetch
from tests.harness.documents import check_document

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: Every page whose examples run: the README, then the documentation site's pages.
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
#: Its app runs on a real server with its own base URL (tests/test_docs.py,
#: test_local_development_runs_as_written), not in this process.
LOCAL_DEVELOPMENT = DOCS / "tutorial" / "local-development.md"

_BLOCK = re.compile(
    r"^(?:<!-- not run: (?P<reason>[^\n]*?) -->\n)?```python[^\n]*\n(?P<source>.*?)^```",
    re.S | re.M,
)


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its source, and why it is not run (if so)."""

    page: Path
    line: int
    source: str
    not_run: str | None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def python_blocks(page: Path) -> list[Block]:
    """The ```python blocks of ``page``, each with the line its code starts on."""
    text = page.read_text(encoding="utf-8")
    return [
        Block(page, text.count("\n", 0, m.start("source")) + 1, m["source"], m["reason"])
        for m in _BLOCK.finditer(text)
    ]


ALL_BLOCKS = [block for page in PAGES for block in python_blocks(page)]
#: The blocks run by tests/test_docs.py::test_example_runs.
BLOCKS = [b for b in ALL_BLOCKS if b.not_run is None and b.page != LOCAL_DEVELOPMENT]


def section(page: Path, heading: str) -> str:
    """The text under the Markdown heading that starts with ``heading`` (up to the next
    heading of its level or above)."""
    text = page.read_text(encoding="utf-8")
    match = re.search(rf"^(#+) {re.escape(heading)}[^\n]*\n", text, re.M)
    assert match is not None, (page, heading)
    level = len(match[1])
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


#: Django examples run in their own interpreter, in the test project (tests/djangoproject)
#: with its app importable as ``shop``, as a project's own app would be; an example that
#: configures Django itself (``settings.configure(...)``, a one-file project) runs alone.
#: Either defines ``application`` or ``app``; its robots.txt and sitemap.xml are written
#: to files for the test to check.
DJANGO_HARNESS = """
import os, sys
standalone = sys.argv[2] == "standalone"
if not standalone:
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.djangoproject.settings"
    import django
    django.setup()
    from tests.djangoproject.data import seed
    seed()
    import tests.djangoproject.shop as shop
    import tests.djangoproject.shop.models, tests.djangoproject.shop.sitemaps
    sys.modules.update({"shop": shop, "shop.models": shop.models, "shop.sitemaps": shop.sitemaps})
import anyio, httpx
if standalone:  # imported as a module, as its server would: ROOT_URLCONF=__name__ works
    import importlib
    sys.path.insert(0, os.getcwd())
    namespace = vars(importlib.import_module("example"))
else:
    namespace = {"__name__": "docs_example"}
    exec(compile(open("example.py").read(), sys.argv[3], "exec"), namespace)
app = namespace.get("application") or namespace["app"]

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


def check_app(app: Any) -> None:
    """The app serves a robots.txt naming its sitemap, and a valid sitemap."""
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


def run_block(block: Block, tmp_path: Path) -> dict[str, Any]:
    """Run ``block`` (in ``tmp_path``, the current directory) and check what it defines:
    an ``app`` serves a valid sitemap, as does a ``config``. Returns its namespace (empty
    for a Django block, which runs in its own interpreter)."""
    if "sitemap_middleware.django" in block.source:
        run_django_example(block, tmp_path)
        return {}
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(block.source, block.name, "exec"), namespace)
    if "app" in namespace:
        check_app(namespace["app"])
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
    return namespace


def run_django_example(block: Block, tmp_path: Path) -> None:
    (tmp_path / "example.py").write_text(block.source)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SITEMAP_DJANGO_DB": str(tmp_path / "db.sqlite3"),
    }
    env.pop("SITEMAP_TEST_POSTGRES_URL", None)
    standalone = "settings.configure(" in block.source
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            DJANGO_HARNESS,
            "example.py",
            "standalone" if standalone else "project",
            block.name,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Sitemap: https://example.com/sitemap.xml" in (tmp_path / "robots.txt").read_text()
    check_document((tmp_path / "sitemap.xml").read_bytes())


def reports_nothing(stdout: str, verdict: str) -> None:
    """A `check` text report without a finding (an ERROR, WARNING or INFO line) or a
    hint, whose verdict line starts as ``verdict``."""
    assert not re.search(r"^  (ERROR|WARNING|INFO) |^hint: ", stdout, re.M), stdout
    assert stdout.splitlines()[-1].startswith(verdict), stdout
