"""``Renders(content_ttl=...)`` with the content ledger through real servers: a deal that
changes under a provider lastmod that never moves gets a new ``<lastmod>`` (and ETag)
once the render that showed the old deal is past ``content_ttl``, and not before.

(The bounds in time are the unit tests', on a clock they drive: ``test_content_tags.py``.)"""

from __future__ import annotations

import re
import time
from datetime import datetime

import httpx
import pytest

from sitemap_middleware import Ledger, Renders, SitemapConfig
from tests.harness.servers import serve

DEAL_LASTMOD = "2024-06-01T09:00:00+00:00"
#: Polls (a quarter of a second apart) before giving up: content_ttl is one second.
TRIES = 40


class Deal:
    """The deals section: one page, its provider lastmod fixed, its deal as the digest."""

    def __init__(self) -> None:
        self.digest = "a"
        self.reads = 0

    def __call__(self) -> list[dict[str, str]]:
        self.reads += 1
        return [{"loc": "/deals/today", "lastmod": DEAL_LASTMOD, "digest": self.digest}]


def _lastmod(response: httpx.Response) -> str:
    found: list[str] = re.findall(r"<lastmod>([^<]+)</lastmod>", response.text)
    assert len(found) == 1, response.text
    return found[0]


@pytest.mark.parametrize(
    ("server", "stale"), [("uvicorn", 0.0), ("uvicorn", 5.0), ("werkzeug", 0.0)]
)
def test_a_changed_deal_gets_a_new_lastmod_past_content_ttl(server: str, stale: float) -> None:
    deal = Deal()
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"deals": deal},
        renders=Renders(etag="content", content_ttl=1, stale_while_revalidate=stale),
        ledger=Ledger(source="digest"),
    )
    with serve(server, config) as url, httpx.Client(base_url=url) as client:
        first = client.get("/sitemap-deals-1.xml")
        assert first.status_code == 200 and _lastmod(first) == DEAL_LASTMOD
        changed = int(time.time())
        deal.digest = "b"
        for _ in range(TRIES):
            time.sleep(0.25)
            reply = client.get("/sitemap-deals-1.xml")
            if _lastmod(reply) != DEAL_LASTMOD:
                break
        written = _lastmod(reply)
        assert written != DEAL_LASTMOD, f"the lastmod never moved: {deal.reads} reads"
        assert datetime.fromisoformat(written).timestamp() >= changed  # when it was seen
        assert reply.headers["etag"] != first.headers["etag"]
        assert reply.headers["last-modified"] != first.headers["last-modified"]


def test_within_content_ttl_the_render_answers_unasked() -> None:
    deal = Deal()
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"deals": deal},
        renders=Renders(etag="content", content_ttl=3600),
        ledger=Ledger(source="digest"),
    )
    with serve("uvicorn", config) as url, httpx.Client(base_url=url) as client:
        first = client.get("/sitemap-deals-1.xml")
        reads = deal.reads
        deal.digest = "b"
        again = client.get("/sitemap-deals-1.xml")
        assert (again.text, again.headers["etag"]) == (first.text, first.headers["etag"])
        assert deal.reads == reads
