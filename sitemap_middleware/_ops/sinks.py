"""Where ``export`` puts its files: the sink protocol and the directory sink.

The export (``export.py``) decides what to fetch, what changed, what failed and what is
stale; a sink only stores, checks and deletes the files of URL paths (``/shop/sitemap.xml``)
and the manifest. :class:`DirectorySink` writes under a directory (a temporary file,
then a rename); ``store_sink.ObjectStoreSink`` puts objects in S3, GCS or Azure.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

from .._exceptions import ExportPathError

__all__ = [
    "MANIFEST",
    "DirectorySink",
    "ExportSink",
    "SinkError",
    "check_key",
    "digest",
    "export_path",
]

MANIFEST = "sitemap-manifest.json"


class SinkError(Exception):
    """The storage failed (an object store refused a request): the export stops there,
    nothing is removed and the earlier manifest stays (the CLI exits 1)."""


class ExportSink(Protocol):
    """Storage for the exported files, addressed by URL path (``/shop/sitemap.xml``).

    Writes must be atomic per file (a reader sees the old bytes or the new ones), and a
    sink never touches anything but the keys it is given and the manifest.
    """

    #: What the export went to, for the result (a directory, ``s3://bucket/prefix``).
    location: str

    async def prepare(self) -> None:
        """Make the target ready (``ValueError`` when it cannot be)."""

    def check(self, key: str, *, writing: bool) -> None:
        """``ExportPathError`` unless ``key`` names a file this sink may write (``writing``)
        or delete: called for every key the manifest lists and, before anything is
        written, for every key the export is about to write."""

    async def read_manifest(self) -> bytes | None:
        """The manifest's bytes, ``None`` when there is none."""

    async def intact(self, key: str, entry: dict[str, Any]) -> bool:
        """Whether the file of ``key`` is still what ``entry`` (its manifest entry) says."""

    async def write(self, key: str, data: bytes, entry: dict[str, Any]) -> dict[str, Any]:
        """Store ``data`` as ``key``, atomically; the manifest entry to keep for it."""

    async def remove(self, key: str) -> None:
        """Delete the file of ``key`` if there is one."""

    async def write_manifest(self, data: bytes) -> None:
        """Store the manifest, atomically (always last)."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_key(key: object, where: str = "the export directory") -> list[str]:
    """The decoded segments of ``key``, a URL path naming a file; ``ExportPathError``
    otherwise.

    Segments are percent-decoded: a static server (nginx, S3, a CDN) decodes a request's
    path before it looks the file up, so ``/caf%C3%A9/sitemap.xml`` is ``café/sitemap.xml``.
    ``key`` must start with ``/``: no empty, ``.`` or ``..`` segment (before or after
    decoding), none holding ``/`` once decoded, no NUL, not ``/`` itself nor the manifest.
    """
    if not isinstance(key, str) or not key.startswith("/"):
        raise ExportPathError(f"path {key!r} does not start with '/'")
    segments = [unquote(segment, errors="strict") for segment in key[1:].split("/")]
    if key == "/":
        raise ExportPathError(f"path {key!r} names {where}")
    if "\0" in key or any(s in ("", ".", "..") or "/" in s or "\0" in s for s in segments):
        raise ExportPathError(
            f"path {key!r} leaves {where} (or names a directory): empty, '.' and '..' "
            "segments are refused"
        )
    if segments == [MANIFEST]:
        raise ExportPathError(f"path {key!r} is the manifest itself")
    return segments


def export_path(directory: Path, key: object) -> Path:
    """Where the document at URL path ``key`` lives under ``directory``: the one home of
    the rule that export writes and deletes only files strictly inside it.

    ``key`` must pass :func:`check_key`, and no symbolic link on the way may lead out of
    ``directory``. Raises :class:`ExportPathError` otherwise. The path returned is not
    resolved (a link named by ``key`` is replaced or removed itself, never its target).
    """
    segments = check_key(key, f"the export directory {str(directory)!r}")
    path = directory.joinpath(*segments)
    root = directory.resolve()
    if not path.parent.resolve().is_relative_to(root):
        raise ExportPathError(
            f"path {key!r} leaves the export directory {str(directory)!r} (through a symbolic link)"
        )
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            # mkstemp makes the file 0600; a file written in place would follow the umask
            # (a web server running as another user must read it).
            os.fchmod(file.fileno(), 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class DirectorySink:
    """Files under a directory, at their URL paths; replaced by rename (atomic)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.location = str(self.directory)

    async def prepare(self) -> None:
        directory = self.directory
        if directory.exists() and not directory.is_dir():
            raise ValueError(f"{str(directory)!r} exists and is not a directory")
        directory.mkdir(parents=True, exist_ok=True)
        if (directory / MANIFEST).is_dir():
            raise ExportPathError(f"{str(directory / MANIFEST)!r} is a directory")

    def check(self, key: str, *, writing: bool) -> None:
        directory = self.directory
        path = export_path(directory, key)
        if not writing:
            return
        if path.is_dir():
            raise ExportPathError(
                f"document {key!r} would be written over the directory {str(path)!r}"
            )
        for parent in path.relative_to(directory).parents:
            if (directory / parent).exists() and not (directory / parent).is_dir():
                raise ExportPathError(
                    f"document {key!r} needs the directory {str(directory / parent)!r}, "
                    "which is a file"
                )

    async def read_manifest(self) -> bytes | None:
        path = self.directory / MANIFEST
        return path.read_bytes() if path.exists() else None

    async def intact(self, key: str, entry: dict[str, Any]) -> bool:
        path = export_path(self.directory, key)
        return path.is_file() and digest(path.read_bytes()) == entry["sha256"]

    async def write(self, key: str, data: bytes, entry: dict[str, Any]) -> dict[str, Any]:
        _write(export_path(self.directory, key), data)
        return entry

    async def remove(self, key: str) -> None:
        path = export_path(self.directory, key)
        if path.is_symlink() or path.is_file():  # never a directory someone made there
            path.unlink()

    async def write_manifest(self, data: bytes) -> None:
        _write(self.directory / MANIFEST, data)
