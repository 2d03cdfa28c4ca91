"""Tenant dispatch (sitemap_middleware._engine.tenants): one core per site, picked by Host."""

from __future__ import annotations

import logging

import pytest

from sitemap_middleware import SitemapConfig, Tenants
from sitemap_middleware._engine.core import Reply, RequestInfo
from sitemap_middleware._engine.tenants import TenantCores
from tests.harness.core import collect

pytestmark = pytest.mark.anyio


async def _get(
    cores: TenantCores, host: str, path: str = "/sitemap.xml"
) -> tuple[int | None, bytes]:
    """What an adapter does: route, ask for app robots, respond (None: passed to the app)."""
    request = RequestInfo("GET", path, {"host": host})
    target = cores.route(request)
    if target is None:
        return None, b""
    cores.app_robots_request(target, request)
    reply: Reply = await cores.respond(target, request)
    return reply.status, await collect(reply)


# -- review-core: defects found by the hostile review ---------------------------------


async def test_a_host_that_is_not_a_host_name_never_reaches_resolve() -> None:
    """Host: evil.com/.shop.com passed a suffix check and became the base URL
    https://evil.com/.shop.com: a forged host listed in the sitemap (uvicorn and werkzeug
    both forward that Host as is). A Host that is not host[:port] is refused with 400."""
    asked: list[str] = []

    def resolve(host: str) -> SitemapConfig | None:
        asked.append(host)
        if host.endswith(".shop.com"):
            return SitemapConfig(base_url=f"https://{host}", sections={"p": ["/a"]})
        return None

    cores = TenantCores(Tenants(resolve=resolve))
    status, body = await _get(cores, "evil.com/.shop.com", "/.shop.com/sitemap.xml")
    assert b"evil.com" not in body
    assert status in (400, None)  # refused, or not ours (the app answers)
    assert asked == []


async def test_a_failing_resolve_is_called_and_logged_once_per_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """route, app_robots_request and respond each looked the host up again: a failing
    resolve() ran three times and logged three errors for one request."""
    asked: list[str] = []

    def resolve(host: str) -> SitemapConfig | None:
        asked.append(host)
        raise RuntimeError("tenant database down")

    cores = TenantCores(Tenants(resolve=resolve))
    with caplog.at_level(logging.ERROR, logger="sitemap_middleware"):
        status, _ = await _get(cores, "a.shop.com")
    assert status == 400
    assert asked == ["a.shop.com"]
    assert len(caplog.records) == 1


async def test_a_site_evicted_from_the_resolve_cache_releases_its_render_store() -> None:
    """cache_size evicts a resolved site's core without closing it, and aclose() no longer
    sees it: each eviction leaks what its render store holds open (Redis connections)."""
    from sitemap_middleware import Renders
    from tests.harness.providers import RecordingStore

    caches: list[RecordingStore] = []

    def resolve(host: str) -> SitemapConfig | None:
        cache = RecordingStore()
        caches.append(cache)
        return SitemapConfig(
            base_url=f"https://{host}",
            sections={"p": ["/a"]},
            renders=Renders(store=cache),
        )

    cores = TenantCores(Tenants(resolve=resolve, cache_size=1))
    for host in ("a.shop.com", "b.shop.com", "c.shop.com"):
        status, _ = await _get(cores, host)
        assert status == 200
    await cores.aclose()
    assert [cache.closed for cache in caches] == [1, 1, 1]
