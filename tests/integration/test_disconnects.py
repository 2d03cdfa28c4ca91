"""Clients hanging up mid-stream on uvicorn, hypercorn and werkzeug: stop soon, log nothing.

A hang-up is normal for a crawler: the provider must stop within a batch of it (even
one that never awaits), its connections must close cleanly, and nothing above DEBUG may
be logged by us, the server or asyncio (access-log lines aside).
"""

from __future__ import annotations

import gc
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from sitemap_middleware import Renders, SitemapConfig
from sitemap_middleware.providers import SQLAlchemyProvider
from tests.harness.servers import serve

SERVERS = ["uvicorn", "hypercorn", "werkzeug"]
TOTAL = 50_000
#: Long URLs: the page (~25 MB) is far more than socket buffers hold, so the server is
#: still writing when the client hangs up.
PAD = "x" * 480
#: Per-request access-log lines; everything else counts.
ACCESS_LOGGERS = {"uvicorn.access", "hypercorn.access"}


class NeverAwaits:
    """An in-memory provider that never awaits: no checkpoint of its own, ever."""

    def __init__(self, total: int = TOTAL, pad: str = PAD) -> None:
        self.total = total
        self.prefix = f"/{pad}" if pad else ""
        self.yielded = 0
        self.closed = False

    async def count(self) -> int:
        return self.total

    async def page(self, offset: int, limit: int) -> AsyncIterator[str]:
        try:
            for i in range(offset, min(self.total, offset + limit)):
                self.yielded += 1
                yield f"{self.prefix}/{i}"
        finally:
            self.closed = True

    def entries(self) -> AsyncIterator[str]:
        return self.page(0, self.total)


def _hang_up_after_first_bytes(url: str, path: str) -> None:
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n"
        sock.sendall(request.encode())
        received = b""
        while len(received) < 64 * 1024:
            received += sock.recv(65536)
        assert b" 200 " in received.split(b"\r\n", 1)[0]
        # RST, not FIN: the server's next writes fail at once.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def _wait_for(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def _loud(records: list[logging.LogRecord]) -> list[str]:
    return [
        f"{r.name} {r.levelname}: {r.getMessage()}"
        for r in records
        if r.levelno > logging.DEBUG
        and r.name not in ACCESS_LOGGERS
        and not (r.name == "werkzeug" and '"GET ' in r.getMessage())  # its access line
        and not (r.name == "sitemap_middleware" and r.getMessage().startswith("served "))
        and not (r.name in ("uvicorn.error", "hypercorn.error") and _lifecycle(r.getMessage()))
    ]


def _lifecycle(message: str) -> bool:
    """uvicorn's and hypercorn's start-up and shutdown lines (not about any request)."""
    return message.startswith(
        (
            "Started server",
            "Waiting for",
            "Application startup",
            "Uvicorn running",
            "Shutting down",
            "Application shutdown",
            "Finished server",
            "Running on",
        )
    )


@pytest.mark.parametrize("server", SERVERS)
def test_hang_up_stops_a_provider_that_never_awaits(
    server: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The provider stops long before the end of the page, and nothing is logged."""
    provider = NeverAwaits()
    config = SitemapConfig(
        base_url="https://example.com", sections={"p": provider}, renders=Renders(plan_ttl=60)
    )
    with caplog.at_level(logging.DEBUG), serve(server, config) as url:
        # The index plans the section (one whole pass, kept for plan_ttl): what follows
        # counts the page's own pass only.
        assert httpx.get(url + "/sitemap_index.xml").status_code == 200
        provider.yielded, provider.closed = 0, False
        caplog.clear()
        _hang_up_after_first_bytes(url, "/sitemap-p-1.xml")
        assert _wait_for(lambda: provider.closed)
        time.sleep(0.2)  # anything the server would log about the dead socket, it has now
    assert provider.yielded < TOTAL // 2, provider.yielded
    assert _loud(caplog.records) == []


@pytest.fixture
def sqlite_url(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite+aiosqlite:///{tmp_path / 'pages.db'}"


metadata = MetaData()
pages = Table("pages", metadata, Column("id", Integer, primary_key=True), Column("slug", String))


@pytest.mark.parametrize("server", ["uvicorn", "hypercorn"])
def test_hang_up_closes_aiosqlite_connections_cleanly(
    server: str, sqlite_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An aiosqlite connection in use when the client goes is closed, not left pending."""
    import asyncio

    async def fill() -> None:
        engine = create_async_engine(sqlite_url)
        async with engine.begin() as conn:
            await conn.run_sync(metadata.create_all)
            await conn.execute(
                insert(pages), [{"id": i, "slug": f"{PAD}/{i}"} for i in range(1, TOTAL + 1)]
            )
        await engine.dispose()

    asyncio.run(fill())
    # NullPool: connections close on check-in, so none outlives the server's event loop.
    engine = create_async_engine(sqlite_url, poolclass=NullPool)
    provider = SQLAlchemyProvider(engine, pages, key="id", to_entry=lambda row: f"/{row.slug}")
    config = SitemapConfig(base_url="https://example.com", sections={"p": provider})
    with caplog.at_level(logging.DEBUG), serve(server, config) as url:
        for _ in range(3):
            _hang_up_after_first_bytes(url, "/sitemap-p-1.xml")
        assert _wait_for(lambda: not provider._runner._queries)  # the given-up query has finished
        time.sleep(0.2)
        gc.collect()
    gc.collect()
    assert _loud(caplog.records) == []


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # aiosqlite is asyncio only
@pytest.mark.anyio
async def test_giving_up_mid_query_closes_the_connection(
    sqlite_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Cancelled while a query runs (a hang-up, a timeout): the connection is closed, not
    abandoned to a pending task ("Task was destroyed but it is pending!")."""
    import anyio

    engine = create_async_engine(sqlite_url)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
        await conn.execute(insert(pages), [{"id": i, "slug": f"s{i}"} for i in range(1, 40_001)])
    provider = SQLAlchemyProvider(
        engine, pages, key="id", to_entry=lambda row: f"/{row.slug}", batch_size=20_000
    )
    with caplog.at_level(logging.DEBUG, logger="asyncio"):
        for delay in (0.005, 0.01, 0.02, 0.04, 0.08):
            with anyio.move_on_after(delay):
                async for _ in provider.entries():
                    pass
            with anyio.fail_after(30):  # a given-up query finishes, then checks its connection in
                while engine.sync_engine.pool.checkedout():  # type: ignore[attr-defined]
                    await anyio.sleep(0.01)
        await engine.dispose()
        gc.collect()
    assert [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG] == []
