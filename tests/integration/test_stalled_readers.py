"""A client that stops reading must never stall the other readers of a shared render.

One raw client asks for a page and then never reads (its TCP window closes); a second
client asks for the same page meanwhile and joins the same render. The second must get
the whole page, on an ASGI and a WSGI server.
"""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from sitemap_middleware import Renders, SitemapConfig
from tests.harness.ports import bound_socket
from tests.harness.servers import serve

TOTAL = 30_000
PAD = "x" * 480  # a ~16 MB page: far more than the shared window and the socket buffers
WINDOW = 8 * 1024 * 1024  # Renders.max_bytes (its default): what one shared render holds


class Pages:
    """A countable, pageable in-memory section (the page pass is the shared render)."""

    async def count(self) -> int:
        return TOTAL

    async def page(self, offset: int, limit: int) -> AsyncIterator[str]:
        for i in range(offset, min(TOTAL, offset + limit)):
            yield f"/{PAD}/{i}"

    def entries(self) -> AsyncIterator[str]:
        return self.page(0, TOTAL)


def _stalled_client(url: str, path: str) -> socket.socket:
    """Send a GET and never read: the server's writes to it stop once buffers are full."""
    port = int(url.rsplit(":", 1)[1])
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n"
    sock.sendall(request.encode())
    return sock


@pytest.mark.slow
@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_a_client_that_stops_reading_does_not_stall_the_others(server: str) -> None:
    """The second reader of the same page receives all of it while the first never reads."""
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": Pages()},
        renders=Renders(max_bytes=WINDOW, memory_bytes=0),
        max_bytes_per_page=20 * 1024 * 1024,
    )
    sock = bound_socket()
    # Accepted sockets inherit this: the server's writes to a client that stops reading
    # stall after a few KiB instead of filling megabytes of autotuned buffers.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
    with serve(server, config, sock) as url:
        assert httpx.get(url + "/sitemap_index.xml").status_code == 200
        stalled = _stalled_client(url, "/sitemap-p-1.xml")
        try:
            time.sleep(0.5)  # its render has started and its buffers are full
            # A hang guard, not a timing: before the fix this never completed.
            response = httpx.get(
                url + "/sitemap-p-1.xml", headers={"Accept-Encoding": "identity"}, timeout=30
            )
            assert response.status_code == 200
            assert response.text.count("<loc>") == TOTAL
            assert response.text.rstrip().endswith("</urlset>")
        finally:
            stalled.close()
