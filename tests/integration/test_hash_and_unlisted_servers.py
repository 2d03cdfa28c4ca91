"""Through uvicorn and werkzeug: one "#" per <loc>, and a section listing nothing is logged."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from sitemap_middleware.providers import CallableProvider
from tests.harness.core import make_config
from tests.harness.documents import check_document, child_urls, page_urls
from tests.harness.ports import bound_socket
from tests.harness.servers import serve


def _missing_key(row: dict[str, Any]) -> Any:
    return row["missing"]


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_hash_locations_and_unlisted_sections_through_servers(
    server: str, caplog: pytest.LogCaptureFixture
) -> None:
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sections = {
        "tags": ["/tags/f#/c#", "/p/#a#b", "/p/#a b"],
        "bad": CallableProvider(lambda: [{"id": 1}, {"id": 2}], map=_missing_key),
    }
    with (
        caplog.at_level(logging.WARNING, logger="sitemap_middleware"),
        serve(server, make_config(sections, base_url=base), sock) as url,
        httpx.Client() as client,
    ):
        page = client.get(f"{url}/sitemap-tags-1.xml")
        index = client.get(f"{url}/sitemap_index.xml")
        client.get(f"{url}/sitemap_index.xml")
    assert page.status_code == 200 and index.status_code == 200
    assert page_urls(check_document(page.content)) == [
        f"{base}/tags/f#/c%23",
        f"{base}/p/#a%23b",
        f"{base}/p/#a%20b",
    ]
    assert child_urls(check_document(index.content)) == [f"{base}/sitemap-tags-1.xml"]
    (message,) = [r.getMessage() for r in caplog.records if "lists no URL" in r.getMessage()]
    assert "'bad'" in message and "2 of its 2 items" in message
    assert "KeyError: 'missing'" in message
