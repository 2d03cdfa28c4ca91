"""DirectoryProvider: one bad file costs that file, never the section."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from sitemap_middleware import DirectoryProvider, SitemapConfig
from tests.helpers import SitemapCore, fetch

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]  # aiofiles


def _tree(root: Path) -> None:
    for name in ("a.html", "b.html", "c.html"):
        (root / name).write_text("<p>hi</p>")


async def test_a_dangling_symlink_costs_only_that_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A link to nowhere is left out (logged); the other files are listed."""
    _tree(tmp_path)
    os.symlink(tmp_path / "gone.html", tmp_path / "broken.html")
    core = SitemapCore(
        SitemapConfig(base_url="https://example.com", sections={"d": DirectoryProvider(tmp_path)})
    )
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200
    for name in ("a", "b", "c"):
        assert f"/{name}".encode() in body
    assert b"broken" not in body
    assert any("broken.html" in r.getMessage() for r in caplog.records)


async def test_a_file_deleted_while_the_tree_is_walked_costs_only_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file listed by the walk but gone before its stat is left out."""
    _tree(tmp_path)
    real_stat = Path.stat

    def vanishing(self: Path, **kwargs: object) -> os.stat_result:
        if self.name == "b.html":
            self.unlink(missing_ok=True)
        return real_stat(self, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "stat", vanishing)
    core = SitemapCore(
        SitemapConfig(base_url="https://example.com", sections={"d": DirectoryProvider(tmp_path)})
    )
    reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200 and b"/a" in body and b"/c" in body and b"/b" not in body
