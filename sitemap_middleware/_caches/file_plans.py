"""Section plans kept in files, so a restarted process reads them (``Renders(plan_directory=)``).

A plan store (``PlanStore``) for a site without Redis: one file per key, named by the
key's SHA-256, holding when it expires and the plan's bytes (each carries the version it
was made for: ``_engine/plan_codec.py``). A file is written under a temporary name and
renamed, so a reader (this process or another) sees a whole plan or the one before;
anything else in the folder (cut short, foreign) reads as no plan. I/O through aiofiles.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import aiofiles
import aiofiles.os

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
        try:
            async with aiofiles.open(self._path(key), "rb") as handle:
                data = await handle.read()
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

    async def save_plan(self, key: str, data: bytes, keep: float) -> None:
        await aiofiles.os.makedirs(self.directory, exist_ok=True)
        path = self._path(key)
        partial = path.with_name(f"{path.name}.{os.getpid()}.{time.monotonic_ns()}.partial")
        try:
            async with aiofiles.open(partial, "wb") as handle:
                await handle.write(_MAGIC + f"{time.time() + keep:.3f}\n".encode() + data)
            await aiofiles.os.replace(partial, path)
        finally:
            if await aiofiles.os.path.exists(partial):
                await aiofiles.os.remove(partial)
