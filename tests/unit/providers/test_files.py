"""DirectoryProvider: one bad file costs that file, never the section."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from sitemap_middleware import SitemapEntry
from sitemap_middleware.providers import DirectoryProvider
from tests.harness.core import fetch, make_core

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
    core = make_core({"d": DirectoryProvider(tmp_path)})
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
    core = make_core({"d": DirectoryProvider(tmp_path)})
    reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200 and b"/a" in body and b"/c" in body and b"/b" not in body


async def _lastmods(provider: DirectoryProvider) -> dict[str, str]:
    entries = [m.resolve() async for m in provider.entries()]
    return {e.loc: str(e.lastmod) for e in entries if isinstance(e, SitemapEntry)}


def _git(root: Path, *args: str, date: str | None = None) -> None:
    import subprocess

    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


@pytest.mark.anyio
async def test_git_lastmod_is_the_last_commit_touching_each_file(tmp_path: Path) -> None:
    """lastmod="git": one git log per listing; a checkout's file times (all alike) are not
    the pages' dates; a file git does not know keeps its own; a subdirectory of the
    checkout reads paths relative to itself."""
    repo = tmp_path / "repo"
    docs = repo / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "a.html").write_text("a")
    (docs / "guide" / "index.html").write_text("g")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one", date="2024-01-02T03:04:05+00:00")
    (docs / "a.html").write_text("a, changed")
    _git(repo, "commit", "-qam", "two", date="2024-03-04T05:06:07+00:00")
    (docs / "new.html").write_text("untracked")
    for path in (docs / "a.html", docs / "guide" / "index.html", docs / "new.html"):
        os.utime(path, (1_800_000_000, 1_800_000_000))  # the checkout's time
    provider = DirectoryProvider(docs, lastmod="git")
    entries = await _lastmods(provider)
    assert entries == {
        "/a.html": "2024-03-04 05:06:07+00:00",
        "/guide/": "2024-01-02 03:04:05+00:00",
        "/new.html": "2027-01-15 08:00:00+00:00",  # untracked: its file time
    }
    mtimes = DirectoryProvider(docs)
    assert await _lastmods(mtimes) == {loc: entries["/new.html"] for loc in entries}
    assert (await provider.version()) != (await mtimes.version())


@pytest.mark.anyio
async def test_git_lastmod_of_odd_names_and_in_a_shallow_clone(tmp_path: Path) -> None:
    """A name with a newline or a quote (git quoted it: the file time was used); a depth-1
    clone (CI, Docker builds) gave every file the one commit's time, however old."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "old.html").write_text("old")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one", date="2001-01-01T00:00:00+00:00")
    (repo / "new\nline.html").write_text("n")
    (repo / 'say "hi".html').write_text("q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "two", date="2020-01-01T00:00:00+00:00")
    for path in repo.glob("*.html"):
        os.utime(path, (1_800_000_000, 1_800_000_000))
    assert await _lastmods(DirectoryProvider(repo, lastmod="git")) == {
        "/new%0Aline.html": "2020-01-01 00:00:00+00:00",
        "/old.html": "2001-01-01 00:00:00+00:00",
        "/say%20%22hi%22.html": "2020-01-01 00:00:00+00:00",
    }
    shallow = tmp_path / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    _git(shallow, "commit", "-q", "--allow-empty", "-m", "three", date="2022-01-01T00:00:00Z")
    (shallow / "old.html").write_text("old, changed")
    _git(shallow, "commit", "-qam", "four", date="2023-01-01T00:00:00+00:00")
    for path in shallow.glob("*.html"):
        os.utime(path, (1_800_000_000, 1_800_000_000))
    assert await _lastmods(DirectoryProvider(shallow, lastmod="git")) == {
        "/new%0Aline.html": "2027-01-15 08:00:00+00:00",  # its last change is unknown
        "/old.html": "2023-01-01 00:00:00+00:00",
        "/say%20%22hi%22.html": "2027-01-15 08:00:00+00:00",
    }


@pytest.mark.anyio
async def test_git_lastmod_outside_a_checkout_falls_back_to_file_times(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _tree(tmp_path)
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        plain = await _lastmods(DirectoryProvider(tmp_path))
        gitless = await _lastmods(DirectoryProvider(tmp_path, lastmod="git"))
    assert gitless == plain
    assert "lastmod='git' but git log failed" in caplog.text
    with pytest.raises(ValueError, match="lastmod must be"):
        DirectoryProvider(tmp_path, lastmod="ctime")
