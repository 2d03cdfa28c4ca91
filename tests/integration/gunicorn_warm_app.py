"""A Flask app with ``Renders(warm_up=True)`` for gunicorn --preload (warm-up per worker).

The master serves one request at import, so its warm-up is planning when it forks (its
section waits forever there): each worker must start its own on its first request, and
not wait for the master's. The section touches a file in ``$SITEMAP_TEST_MARKERS`` named
by the pid that plans it.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from sitemap_middleware import Renders
from tests.harness.core import make_config
from tests.harness.servers import wsgi_app

MARKERS = Path(os.environ.get("SITEMAP_TEST_MARKERS", "."))
MASTER = os.getpid()


async def entries() -> AsyncIterator[str]:
    (MARKERS / f"planned-{os.getpid()}").touch()
    if os.getpid() == MASTER:
        await anyio.sleep_forever()  # still planning when gunicorn forks its workers
    yield "/a"


app = wsgi_app(make_config({"a": entries}, renders=Renders(warm_up=True)))
assert app.test_client().get("/").status_code == 200  # the master's warm-up starts here
while not (MARKERS / f"planned-{MASTER}").exists():  # forked while it plans, for sure
    time.sleep(0.01)
