"""The ASGI middleware in process: raw messages, Starlette and FastAPI."""

from __future__ import annotations

import gzip
import logging
from typing import Any

import anyio
import httpx
import pytest
from fastapi import FastAPI
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from sitemap_middleware import ASGISitemapMiddleware, Renders, Robots, SitemapConfig
from sitemap_middleware._adapters.asgi import request_info
from sitemap_middleware._engine.core import READ_HEADERS
from tests.harness.asgi import call_asgi, http_scope
from tests.harness.core import make_config
from tests.harness.documents import check_document, page_urls
from tests.harness.providers import CountingProvider, RecordingStore

pytestmark = pytest.mark.anyio


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    body = f"app saw {scope['method']} {scope['path']}".encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/plain")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _middleware(
    sections: dict[str, Any] | None = None, app: Any = _app, **kwargs: Any
) -> ASGISitemapMiddleware:
    config = make_config(sections or {"p": ["/a"]}, **kwargs)
    return ASGISitemapMiddleware(app, config=config)


async def test_streams_start_then_chunks_then_final_empty_body() -> None:
    """One response.start, body chunks with more_body=True, a final empty chunk."""
    messages = await call_asgi(
        _middleware({"p": CountingProvider(2000)}), http_scope("/sitemap-p-1.xml")
    )
    assert messages[0]["type"] == "http.response.start" and messages[0]["status"] == 200
    headers = dict(messages[0]["headers"])
    assert (
        b"content-length" not in headers
        and headers[b"content-type"] == b"application/xml; charset=utf-8"
    )
    bodies = messages[1:]
    assert len(bodies) >= 3
    assert all(m["more_body"] for m in bodies[:-1])
    assert bodies[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    check_document(b"".join(m["body"] for m in bodies))


async def test_head_sends_headers_and_empty_body() -> None:
    """HEAD gets GET's headers and one empty body message; cold, it plans (a one-page
    section: its status from the plan's read), then reads one batch."""
    provider = CountingProvider(10)
    middleware = _middleware({"p": provider})
    messages = await call_asgi(middleware, http_scope("/sitemap-p-1.xml", "HEAD"))
    assert [m["type"] for m in messages] == ["http.response.start", "http.response.body"]
    assert messages[1]["body"] == b"" and not messages[1].get("more_body", False)
    assert provider.iterations == 1  # the planning pass; its read gives HEAD's status
    await call_asgi(middleware, http_scope("/sitemap-p-1.xml", "HEAD"))
    assert provider.iterations == 2  # the plan is kept for this version: one batch only


async def test_other_paths_and_scopes_pass_through_untouched() -> None:
    """Non-http scopes and paths that are not ours reach the app as they came."""
    seen: list[Scope] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope)
        if scope["type"] == "http":
            await _app(scope, receive, send)

    middleware = _middleware(app=app)
    scope = http_scope("/about")
    messages = await call_asgi(middleware, scope)
    assert seen[0] is scope and messages[1]["body"] == b"app saw GET /about"
    lifespan: Scope = {"type": "lifespan", "asgi": {"version": "3.0"}}
    await middleware(lifespan, None, None)  # type: ignore[arg-type]
    assert seen[1] is lifespan


