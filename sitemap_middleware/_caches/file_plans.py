"""Section plans kept in files, so a restarted process reads them (``Renders(plan_directory=)``).

A plan store (``PlanStore``) for a site without Redis: one file per key, named by the
key's SHA-256, holding when it expires and the plan's bytes (each carries the version it
was made for: ``_engine/plan_codec.py``). A file is written under a temporary name and
renamed, so a reader (this process or another) sees a whole plan or the one before;
anything else in the folder (cut short, foreign) reads as no plan. The I/O runs in a
worker thread (anyio's, so under trio too: aiofiles is asyncio's alone).
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import anyio.to_thread

__all__ = ["FilePlanStore"]

#: What a plan file starts with, then its expiry (wall-clock seconds) and a newline.
_MAGIC = b"sitemap-plan 1 "


class FilePlanStore:
    """Plans as files in ``directory`` (made when first written)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        name = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        return self.directory / f"{name}.plan"

    async def plan(self, key: str) -> bytes | None:
        return await anyio.to_thread.run_sync(_read, self._path(key))

    async def save_plan(self, key: str, data: bytes, keep: float) -> None:
        header = _MAGIC + f"{time.time() + keep:.3f}\n".encode()
        await anyio.to_thread.run_sync(_write, self._path(key), header + data)


def _read(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:  # none yet, or not a file we can read: planned again
        return None
    header, _, body = data.partition(b"\n")
    if not header.startswith(_MAGIC):
        return None
    try:
        expires = float(header[len(_MAGIC) :])
    except ValueError:
        return None
    return body if time.time() < expires else None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.{time.monotonic_ns()}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
