"""``Renders(warm_up=True)`` under WSGI (issue 23, item 4), through a real werkzeug server.

WSGI has no start-up to hook: the warm-up starts with the first request the middleware
sees (any path, the app's own pages too), in the background on the portal's loop, once
per process; the request that started it is not held up by it.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import anyio.from_thread
import httpx
import pytest

from sitemap_middleware import Renders
from tests.harness.core import make_config
from tests.harness.ports import bound_socket, free_port
from tests.harness.servers import ROOT, serve_werkzeug, serving, wsgi_app


@pytest.mark.parametrize("warm", [True, False])
def test_wsgi_plans_are_warmed_up_from_the_first_request_in_the_background(warm: bool) -> None:
    """The first request (the app's home page, not a sitemap) starts planning every
    section in the background; it answers at once although a section hangs; a second
    request starts no second warm-up; without ``warm_up`` nothing is planned."""
    planned = threading.Event()

    async def entries() -> AsyncIterator[str]:
        planned.set()
        yield "/a"

    async def hanging() -> AsyncIterator[str]:
        await anyio.sleep_forever()  # still planning when the server stops: cancelled
        yield "/never"

    config = make_config({"a": entries, "b": hanging}, renders=Renders(warm_up=warm))
    app = wsgi_app(config)
    middleware = app.wsgi_app
    try:
        with serve_werkzeug(app, bound_socket()) as url:
            assert httpx.get(url + "/", timeout=5).text == "home page"
            assert planned.wait(5 if warm else 0.5) is warm
            assert httpx.get(url + "/", timeout=5).text == "home page"
            plans = middleware.core._documents.plans  # type: ignore[attr-defined]
            with anyio.from_thread.start_blocking_portal() as portal:  # (a clock to poll by)
                portal.call(_until, lambda: plans.passes >= (2 if warm else 0))
            assert plans.passes == (2 if warm else 0)  # a's, and b's under way
            reply = httpx.get(url + "/sitemap-a-1.xml", timeout=5)
            assert reply.status_code == 200 and "/a</loc>" in reply.text
    finally:
        middleware.close()  # type: ignore[attr-defined]  # cancels the hanging warm-up
    assert plans.passes == (2 if warm else 1)


async def _until(done: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not done():
            await anyio.sleep(0.01)


def test_a_process_whose_warm_up_hangs_still_exits() -> None:
    """A warm-up still planning at interpreter exit (no ``close()``: WSGI has no shutdown
    hook) is cancelled, so the portal, which waits for its tasks, stops."""
    script = (
        "import anyio\n"
        "from sitemap_middleware import Renders, SitemapConfig, WSGISitemapMiddleware\n"
        "async def hanging():\n"
        "    await anyio.sleep_forever()\n"
        "    yield '/never'\n"
        "config = SitemapConfig(base_url='https://example.com', sections={'b': hanging},\n"
        "                       renders=Renders(warm_up=True))\n"
        "app = WSGISitemapMiddleware(lambda e, s: [], config=config)\n"
        "app.warm_up()\n"
        "import time; time.sleep(0.3)\n"
        "print('exiting')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "exiting\n"


def test_each_gunicorn_worker_warms_up_its_own_plans(tmp_path: Path) -> None:
    """gunicorn --preload: the master's warm-up, still planning when it forks, belongs to
    its own loop; a worker's first request (no sitemap asked for) plans in that worker,
    and its sitemap answers (it does not wait on the master's planning pass)."""
    port = free_port()
    argv = [sys.executable, "-m", "gunicorn", "--preload", "--workers=2"]
    argv += ["--worker-class=gthread", "--threads=4", f"--bind=127.0.0.1:{port}"]
    argv += ["--log-level=warning", "tests.integration.gunicorn_warm_app:app"]
    with serving(argv, port, {"SITEMAP_TEST_MARKERS": str(tmp_path)}) as server:
        for _ in range(4):
            assert httpx.get(server.url + "/", timeout=5).text == "home page"
        deadline = time.monotonic() + 10
        while True:
            planned = {int(path.name.split("-")[1]) for path in tmp_path.glob("planned-*")}
            if planned - {server.pid} or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        reply = httpx.get(server.url + "/sitemap-a-1.xml", timeout=10)
        assert reply.status_code == 200 and "/a</loc>" in reply.text
    assert server.pid in planned  # the master's, at import
    assert planned - {server.pid}  # and a worker's own
