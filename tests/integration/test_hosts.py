"""Host policy through real servers: request headers reach the core as the unit tests assume."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from sitemap_middleware import TrustedHosts
from tests.harness.core import make_config
from tests.harness.servers import serve


@pytest.fixture(scope="module", params=["uvicorn", "werkzeug"])
def trusting_site(request: pytest.FixtureRequest) -> Iterator[str]:
    """A site that serves example.com and www.example.com from behind a trusted proxy."""
    config = make_config(
        {"p": ["/a"]},
        hosts=TrustedHosts(hosts=["example.com", "www.example.com"], forwarded="forwarded"),
    )
    with serve(request.param, config) as url:
        yield url


@pytest.mark.parametrize(
    ("headers", "sitemap_line"),
    [
        ({"Host": "www.example.com"}, "Sitemap: https://www.example.com/sitemap.xml"),
        (
            {"Forwarded": 'for=192.0.2.1;proto=http;host="www.example.com"'},
            "Sitemap: http://www.example.com/sitemap.xml",
        ),
        (  # not the configured family: ignored
            {"X-Forwarded-Host": "www.example.com", "X-Forwarded-Proto": "http"},
            "Sitemap: https://example.com/sitemap.xml",
        ),
        (  # the client's own element comes first; the proxy's (last) one wins
            {"Forwarded": 'host=evil.example, for=192.0.2.1;proto=http;host="www.example.com"'},
            "Sitemap: http://www.example.com/sitemap.xml",
        ),
        ({"Forwarded": "host=evil.example"}, None),
    ],
)
def test_trusted_proxy_headers_through_servers(
    trusting_site: str, headers: dict[str, str], sitemap_line: str | None
) -> None:
    """Allow-listed hosts from Host / Forwarded / X-Forwarded-* are used; others get 400."""
    headers = {"Host": "example.com", **headers}
    response = httpx.get(f"{trusting_site}/robots.txt", headers=headers)
    if sitemap_line is None:
        assert response.status_code == 400
        assert "evil" not in response.text
    else:
        assert response.status_code == 200
        assert sitemap_line in response.text.splitlines()
