"""File providers (aiofiles): a text file of URLs, and a directory tree of documents."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import subprocess
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import aiofiles
import aiofiles.os

from .._logs import logger
from .._sansio.models import Mapped, SitemapEntry
from .base import ProviderVersion
from .threads import WorkerThreads

__all__ = ["DirectoryProvider", "TextFileProvider"]


LOG_FILE_SKIPPED = "DirectoryProvider %s: leaving out %s: %s"
LOG_NO_GIT = "DirectoryProvider %s: lastmod='git' but git log failed (%s): file times instead"
#: Seconds ``git log`` may take for one listing.
GIT_TIMEOUT = 60.0


def git_times(root: Path) -> dict[str, float] | None:
    """The commit time of the last commit touching each file under ``root`` (paths
    relative to it), from one ``git log``; None when ``root`` is not in a checkout.
    Names are NUL-separated (``-z``: a name with a newline, a quote or a backslash is not
    quoted). In a shallow clone a file last seen in a boundary commit is left out (its
    last change may be older: that commit's time would be a guess)."""
    command = [
        "git", "-C", str(root), "log", "-z",
        "--format=%x00%ct %H", "--name-only", "--relative", "--no-renames", "--", ".",
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.warning(LOG_NO_GIT, root, exc)
        return None
    if done.returncode != 0:
        logger.warning(LOG_NO_GIT, root, done.stderr.decode("utf-8", "replace").strip())
        return None
    boundary = _shallow_commits(root)
    times: dict[str, float] = {}
    when, guess, header, first = 0.0, False, False, False
    for token in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if header:
            stamp, _, commit = token.partition(" ")
            when, guess, header, first = float(stamp), commit in boundary, False, True
        elif not token:
            header = True  # each commit's line starts with a NUL
        else:
            name = token[1:] if first and token.startswith("\n") else token
            first = False
            if name and not guess:
                times.setdefault(name, when)  # newest first: the first is the last commit
    return times


def _shallow_commits(root: Path) -> set[str]:
    """A shallow clone's boundary commits (none in a full clone)."""
    command = ["git", "-C", str(root), "rev-parse", "--git-path", "shallow"]
    try:
        done = subprocess.run(command, capture_output=True, timeout=GIT_TIMEOUT, check=False)
        return set((root / done.stdout.decode().strip()).read_text().split())
    except (OSError, subprocess.TimeoutExpired, UnicodeError):
        return set()


def _utc_seconds(timestamp: float) -> datetime:
    """A file time as an aware UTC datetime in whole seconds (what sitemaps write)."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).replace(microsecond=0)


class TextFileProvider:
    """URLs from a UTF-8 text file, one a line; blank lines and ``#`` comments skipped.

    The version token is the file's size and modification time, so a conditional
    request costs one ``stat``. Entries carry no lastmod: the file's time says when the
    list changed, not when each page did.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    async def entries(self) -> AsyncIterator[str]:
        async with aiofiles.open(self.path, encoding="utf-8", errors="replace") as handle:
            async for line in handle:
                url = line.strip()
                if url and not url.startswith("#"):
                    yield url

    async def version(self) -> ProviderVersion:
        stat = await aiofiles.os.stat(self.path)
        return ProviderVersion(
            token=f"{stat.st_size}:{stat.st_mtime_ns}", last_modified=_utc_seconds(stat.st_mtime)
        )


class DirectoryProvider:
    """Documents under ``root`` as URLs under ``url_prefix``, lastmod from file mtimes.

    ``docs/guide/index.html`` becomes ``/guide/`` and ``docs/faq.html`` ``/faq.html``
    (or ``/faq`` with ``strip_suffixes=(".html",)``). Files are listed in path order.

    :param root: directory to walk.
    :param url_prefix: URL path the directory is served under (``"/docs/"``).
    :param include: glob patterns of files to list (matched against relative paths).
    :param exclude: glob patterns to leave out (matched against relative paths).
    :param index_files: file names that stand for their directory.
    :param strip_suffixes: suffixes removed from URLs.
    :param lastmod: ``"mtime"`` (file times) or ``"git"``: the time of the last commit
        touching each file, from one ``git log`` per listing (a checkout's file times are
        those of the checkout); files git does not know keep their file time.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        url_prefix: str = "/",
        include: Sequence[str] = ("*.html", "*.htm"),
        exclude: Sequence[str] = (),
        index_files: Sequence[str] = ("index.html", "index.htm"),
        strip_suffixes: Sequence[str] = (),
        lastmod: str = "mtime",
    ) -> None:
        if lastmod not in ("mtime", "git"):
            raise ValueError(f"lastmod must be 'mtime' or 'git', got {lastmod!r}")
        self.lastmod = lastmod
        self.root = Path(root)
        if not url_prefix.startswith("/"):
            raise ValueError(f"url_prefix must start with '/', got {url_prefix!r}")
        self.url_prefix = url_prefix if url_prefix.endswith("/") else url_prefix + "/"
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.index_files = tuple(index_files)
        self.strip_suffixes = tuple(strip_suffixes)
        self._threads = WorkerThreads()  # a hung file system holds a bounded few

    def _walk(self) -> list[tuple[str, float]]:
        found = []
        for directory, dirs, files in os.walk(self.root):
            dirs.sort()
            for name in sorted(files):
                path = Path(directory, name)
                relative = path.relative_to(self.root).as_posix()
                if not any(
                    fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(name, p) for p in self.include
                ):
                    continue
                if any(fnmatch.fnmatch(relative, p) for p in self.exclude):
                    continue
                try:
                    found.append((relative, path.stat().st_mtime))
                except OSError as exc:  # a dangling link, a file deleted meanwhile
                    logger.warning(LOG_FILE_SKIPPED, self.root, relative, exc.strerror or exc)
        found.sort()
        if self.lastmod == "git" and (times := git_times(self.root)) is not None:
            found = [(relative, times.get(relative, mtime)) for relative, mtime in found]
        return found

    async def _files(self) -> list[tuple[str, float]]:
        # os.walk has no async form; one worker-thread hop for the whole listing.
        if not await aiofiles.os.path.isdir(self.root):
            raise FileNotFoundError(f"{self.root} is not a directory")
        return await self._threads.run(self._walk)

    def _url(self, relative: str) -> str:
        """The URL path of a file: its name percent-encoded, so ``?``, ``#``, ``%``,
        spaces and bytes that are not UTF-8 (``surrogateescape``) all survive."""
        path = PurePosixPath(relative)
        if path.name in self.index_files:
            parent = path.parent.as_posix()
            text = "" if parent == "." else parent + "/"
        else:
            text = path.as_posix()
            for suffix in self.strip_suffixes:
                if text.endswith(suffix):
                    text = text[: -len(suffix)]
                    break
        return self.url_prefix + quote(text, safe="/", errors="surrogateescape")

    def _entry(self, file: tuple[str, float]) -> SitemapEntry:
        relative, mtime = file
        return SitemapEntry(self._url(relative), lastmod=_utc_seconds(mtime))

    async def entries(self) -> AsyncIterator[Mapped]:
        # Mapped: a file the middleware cannot list costs that file only, logged.
        for file in await self._files():
            yield Mapped(self._entry, file, "DirectoryProvider")

    async def count(self) -> int:
        return len(await self._files())

    async def version(self) -> ProviderVersion:
        files = await self._files()
        digest = hashlib.sha256(repr(files).encode()).hexdigest()[:32]
        newest = max((mtime for _, mtime in files), default=None)
        modified = _utc_seconds(newest) if newest is not None else None
        return ProviderVersion(token=digest, last_modified=modified)
