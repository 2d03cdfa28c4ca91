"""Feeds and llms.txt through real servers (uvicorn, werkzeug, gunicorn): 200, gzip,
304 on the ETag, HEAD, and valid documents."""

from __future__ import annotations

import gzip
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

import httpx
import pytest

from sitemap_middleware import Feed, LlmsTxt, SitemapConfig, SitemapEntry, Video
from sitemap_middleware.providers import ProviderVersion
from tests.harness.documents import check_atom, check_rss
from tests.harness.ports import free_port
from tests.harness.servers import serve, serving, wsgi_app


class Blog:
    async def entries(self) -> AsyncIterator[SitemapEntry]:
        for i in range(300):
            videos = []
            if i % 50 == 0:
                videos = [
                    Video(
                        thumbnail_loc=f"/t/{i}.jpg",
                        title=f"Vidéo {i} & co",
                        description="<desc>",
                        content_loc=f"/v/{i}.mp4",
                    )
                ]
            yield SitemapEntry(
                f"/posts/{i}?ref=a&b={i}",
                lastmod=datetime(2024, 1, 1 + i % 28, i % 24, tzinfo=timezone.utc),
                videos=videos,
            )

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


def config() -> SitemapConfig:
    return SitemapConfig(
        base_url="https://example.com",
        sections={"blog": Blog()},
        feeds=[
            Feed(name="feed.atom", sections=["blog"], limit=20, title="Blog & news"),
            Feed(name="feed.rss", sections=["blog"], limit=20, format="rss"),
        ],
        llms_txt=LlmsTxt(title="Example", sections={"Posts": ["blog"]}, limit=5),
    )


def _raw(client: httpx.Client, method: str, url: str, **headers: str) -> httpx.Response:
    with client.stream(method, url, headers=headers) as reply:
        reply._content = b"".join(reply.iter_raw())  # as sent: no decoding
    return reply


#: What gunicorn serves: ``gunicorn tests.integration.test_feed_servers:app``.
app = wsgi_app(config())


@contextmanager
def _server(name: str) -> Iterator[str]:
    if name != "gunicorn":
        with serve(name, config()) as url:
            yield url
        return
    port = free_port()
    argv = [sys.executable, "-m", "gunicorn", "--workers=2", "--worker-class=gthread",
            "--threads=2", f"--bind=127.0.0.1:{port}", "--log-level=warning",
            "tests.integration.test_feed_servers:app"]  # fmt: skip
    with serving(argv, port, {}) as server:
        yield server.url


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug", "gunicorn"])
def test_feeds_and_llms_txt_through_real_servers(server: str) -> None:
    with _server(server) as url, httpx.Client(timeout=30) as client:
        checks = {"/feed.atom": check_atom, "/feed.rss": check_rss, "/llms.txt": None}
        for path, check in checks.items():
            plain = _raw(client, "GET", url + path, **{"Accept-Encoding": "identity"})
            assert plain.status_code == 200, plain.content
            zipped = _raw(client, "GET", url + path, **{"Accept-Encoding": "gzip"})
            assert zipped.headers["content-encoding"] == "gzip"
            assert gzip.decompress(zipped.content) == plain.content
            if check is not None:
                check(plain.content)
            etag = zipped.headers["etag"]
            again = _raw(
                client, "GET", url + path, **{"Accept-Encoding": "gzip", "If-None-Match": etag}
            )
            assert again.status_code == 304 and again.content == b""
            head = _raw(client, "HEAD", url + path, **{"Accept-Encoding": "gzip"})
            assert head.status_code == 200 and head.content == b""
            assert head.headers["etag"] == etag
        atom = client.get(url + "/feed.atom").content
        assert atom.count(b"<entry>") == 20 and b"media:thumbnail" in atom
        robots = client.get(url + "/robots.txt").text
        assert "Sitemap: https://example.com/feed.atom\n" in robots
        llms = client.get(url + "/llms.txt").text
        assert llms.startswith("# Example\n\n## Posts\n\n- [") and llms.count("\n- [") == 5
