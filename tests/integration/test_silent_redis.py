"""A Redis that accepts connections but never answers must not slow every request.

After a failing store call the engine backs off: requests are answered from the
providers without asking the store again until the back-off ends (then one call probes).
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator

import pytest

from sitemap_middleware import Renders, SitemapConfig
from sitemap_middleware.stores import RedisRenderStore
from tests.harness.core import SitemapCore, fetch

asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"])
COMMAND = re.compile(rb"\*\d+\r\n\$")


class SilentRedis:
    """Accepts connections, reads commands, never answers; counts the commands."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.commands = 0
        self.connections = 0
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.sock.getsockname()[1]}/0"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                self._open.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.commands += len(COMMAND.findall(data))

    def close(self) -> None:
        self.sock.close()
        for conn in self._open:
            conn.close()


@pytest.fixture
def silent() -> Iterator[SilentRedis]:
    server = SilentRedis()
    yield server
    server.close()


@asyncio_only
@pytest.mark.anyio
async def test_a_silent_redis_is_backed_off_after_a_failure(silent: SilentRedis) -> None:
    """Twenty requests: all answered from the provider; the store is asked only until its
    first timeout, not several times a request (the back-off outlasts the test)."""
    store = RedisRenderStore(silent.url, timeout=0.2)
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": ["/a", "/b?x=1&y=2"]},
        renders=Renders(store=store),
    )
    core = SitemapCore(config)
    try:
        for _ in range(20):
            reply, body = await fetch(core, "/sitemap.xml")
            assert reply.status == 200 and b"/b?x=1&amp;y=2" in body
    finally:
        await core.aclose()
    assert silent.commands <= 2, silent.commands  # today: about 4 per request
