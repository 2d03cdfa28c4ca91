"""Every Python example in the README runs as written and serves valid sitemaps."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from sitemap_middleware import SitemapConfig
from sitemap_middleware._engine.core import SitemapCore
from tests.helpers import check_document, fetch

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


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
    ):
        assert name in text, name
