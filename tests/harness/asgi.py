"""Calling an ASGI app as a server would, in process: one HTTP request, every message sent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from starlette.types import Message, Scope


def http_scope(
    path: str, method: str = "GET", headers: list[tuple[bytes, bytes]] | None = None
) -> Scope:
    """An HTTP scope as uvicorn hands it over (host ``testserver`` unless ``headers`` say)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers or [(b"host", b"testserver")],
        "client": ("127.0.0.1", 1234),
        "server": ("testserver", 80),
    }


async def call_asgi(app: Any, scope: Scope, disconnect_after: int | None = None) -> list[Message]:
    """The messages ``app`` sends for ``scope`` (an empty request body); the client hangs
    up after ``disconnect_after`` body messages when given."""
    sent: list[Message] = []
    delivered = False
    bodies = 0
    disconnected = anyio.Event()

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal bodies
        sent.append(message)
        if message["type"] == "http.response.body":
            bodies += 1
            if disconnect_after is not None and bodies >= disconnect_after:
                disconnected.set()
                await anyio.sleep(0.05)

    await app(scope, receive, send)
    return sent