async def test_lifespan_shutdown_closes_the_render_store(caplog: pytest.LogCaptureFixture) -> None:
    """On lifespan shutdown the middleware closes its render store, then reports complete."""
    cache = RecordingStore()
    order: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            kind = message["type"].rsplit(".", 1)[1]  # startup / shutdown
            await send({"type": f"lifespan.{kind}.complete"})
            if kind == "shutdown":
                return

    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> Message:
        return next(incoming)

    async def send(message: Message) -> None:
        order.append(f"{message['type']} (cache closed {cache.closed}x)")

    middleware = _middleware(app=app, renders=Renders(store=cache))
    await middleware({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    assert order == [
        "lifespan.startup.complete (cache closed 0x)",
        "lifespan.shutdown.complete (cache closed 1x)",
    ]

    # A store that fails to close is reported, and the shutdown still completes.
    async def broken_aclose() -> None:
        raise ConnectionError("redis went away")

    cache.aclose = broken_aclose  # type: ignore[method-assign]
    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    order.clear()
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        await middleware({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    assert order[-1].startswith("lifespan.shutdown.complete")
    assert "render store failed closing: ConnectionError: redis went away" in caplog.text


async def test_disconnect_mid_stream_closes_the_provider() -> None:
    """When the client disconnects, iteration stops and the provider's finally runs."""
    provider = CountingProvider(50_000)
    middleware = _middleware({"p": provider})
    await call_asgi(middleware, http_scope("/sitemap-p-1.xml", "HEAD"))  # plan the page first
    closed, yielded = provider.closed, provider.entries_yielded
    messages = await call_asgi(middleware, http_scope("/sitemap-p-1.xml"), disconnect_after=2)
    assert provider.closed == closed + 1
    assert provider.entries_yielded - yielded < 50_000
    assert not any(m.get("more_body") is False for m in messages[1:])


async def test_send_raising_oserror_stops_quietly() -> None:
    """ASGI 2.4: send() raising OSError (client gone) stops the stream without an error."""
    provider = CountingProvider(50_000)
    middleware = _middleware({"p": provider})
    await call_asgi(middleware, http_scope("/sitemap-p-1.xml", "HEAD"))  # plan the page first
    closed = provider.closed
    count = 0

    async def receive() -> Message:
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: Message) -> None:
        nonlocal count
        count += 1
        if count > 2:
            raise OSError("client went away")

    await middleware(http_scope("/sitemap-p-1.xml"), receive, send)
    assert provider.closed == closed + 1


async def test_provider_failure_mid_stream_propagates_to_server() -> None:
    """A failure after headers raises so the server aborts the connection."""
    from sitemap_middleware import ProviderError

    with pytest.raises(ProviderError):
        await call_asgi(
            _middleware(  # two pages: the page's render reads again, past the plan
                {"p": CountingProvider(5000, fail_after=3000, healthy_passes=1)},
                max_urls_per_page=4000,
            ),
            http_scope("/sitemap-p-1.xml"),
        )


async def test_robots_append_mode_keeps_the_apps_rules() -> None:
    """robots_mode='append' serves the app's robots.txt plus our Sitemap line."""

    async def robots_app(scope: Scope, receive: Receive, send: Send) -> None:
        await PlainTextResponse("User-agent: *\nDisallow: /private\n")(scope, receive, send)

    messages = await call_asgi(
        _middleware(app=robots_app, robots=Robots(mode="append")), http_scope("/robots.txt")
    )
    body = b"".join(m.get("body", b"") for m in messages[1:])
    assert (
        body == b"User-agent: *\nDisallow: /private\n\nSitemap: https://example.com/sitemap.xml\n"
    )


def _homepage(request: Any) -> PlainTextResponse:
    return PlainTextResponse("home")


async def test_starlette_middleware_list_and_httpx_client() -> None:
    """Works as Middleware(ASGISitemapMiddleware, config=...) in a Starlette app."""
    config = SitemapConfig(base_url="https://example.com", sections={"p": ["/", "/about"]})
    app = Starlette(
        routes=[Route("/", _homepage)],
        middleware=[Middleware(ASGISitemapMiddleware, config=config)],
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        home = await client.get("/")
        assert home.text == "home"
        response = await client.get("/sitemap.xml", headers={"Accept-Encoding": "gzip"})
        assert response.headers["content-encoding"] == "gzip"
        assert page_urls(check_document(response.content)) == [
            "https://example.com/",
            "https://example.com/about",
        ]
        robots = await client.get("/robots.txt")
        assert "Sitemap: https://example.com/sitemap.xml" in robots.text


async def test_fastapi_add_middleware() -> None:
    """Works with FastAPI's app.add_middleware(ASGISitemapMiddleware, config=...)."""
    api = FastAPI()

    @api.get("/items")
    async def items() -> dict[str, int]:
        return {"n": 1}

    api.add_middleware(
        ASGISitemapMiddleware,
        config=SitemapConfig(base_url="https://example.com", sections={"p": ["/items"]}),
    )
    transport = httpx.ASGITransport(app=api)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        assert (await client.get("/items")).json() == {"n": 1}
        response = await client.get("/sitemap.xml.gz")
        assert page_urls(check_document(gzip.decompress(response.content))) == [
            "https://example.com/items"
        ]


def test_middleware_requires_a_config() -> None:
    """Passing something that is not a SitemapConfig fails at setup, loudly."""
    with pytest.raises(TypeError, match="SitemapConfig"):
        ASGISitemapMiddleware(_app, config={"base_url": "x"})  # type: ignore[arg-type]


@pytest.mark.parametrize("warm", [True, False])
async def test_plans_are_warmed_up_at_start_up_in_the_background(warm: bool) -> None:
    """``Renders(warm_up=True)``: once the app reports start-up complete, every section is
    planned in the background (issue 23, item 4), so the first index finds its plans;
    without it nothing is planned before a request. A failing section is logged, and
    start-up and shutdown still complete."""
    import anyio

    from sitemap_middleware import Renders

    planned = anyio.Event()
    stop = anyio.Event()
    done: list[str] = []

    async def entries() -> Any:
        planned.set()
        yield "/a"

    async def failing() -> Any:
        raise ConnectionError("the database is down")
        yield "/never"

    async def hanging() -> Any:
        await anyio.sleep_forever()  # still planning at shutdown: the warm-up stops
        yield "/never"

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            kind = message["type"].rsplit(".", 1)[1]
            await send({"type": f"lifespan.{kind}.complete"})
            if kind == "shutdown":
                return

    incoming = [{"type": "lifespan.startup"}]

    async def receive() -> Message:
        if incoming:
            return incoming.pop()
        await stop.wait()
        return {"type": "lifespan.shutdown"}

    async def send(message: Message) -> None:
        done.append(message["type"])

    sections = {"a": entries, "b": failing, "c": hanging}
    middleware = _middleware(sections, app, renders=Renders(warm_up=warm))
    with anyio.fail_after(5):  # shutdown never waits for the warm-up
        async with anyio.create_task_group() as group:
            lifespan = {"type": "lifespan", "asgi": {"version": "3.0"}}
            group.start_soon(middleware, lifespan, receive, send)
            with anyio.move_on_after(1):
                await planned.wait()
            assert planned.is_set() is warm
            await anyio.sleep(0.1)  # the warm-up reaches the hanging section
            stop.set()
    assert done == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert middleware.core._documents.plans.passes == (3 if warm else 0)  # type: ignore[union-attr]


async def test_a_mount_cut_off_the_path_is_read_from_raw_path() -> None:
    """Litestar's ``is_mount`` hands a mounted app ``path="/sitemap.xml/"`` (its mount cut
    off, a slash appended) with no ``root_path`` and the whole ``raw_path``: the mount is
    read from raw_path, so the documents answer with the mount's URLs."""
    scope = dict(http_scope("/sitemap.xml/"), raw_path=b"/shop/sitemap.xml?x=1")
    messages = await call_asgi(_middleware(), scope)
    assert messages[0]["status"] == 200
    assert page_urls(check_document(messages[1]["body"])) == ["https://example.com/shop/a"]
    # Not ours under the mount: the app gets the scope as it came.
    messages = await call_asgi(_middleware(), dict(http_scope("/a/"), raw_path=b"/shop/a"))
    assert messages[1]["body"] == b"app saw GET /a/"


_NAMES = st.sampled_from([*READ_HEADERS, "user-agent", "cookie", "Host", "X-Forwarded-For"])


@given(
    headers=st.lists(
        st.tuples(_NAMES, st.text(st.characters(min_codepoint=32, max_codepoint=255))),
        max_size=12,
    ),
    client=st.one_of(st.none(), st.tuples(st.sampled_from(["127.0.0.1", "::1"]), st.just(1))),
    query=st.binary(max_size=20),
)
def test_the_request_as_the_core_reads_it(
    headers: list[tuple[str, str]], client: tuple[str, int] | None, query: bytes
) -> None:
    """One pass over the headers reads what Starlette's ``getlist`` would (names as the
    server sent them, repeated ones joined with ", "), the peer's address and the query."""
    from starlette.datastructures import Headers

    scope = dict(http_scope("/p"), client=client, query_string=query)
    scope["headers"] = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    read = Headers(scope=scope)
    expected = {n: ", ".join(read.getlist(n)) for n in READ_HEADERS if read.getlist(n)}
    request = request_info(scope)
    assert dict(request.headers) == expected
    assert request.client == (client[0] if client else None)
    assert request.query == query.decode("latin-1")
