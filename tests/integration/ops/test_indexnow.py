"""IndexNow against real servers: the key file is served; changed URLs are pushed in\nbatches with retries (in process: tests/unit/ops/test_indexnow.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from sitemap_middleware import SitemapConfig, SitemapEntry
from sitemap_middleware.ops import IndexNowBatch, IndexNowNotifier, changed_urls, take_snapshot
from tests.harness.ports import bound_socket
from tests.harness.providers import CountingProvider, ListProvider
from tests.harness.servers import serve, serve_uvicorn
from tests.sites.hostile_sites import indexnow_hostile
from tests.sites.indexnow_server import IndexNowEndpoint

KEY = "0123456789abcdef-key"


@pytest.fixture
def site() -> Iterator[tuple[str, SitemapConfig]]:
    """Our middleware on real uvicorn, serving its IndexNow key file."""
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = SitemapConfig(base_url=base, sections={"pages": ["/", "/about"]}, indexnow_key=KEY)
    with serve("uvicorn", config, sock) as url:
        yield url, config


@pytest.fixture
def endpoint() -> Iterator[tuple[str, IndexNowEndpoint]]:
    """The local IndexNow endpoint on real uvicorn."""
    state = IndexNowEndpoint()
    with serve_uvicorn(state.app(), bound_socket()) as url:
        yield url + "/indexnow", state


def notifier_for(config: SitemapConfig, endpoint: str, **kwargs: Any) -> IndexNowNotifier:
    kwargs.setdefault("backoff", 0.01)
    return IndexNowNotifier.for_config(config, endpoint=endpoint, **kwargs)


def test_key_file_is_served_exactly(site: tuple[str, SitemapConfig]) -> None:
    """/<key>.txt answers the key alone (no newline), as text, with an ETag."""
    url, _ = site
    response = httpx.get(f"{url}/{KEY}.txt")
    assert response.status_code == 200 and response.content == KEY.encode()
    assert response.headers["content-type"].startswith("text/plain")
    assert httpx.get(f"{url}/{KEY}.txt.gz").status_code == 404
    assert httpx.get(f"{url}/not-the-key-00.txt").status_code == 404


@pytest.mark.anyio
async def test_batches_of_at_most_10000_accepted_then_ok(
    site: tuple[str, SitemapConfig], endpoint: tuple[str, IndexNowEndpoint]
) -> None:
    """25,000 URLs go in 3 POSTs; the first gets 202 (key pending), the others 200."""
    url, config = site
    target, state = endpoint
    urls = [f"{url}/p/{i}" for i in range(25_000)]
    result = await notifier_for(config, target).notify(urls + urls[:10])  # duplicates dropped
    assert result.ok and result.submitted == 25_000
    assert [b.status for b in result.batches] == [202, 200, 200]
    assert [len(body["urlList"]) for body in state.received] == [10_000, 10_000, 5_000]


@pytest.mark.anyio
async def test_429_and_5xx_are_retried_with_backoff(
    site: tuple[str, SitemapConfig],
    endpoint: tuple[str, IndexNowEndpoint],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two 429s and a 500 are retried; the fourth attempt gets through."""
    url, config = site
    target, state = endpoint
    state.throttle, state.fail = 2, 1
    result = await notifier_for(config, target).notify([f"{url}/about"])
    assert result.ok and result.batches[0].attempts == 4
    assert state.answers == [500, 429, 429, 202]
    assert sum("retrying" in r.getMessage() for r in caplog.records) == 3


@pytest.mark.anyio
async def test_retries_run_out(
    site: tuple[str, SitemapConfig], endpoint: tuple[str, IndexNowEndpoint]
) -> None:
    """A throttling endpoint makes the batch fail after retries + 1 attempts."""
    url, config = site
    target, state = endpoint
    state.throttle = 10
    result = await notifier_for(config, target, retries=2).notify([f"{url}/about"])
    assert not result.ok and result.batches[0].status == 429
    assert result.batches[0].error == "429 too many requests (gave up after 3 attempts)"
    assert state.answers == [429, 429, 429]


