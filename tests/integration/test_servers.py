"""Through real servers and a real HTTP client: uvicorn (ASGI) and werkzeug (WSGI/Flask)."""

from __future__ import annotations

import gzip
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from usp.tree import sitemap_tree_for_homepage

from sitemap_middleware import Renders
from tests.harness.core import make_config
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.ports import bound_socket
from tests.harness.providers import CountingProvider
from tests.harness.servers import serve, wsgi_app

ROOT = Path(__file__).resolve().parents[2]


class Site:
    def __init__(self, url: str, big: CountingProvider, small: CountingProvider) -> None:
        self.url = url
        self.big = big
        self.small = small


@pytest.fixture(scope="module", params=["uvicorn", "werkzeug"])
def site(request: pytest.FixtureRequest) -> Iterator[Site]:
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    big = CountingProvider(50_000, host=base)
    small = CountingProvider(1_200, host=f"{base}/small")
    # Nothing stored: every request here streams a fresh render (chunked, and closed on
    # a hang-up), as it would the first time; stored replies are tested on their own.
    config = make_config(
        {"big": big, "small": small},
        base_url=base,
        stylesheet=True,
        text_sitemaps=True,
        renders=Renders(memory_bytes=0),
    )
    with serve(request.param, config, sock) as url:
        yield Site(url, big, small)


def test_streams_chunked_without_content_length(site: Site) -> None:
    """A page streams with chunked framing, no Content-Length, and arrives in pieces."""
    with (
        httpx.Client() as client,
        client.stream("GET", f"{site.url}/sitemap-small-1.xml") as response,
    ):
        assert response.status_code == 200
        assert response.headers["transfer-encoding"] == "chunked"
        assert "content-length" not in response.headers
        pieces = list(response.iter_raw())
    assert len(pieces) > 1
    assert response.headers["content-encoding"] == "gzip"  # httpx asks for gzip by default
    assert len(page_urls(check_document(gzip.decompress(b"".join(pieces))))) == 1200


def test_gzip_decompresses_to_identical_document(site: Site) -> None:
    """gzip and identity bodies of one page are the same document."""
    with httpx.Client() as client:
        plain = client.get(
            f"{site.url}/sitemap-small-1.xml", headers={"Accept-Encoding": "identity"}
        )
        zipped = client.get(f"{site.url}/sitemap-small-1.xml", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip" and "content-encoding" not in plain.headers
    assert zipped.content == plain.content  # httpx decoded the gzip stream
    assert zipped.headers["etag"] != plain.headers["etag"]
    raw = httpx.get(f"{site.url}/sitemap-small-1.xml.gz")
    assert raw.headers["content-type"] == "application/gzip"
    assert gzip.decompress(raw.content) == plain.content


def test_repeat_request_with_etag_is_304(site: Site) -> None:
    """A repeat with If-None-Match gets 304, no body, without iterating entries."""
    with httpx.Client() as client:
        first = client.get(f"{site.url}/sitemap-small-1.xml", headers={"Accept-Encoding": "gzip"})
        before = site.small.iterations
        again = client.get(
            f"{site.url}/sitemap-small-1.xml",
            headers={"Accept-Encoding": "gzip", "If-None-Match": first.headers["etag"]},
        )
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == first.headers["etag"]
        since = client.get(
            f"{site.url}/robots.txt",
            headers={"If-None-Match": client.get(f"{site.url}/robots.txt").headers["etag"]},
        )
        assert since.status_code == 304
    assert site.small.iterations == before


def test_head_has_headers_and_no_body(site: Site) -> None:
    """HEAD answers GET's headers with no body."""
    head = httpx.head(f"{site.url}/sitemap-small-1.xml")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == "application/xml; charset=utf-8"
    assert "etag" in head.headers


@pytest.mark.slow
def test_crawler_discovers_everything_from_robots(site: Site) -> None:
    """usp, starting at the homepage, finds robots.txt, the index and every page."""
    tree = sitemap_tree_for_homepage(site.url + "/", use_known_paths=False)
    urls = {page.url for page in tree.all_pages()}
    assert len(urls) == 51_200
    assert f"{site.url}/products/49999?ref=a&b=49999" in urls


def test_index_and_text_and_stylesheet(site: Site) -> None:
    """The index lists every page; text sitemaps and the XSL view are served."""
    index = httpx.get(f"{site.url}/sitemap_index.xml")
    assert child_urls(check_document(index.content)) == [
        f"{site.url}/sitemap-big-1.xml",
        f"{site.url}/sitemap-small-1.xml",
    ]
    text = httpx.get(f"{site.url}/sitemap-small-1.txt")
    assert len(text.text.splitlines()) == 1200
    assert httpx.get(f"{site.url}/sitemap.xsl").headers["content-type"].startswith("text/xsl")
    assert httpx.get(f"{site.url}/").text == "home page"


def _wait_for(condition: Any, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_client_disconnect_mid_stream_closes_provider(site: Site) -> None:
    """Hanging up after the first bytes makes the provider's generator close (finally runs)."""
    # The page's plan first (a pass over all 50,000 entries, closed before the reply), so
    # the first bytes below do not wait for it: it was made by whichever test of this
    # module ran before on the same server, and under xdist that may be none.
    assert httpx.head(f"{site.url}/sitemap-big-1.xml", timeout=None).status_code == 200
    closed_before = site.big.closed
    port = int(site.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /sitemap-big-1.xml HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200 OK" in sock.recv(65536)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    assert _wait_for(lambda: site.big.closed > closed_before)


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_two_processes_give_the_same_etag(kind: str) -> None:
    """Separate server processes compute identical ETags for the same content."""
    tags = []
    for _ in range(2):
        with subprocess.Popen(
            [sys.executable, "-m", "tests.harness.servers", kind],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as process:
            assert process.stdout is not None and process.stdin is not None
            url = process.stdout.readline().strip()
            response = httpx.get(
                f"{url}/sitemap-products-2.xml", headers={"Accept-Encoding": "gzip"}
            )
            index = httpx.get(f"{url}/sitemap.xml")
            tags.append(
                (
                    response.headers["etag"],
                    index.headers["etag"],
                    httpx.get(f"{url}/robots.txt").headers["etag"],
                )
            )
            process.stdin.close()
            process.wait(20)
    assert tags[0] == tags[1]


def test_wsgiref_server_accepts_our_headers() -> None:
    """wsgiref's own server rejects hop-by-hop headers; ours has none."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    config = make_config({"p": ["/a", "/b"]})
    server = make_server("127.0.0.1", 0, wsgi_app(config), handler_class=Quiet)
    import threading

    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        response = httpx.get(f"http://127.0.0.1:{server.server_port}/sitemap.xml")
        assert response.status_code == 200
        assert page_urls(check_document(response.content)) == [
            "https://example.com/a",
            "https://example.com/b",
        ]
    finally:
        server.shutdown()
        server.server_close()
