"""Compress once, through real servers (issue 24, item 1): a warm gzip GET is the stored
gzip body, sent whole with its Content-Length, the same bytes every time, and the
identity body and 304s stay what they were."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator

import httpx
import pytest

from sitemap_middleware import ProviderVersion, Renders, SitemapConfig
from tests.integration.servers import serve


class Counted:
    def __init__(self) -> None:
        self.passes = 0

    async def entries(self) -> AsyncIterator[str]:
        self.passes += 1
        for i in range(20_000):
            yield f"/products/{i}?ref=a&b={i}"

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token="v1")


def _raw(client: httpx.Client, url: str, **headers: str) -> httpx.Response:
    with client.stream("GET", url, headers=headers) as reply:
        reply._content = b"".join(reply.iter_raw())  # as sent: no decoding
    return reply


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_a_warm_gzip_get_sends_the_stored_gzip_body(server: str) -> None:
    provider = Counted()
    config = SitemapConfig(
        base_url="https://example.com", sections={"p": provider}, renders=Renders(ttl=60)
    )
    with serve(server, config) as url, httpx.Client(timeout=30) as client:
        page = url + "/sitemap-p-1.xml"
        identity = _raw(client, page, **{"Accept-Encoding": "identity"})
        assert identity.status_code == 200 and provider.passes == 1
        sent = [_raw(client, page, **{"Accept-Encoding": "gzip"}) for _ in range(3)]
        for reply in sent:
            assert reply.headers["content-encoding"] == "gzip"
            assert reply.headers["content-length"] == str(len(reply.content))
            assert "transfer-encoding" not in reply.headers
            assert gzip.decompress(reply.content) == identity.content
        assert sent[0].content == sent[1].content == sent[2].content  # stored bytes
        assert provider.passes == 1
        again = _raw(client, page, **{"Accept-Encoding": "identity"})
        assert again.content == identity.content
        assert again.headers["content-length"] == str(len(identity.content))
        etag = sent[0].headers["etag"]
        assert etag != identity.headers["etag"]
        not_modified = client.get(page, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
        assert not_modified.status_code == 304 and not_modified.content == b""