@pytest.mark.anyio
async def test_403_when_the_key_file_does_not_hold_the_key(
    site: tuple[str, SitemapConfig], endpoint: tuple[str, IndexNowEndpoint]
) -> None:
    """A key the site does not serve gets 403, which is final (no retry)."""
    url, config = site
    target, state = endpoint
    notifier = notifier_for(config, target)
    notifier.key = "another-key-123"
    notifier.key_location = f"{url}/another-key-123.txt"
    result = await notifier.notify([f"{url}/about"])
    assert not result.ok and result.batches[0].attempts == 1
    assert result.batches[0].error is not None and result.batches[0].error.startswith("403")


@pytest.mark.anyio
async def test_422_for_urls_outside_the_key_directory(
    site: tuple[str, SitemapConfig], endpoint: tuple[str, IndexNowEndpoint]
) -> None:
    """With the key file in a subdirectory, URLs elsewhere on the host get a final 422."""
    url, config = site
    target, state = endpoint
    notifier = notifier_for(config, target)
    notifier.key_location = f"{url}/shop/{KEY}.txt"
    result = await notifier.notify([f"{url}/about"])
    assert [b.status for b in result.batches] == [422] and state.answers == [422]


@pytest.mark.anyio
async def test_400_for_a_malformed_body_is_final(
    site: tuple[str, SitemapConfig], endpoint: tuple[str, IndexNowEndpoint]
) -> None:
    """A body without the key gets 400 and is not retried."""
    url, config = site
    target, state = endpoint

    class Keyless(IndexNowNotifier):
        def payload(self, urls: Any) -> dict[str, object]:
            body = super().payload(urls)
            del body["key"]
            return body

    notifier = Keyless(
        host=config.base.origin.split("//")[1], key=KEY, endpoint=target, backoff=0.01
    )
    result = await notifier.notify([f"{url}/about"])
    assert [b.status for b in result.batches] == [400] and result.batches[0].attempts == 1


@pytest.mark.anyio
async def test_unreachable_endpoint_is_reported_not_raised(site: tuple[str, SitemapConfig]) -> None:
    """Connection errors are retried, then reported in the result."""
    url, config = site
    sock = bound_socket()  # bound, never listening: connections are refused
    try:
        notifier = notifier_for(
            config, f"http://127.0.0.1:{sock.getsockname()[1]}/indexnow", retries=1
        )
        result = await notifier.notify([f"{url}/about"])
    finally:
        sock.close()
    assert not result.ok and result.batches[0].status is None
    assert "ConnectError" in (result.batches[0].error or "")


@pytest.mark.anyio
async def test_submit_returns_at_once_and_finishes_in_the_background(
    site: tuple[str, SitemapConfig], endpoint: tuple[str, IndexNowEndpoint]
) -> None:
    """submit() does not wait for the endpoint; aclose() waits for what is pending."""
    url, config = site
    target, state = endpoint
    notifier = notifier_for(config, target)
    pending = notifier.submit([f"{url}/about"])
    assert not pending.done() and state.received == []
    await notifier.aclose()
    assert pending.result().ok and len(state.received) == 1


def test_submit_from_sync_code_runs_on_the_portal(
    site: tuple[str, SitemapConfig], endpoint: tuple[str, IndexNowEndpoint]
) -> None:
    """From a WSGI view (no running loop) submit() hands the work to the portal thread."""
    url, config = site
    target, state = endpoint
    notifier = notifier_for(config, target)
    pending = notifier.submit([f"{url}/"])
    assert threading.current_thread() is threading.main_thread()
    result = pending.result(timeout=30)  # type: ignore[call-arg]
    assert result.ok and state.received[0]["urlList"] == [f"{url}/"]


@pytest.mark.anyio
async def test_changes_between_snapshots_are_pushed(
    endpoint: tuple[str, IndexNowEndpoint], site: tuple[str, SitemapConfig]
) -> None:
    """Only URLs added, changed or removed since the last snapshot are sent."""
    url, _ = site
    target, state = endpoint
    pages: list[SitemapEntry] = [
        SitemapEntry("/", lastmod="2024-01-01"),
        SitemapEntry("/about", lastmod="2024-01-01"),
        SitemapEntry("/old", lastmod="2024-01-01"),
    ]
    products = CountingProvider(5, host=url)
    config = SitemapConfig(
        base_url=url,
        sections={"pages": lambda: list(pages), "products": products},
        indexnow_key=KEY,
    )
    notifier = notifier_for(config, target)
    first = await take_snapshot(config)
    iterations = products.iterations
    pages[1] = SitemapEntry("/about", lastmod=datetime(2024, 6, 1, tzinfo=timezone.utc))
    pages[2:] = [SitemapEntry("/new")]
    second, result = await notifier.notify_changes(config, first)
    assert changed_urls(first, second) == [f"{url}/about", f"{url}/new", f"{url}/old"]
    assert result.ok and state.received[0]["urlList"] == [
        f"{url}/about",
        f"{url}/new",
        f"{url}/old",
    ]
    assert products.iterations == iterations  # same version: not iterated again
    _, nothing = await notifier.notify_changes(config, second)
    assert nothing.batches == () and len(state.received) == 1


