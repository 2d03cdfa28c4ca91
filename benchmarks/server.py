"""Start a benchmark server in a subprocess and wait until it answers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from benchmarks.common import free_port

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Server:
    url: str
    pid: int


@contextmanager
def serving(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[Server]:
    """Run ``argv`` (a server that listens on 127.0.0.1:``port``) until it answers."""
    process = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})}
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "/robots.txt", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{argv[:3]} did not start serving") from None
                time.sleep(0.05)
        yield Server(url, process.pid)
    finally:
        process.terminate()
        process.wait(20)


@contextmanager
def running(
    kind: str, n: int = 50_000, page: int = 50_000, env: dict[str, str] | None = None
) -> Iterator[Server]:
    """A benchmark app (see benchmarks/serve.py) in its own process."""
    port = free_port()
    argv = [sys.executable, "-m", "benchmarks.serve", kind, str(port), str(n), str(page)]
    with serving(argv, port, env) as server:
        yield server
