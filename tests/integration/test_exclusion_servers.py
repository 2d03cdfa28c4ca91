"""Leaving URLs out, through real servers: what our robots.txt disallows, exclude patterns
and SKIP are not listed, counted once in Prometheus, and the rest is listed once."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client import CollectorRegistry

from sitemap_middleware import SKIP, Robots, RobotsGroup, Section
from sitemap_middleware._sansio.skip import _Skip
from sitemap_middleware.ops import PrometheusObserver
from tests.harness.core import make_config
from tests.harness.documents import check_document, page_urls
from tests.harness.servers import serve


@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_what_robots_txt_disallows_is_not_listed_through_a_server(server: str) -> None:
    registry = CollectorRegistry()
    groups = (
        RobotsGroup(disallow=["/private/"]),
        RobotsGroup(user_agents=["GPTBot"], disallow=["/"]),  # reads no sitemap
    )
    items: list[str | _Skip] = ["/", "/a", "/private/1", "/drafts/2", SKIP, "/b"]
    config = make_config(
        {"s": Section(items, exclude=["/drafts/*"])},
        robots=Robots(groups=groups),
        observers=[PrometheusObserver(registry=registry)],
    )
    with serve(server, config) as url:
        headers = {"Host": "example.com"}
        robots = httpx.get(url + "/robots.txt", headers=headers)
        assert "Disallow: /private/" in robots.text
        for _ in range(3):  # counted once per content, not per request
            body = httpx.get(url + "/sitemap.xml", headers=headers).content
            listed = page_urls(check_document(body))
            assert listed == [f"https://example.com{p}" for p in ("/", "/a", "/b")]
    counts = {
        reason: registry.get_sample_value(
            "sitemap_entries_excluded_total", {"section": "s", "reason": reason}
        )
        for reason in ("robots", "pattern", "provider")
    }
    assert counts == {"robots": 1.0, "pattern": 1.0, "provider": 1.0}