# -- hostile endpoints: a dripping answer, junk Retry-After; the backoff bound -------------


@pytest.fixture
def hostile_endpoint() -> Iterator[str]:
    with serve_uvicorn(indexnow_hostile(), bound_socket()) as url:
        yield url


@pytest.mark.anyio
async def test_timeout_bounds_a_whole_post_to_a_dripping_endpoint(hostile_endpoint: str) -> None:
    """An answer dripping a byte every 0.1 s is cut at ``timeout`` and retried, then given up."""
    notifier = IndexNowNotifier(
        host="example.com",
        key=KEY,
        endpoint=hostile_endpoint + "/drip",
        retries=1,
        backoff=0.01,
        timeout=0.3,
    )
    result = await notifier.notify(["https://example.com/a"])
    assert not result.ok
    assert result.batches[0] == IndexNowBatch(
        1, None, 2, "timed out after 0.3 s (gave up after 2 attempts)"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("junk", ["\u00b2", "1\u00b9", "soon", "-5", "1e400", "9" * 5000])
async def test_junk_retry_after_falls_back_to_backoff(hostile_endpoint: str, junk: str) -> None:
    """``Retry-After: ²`` (str.isdigit says yes) and other junk: normal backoff, no raise."""
    notifier = IndexNowNotifier(
        host="example.com",
        key=KEY,
        endpoint=f"{hostile_endpoint}/junk?retry_after={quote(junk)}",
        retries=1,
        backoff=0.01,
        max_backoff=0.05,
    )
    result = await notifier.notify(["https://example.com/a"])
    assert result.batches[0] == IndexNowBatch(
        1, 429, 2, "429 too many requests (gave up after 2 attempts)"
    )


def test_the_notify_command_pushes_what_changed_since_its_snapshot(
    site: tuple[str, SitemapConfig],
    endpoint: tuple[str, IndexNowEndpoint],
    tmp_path: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``sitemap-middleware notify``: the first run writes the snapshot and pushes nothing;
    later runs push what was added, changed or removed; a dry run sends and writes
    nothing; a failed push keeps the old snapshot, so the next run pushes again."""
    from sitemap_middleware import ASGISitemapMiddleware
    from sitemap_middleware.__main__ import build_parser

    url, _ = site
    endpoint_url, state = endpoint
    pages = ListProvider(["/", "/about"])
    config = SitemapConfig(base_url=url, sections={"pages": pages}, indexnow_key=KEY)
    app = ASGISitemapMiddleware(lambda *a: None, config=config)  # type: ignore[arg-type]
    snapshot = tmp_path / "state" / "snapshot.json"

    def run(*extra: str) -> int:
        argv = ["notify", "--app", "x:y", "--snapshot", str(snapshot)]
        namespace = build_parser().parse_args([*argv, "--endpoint", endpoint_url, *extra])
        namespace.app = app  # the app object itself (as manage.py sitemap passes it)
        status: int = namespace.handler(namespace)
        return status

    assert run() == 0 and snapshot.is_file() and state.received == []
    assert "first run" in capsys.readouterr().out
    pages.items.append("/new")
    assert run("--dry-run") == 0 and state.received == []
    assert f"{url}/new" in capsys.readouterr().out
    assert run() == 0
    assert [body["urlList"] for body in state.received] == [[f"{url}/new"]]
    assert run() == 0 and len(state.received) == 1  # nothing changed: nothing sent
    pages.items.remove("/about")
    state.fail = 100  # every attempt answers 500
    assert run("--json", "--retries", "0") == 1
    assert '"ok": false' in capsys.readouterr().out
    state.fail = 0
    assert run() == 0
    assert state.received[-1]["urlList"] == [f"{url}/about"]  # pushed again, removed
