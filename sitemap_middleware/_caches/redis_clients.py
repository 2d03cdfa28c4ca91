"""One redis-py asyncio client per event loop, for the Redis render store.

A redis-py asyncio client belongs to the loop it was created on (the ASGI server's, or
the WSGI portal's), so each loop gets its own, created lazily and closed from that loop.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["LoopClients"]


class LoopClients:
    """Clients of one Redis URL, one per running event loop."""

    def __init__(self, url: str, timeout: float) -> None:
        self._url = url
        self._timeout = timeout
        self._clients: WeakKeyDictionary[asyncio.AbstractEventLoop, Redis] = WeakKeyDictionary()

    def get(self) -> Redis:
        """The running loop's client, created on first use."""
        from redis.asyncio import Redis

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = Redis.from_url(
                self._url, socket_timeout=self._timeout, socket_connect_timeout=self._timeout
            )
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the running loop's client, if it has one."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
