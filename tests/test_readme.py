"""Every Python example in the README runs as written and serves valid sitemaps."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from tests.helpers import check_document, fetch

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)

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
    ):
        assert name in text, name
