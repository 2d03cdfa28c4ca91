"""A fleet through real servers: two uvicorn and two gunicorn instances on one Redis."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.harness.documents import check_document, page_urls
from tests.harness.ports import free_port
from tests.harness.servers import serving

REDIS_ENV = "SITEMAP_TEST_REDIS_URL"
PAGES = [f"/sitemap-products-{n}.xml" for n in range(1, 11)]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], Path]]:
    """Four instances (2 uvicorn, 2 gunicorn) sharing one Redis; their URLs and markers."""
    redis_url = os.environ.get(REDIS_ENV)
    if not redis_url:
        pytest.skip(f"{REDIS_ENV} is not set: no Redis server (scripts/test starts one)")
    markers = tmp_path_factory.mktemp("fleet")
    env = {
        "SITEMAP_TEST_MARKERS": str(markers),
        "SITEMAP_TEST_PREFIX": f"fleet-{uuid.uuid4().hex}:",
        REDIS_ENV: redis_url,
    }
    app = "tests.integration.fleet_app"
    with ExitStack() as stack:
        urls = []
        for kind in ("uvicorn", "gunicorn", "uvicorn", "gunicorn"):
            port = free_port()
            if kind == "uvicorn":
                argv = [sys.executable, "-m", "uvicorn", f"{app}:asgi", f"--port={port}"]
                argv += ["--host=127.0.0.1", "--log-level=warning", "--lifespan=on"]
            else:
                argv = [sys.executable, "-m", "gunicorn", "--workers=1", "--threads=16"]
                argv += ["--worker-class=gthread", f"--bind=127.0.0.1:{port}"]
                argv += ["--log-level=warning", f"{app}:wsgi"]
            urls.append(stack.enter_context(serving(argv, port, env)).url)
        yield urls, markers


async def _burst(urls: list[str], paths: list[str], n: int) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        requests = [
            client.get(urls[i % len(urls)] + paths[i % len(paths)], headers={"X-N": str(i)})
            for i in range(n)
        ]
        return list(await asyncio.gather(*requests))


def test_a_burst_renders_each_page_once_across_the_fleet_and_survives_provider_failure(
    fleet: tuple[list[str], Path],
) -> None:
    """200 concurrent requests over 10 cold pages on 4 instances: one provider pass per
    page in the whole fleet; every body complete and identical per page; ETag and
    Last-Modified identical on every instance. Then the provider fails: with
    stale-if-error every instance still answers 200 with the old validators and 304s."""
    urls, markers = fleet
    responses = asyncio.run(_burst(urls, PAGES, 200))
    assert Counter(r.status_code for r in responses) == {200: 200}
    by_page: dict[str, set[tuple[bytes, str, str]]] = {}
    for response in responses:
        key = response.url.path
        validators = (response.content, response.headers["etag"], response.headers["last-modified"])
        by_page.setdefault(key, set()).add(validators)
    assert sorted(by_page) == sorted(PAGES)
    assert all(len(variants) == 1 for variants in by_page.values())
    for path, ((body, _, _),) in by_page.items():
        number = int(path.rsplit("-", 1)[1].split(".")[0])
        assert page_urls(check_document(body))[0].endswith(
            f"/products/{(number - 1) * 1000}?a=1&b=2"
        )
        assert body.count(b"<url>") == 1000
    passes = Counter(p.name.split("-")[1] for p in markers.iterdir() if p.name.startswith("pass-"))
    assert passes == {str(offset): 1 for offset in range(0, 10_000, 1000)}
    # Plans are per instance (kept for the version): at most one planning pass each.
    plans = Counter(p.name.split("-")[2] for p in markers.iterdir() if p.name.startswith("plan-"))
    assert 1 <= len(plans) <= len(urls) and set(plans.values()) == {1}

    (markers / "fail").touch()
    stale = asyncio.run(_burst(urls, PAGES, 40))
    assert Counter(r.status_code for r in stale) == {200: 40}
    for response in stale:
        ((body, etag, modified),) = by_page[response.url.path]
        assert response.content == body
        assert (response.headers["etag"], response.headers["last-modified"]) == (etag, modified)
        assert "stale-if-error=3600" in response.headers["cache-control"]
    ((_, etag, _),) = by_page[PAGES[0]]
    for url in urls:
        again = httpx.get(url + PAGES[0], headers={"If-None-Match": etag})
        assert again.status_code == 304
