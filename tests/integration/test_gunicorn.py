"""gunicorn, the usual production WSGI server: pre-fork workers, threads, real sockets."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.ports import free_port
from tests.harness.servers import serving

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """gunicorn --preload with two gthread workers; yields its URL and the marker folder."""
    markers = tmp_path_factory.mktemp("markers")
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "gunicorn",
        "--preload",
        "--workers=2",
        "--worker-class=gthread",
        "--threads=4",
        f"--bind=127.0.0.1:{port}",
        "--log-level=warning",
        "tests.integration.gunicorn_app:app",
    ]
    with serving(argv, port, {"SITEMAP_TEST_MARKERS": str(markers)}) as server:
        yield server.url, markers


def test_workers_forked_after_the_portal_started_serve_pages(gunicorn: tuple[str, Path]) -> None:
    """Every worker answers (its own portal), bodies are complete, ETags agree, 304 works."""
    url, _ = gunicorn
    index = check_document(httpx.get(url + "/sitemap.xml").content)
    assert child_urls(index) == [
        "https://example.com/sitemap-products-1.xml",
        "https://example.com/sitemap-products-2.xml",
    ]

    def fetch(_: int) -> tuple[int, str, int]:
        response = httpx.get(url + "/sitemap-products-2.xml", headers={"Connection": "close"})
        return response.status_code, response.headers["etag"], response.content.count(b"<url>")

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(fetch, range(24)))
    assert {status for status, _, _ in results} == {200}
    assert {count for _, _, count in results} == {10_000}
    assert len({etag for _, etag, _ in results}) == 1
    etag = results[0][1]
    again = httpx.get(url + "/sitemap-products-2.xml", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    body = httpx.get(url + "/sitemap-products-2.xml", headers={"Accept-Encoding": "gzip"}).content
    assert page_urls(check_document(body))[0] == "https://example.com/products/50000"


def test_client_disconnect_closes_the_provider_in_the_worker(gunicorn: tuple[str, Path]) -> None:
    """Hanging up mid-stream closes the provider's generator inside the gunicorn worker."""
    url, markers = gunicorn
    before = set(markers.iterdir())
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /sitemap-products-1.xml HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200 OK" in sock.recv(65536)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    deadline = time.monotonic() + 10
    while not (new := set(markers.iterdir()) - before):
        assert time.monotonic() < deadline, "the provider was not closed"
        time.sleep(0.05)
    (closed,) = new
    *_, start, stop, last = closed.name.split("-")
    assert (start, stop) == ("0", "50000") and int(last) < 49_999  # stopped early
