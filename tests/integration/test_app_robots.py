"""robots.txt in "append" mode through real servers: the app's own file, however it serves it.

The sub-request must behave like a real client (a body once, then wait, then
``http.disconnect``), be bounded in time and size, and never freeze the server.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import pytest
from flask import Flask, Response, send_file
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Robots,
    RobotsGroup,
    SitemapConfig,
    WSGISitemapMiddleware,
)
from tests.harness.ports import bound_socket
from tests.harness.servers import serve_uvicorn, serve_werkzeug

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

RULES = "User-agent: *\nDisallow: /private/\n"
SITEMAP_LINE = "Sitemap: https://example.com/sitemap.xml"


def _config(timeout: float = 5.0) -> SitemapConfig:
    return SitemapConfig(
        base_url="https://example.com",
        sections={"p": ["/a"]},
        robots=Robots(
            mode="append", app_timeout=timeout, groups=[RobotsGroup(disallow=["/generated/"])]
        ),
    )


def _starlette(kind: str, directory: Path, release: threading.Event) -> Starlette:
    (directory / "robots.txt").write_text(RULES)

    async def home(request: Request) -> PlainTextResponse:
        return PlainTextResponse("home")

    async def file_robots(request: Request) -> FileResponse:
        return FileResponse(directory / "robots.txt")

    async def streaming_robots(request: Request) -> StreamingResponse:
        async def lines() -> AsyncIterator[bytes]:
            for line in RULES.splitlines(keepends=True):
                yield line.encode()

        return StreamingResponse(lines(), media_type="text/plain")

    async def plain_robots(request: Request) -> PlainTextResponse:
        return PlainTextResponse(RULES)

    async def hanging_robots(request: Request) -> PlainTextResponse:
        while not release.is_set():
            await anyio.sleep(0.05)
        return PlainTextResponse(RULES)

    async def failing_robots(request: Request) -> PlainTextResponse:
        return PlainTextResponse("oops", status_code=500)

    async def huge_robots(request: Request) -> StreamingResponse:
        async def forever() -> AsyncIterator[bytes]:
            while True:
                yield b"Disallow: /x\n" * 1000

        return StreamingResponse(forever(), media_type="text/plain")

    routes: list[Any] = [Route("/", home)]
    handlers = {
        "file": file_robots,
        "streaming": streaming_robots,
        "plain": plain_robots,
        "hanging": hanging_robots,
        "failing": failing_robots,
        "huge": huge_robots,
    }
    if kind in handlers:
        routes.append(Route("/robots.txt", handlers[kind]))
    elif kind == "static":
        routes.append(Mount("/", app=StaticFiles(directory=directory)))
    app = Starlette(routes=routes)
    app.add_middleware(
        ASGISitemapMiddleware, config=_config(timeout=0.5 if kind == "hanging" else 5.0)
    )
    return app


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # let hung handlers finish so the servers shut down


@pytest.mark.parametrize("kind", ["file", "static", "streaming", "plain"])
def test_asgi_append_reads_the_apps_robots_however_served(
    kind: str, tmp_path: Path, release: threading.Event
) -> None:
    """FileResponse, StaticFiles, StreamingResponse and a plain response: the app's rules plus
    our Sitemap line, and the server keeps answering other requests."""
    with serve_uvicorn(_starlette(kind, tmp_path, release), bound_socket()) as url:
        for _ in range(3):
            response = httpx.get(f"{url}/robots.txt", timeout=10)
            assert response.status_code == 200
            assert response.text.startswith(RULES)
            assert response.text.splitlines().count(SITEMAP_LINE) == 1
            assert "/generated/" not in response.text
        head = httpx.head(f"{url}/robots.txt", timeout=10)
        assert head.status_code == 200 and head.content == b""
        assert httpx.get(f"{url}/", timeout=10).text == "home"


@pytest.mark.parametrize(
    ("kind", "status", "check"),
    [
        ("missing", 200, "/generated/"),  # the app has none (404): our generated file
        ("failing", 503, None),  # the app fails: 503, never an allow-all file
        ("hanging", 503, None),  # no answer within app_timeout: 503
        ("huge", 200, "Disallow: /x"),  # cut at 500 KiB, at a line end
    ],
)
def test_asgi_append_when_the_app_cannot_answer(
    kind: str, status: int, check: str | None, tmp_path: Path, release: threading.Event
) -> None:
    """A missing, failing, hanging or endless robots.txt gets a bounded, safe answer."""
    with serve_uvicorn(_starlette(kind, tmp_path, release), bound_socket()) as url:
        response = httpx.get(f"{url}/robots.txt", timeout=20)
        assert response.status_code == status
        if status == 503:
            assert response.headers["Retry-After"]
        else:
            assert check is not None and check in response.text
            assert response.text.endswith(SITEMAP_LINE + "\n")
            assert len(response.content) <= 500 * 1024 + 100
            assert "Disallow: /x\nDisallow: /x\n" in response.text or kind == "missing"
        assert httpx.get(f"{url}/", timeout=10).text == "home"


def _flask(kind: str, directory: Path, release: threading.Event) -> Flask:
    (directory / "robots.txt").write_text(RULES)
    app = Flask("robots")

    @app.route("/")
    def home() -> str:
        return "home"

    if kind == "file":
        app.add_url_rule("/robots.txt", "robots", lambda: send_file(directory / "robots.txt"))
    elif kind == "streaming":

        def stream() -> Response:
            return Response(iter(RULES.splitlines(keepends=True)), mimetype="text/plain")

        app.add_url_rule("/robots.txt", "robots", stream)
    elif kind == "hanging":

        def hang() -> str:
            release.wait(30)
            return RULES

        app.add_url_rule("/robots.txt", "robots", hang)
    app.wsgi_app = WSGISitemapMiddleware(  # type: ignore[method-assign]
        app.wsgi_app, config=_config(timeout=0.5 if kind == "hanging" else 5.0)
    )
    return app


@pytest.mark.parametrize(
    ("kind", "status"), [("file", 200), ("streaming", 200), ("missing", 200), ("hanging", 503)]
)
def test_wsgi_append_reads_the_apps_robots(
    kind: str, status: int, tmp_path: Path, release: threading.Event
) -> None:
    """Under WSGI too: send_file, a streamed body, a missing file and a hanging view."""
    with serve_werkzeug(_flask(kind, tmp_path, release), bound_socket()) as url:
        response = httpx.get(f"{url}/robots.txt", timeout=20)
        assert response.status_code == status
        if kind in ("file", "streaming"):
            assert response.text.startswith(RULES)
            assert response.text.splitlines().count(SITEMAP_LINE) == 1
        elif kind == "missing":
            assert "/generated/" in response.text
        assert httpx.get(f"{url}/", timeout=10).text == "home"


def test_wsgi_sub_request_gets_a_clean_environ() -> None:
    """The app is asked with GET, no body, no conditional or encoding headers."""
    seen: list[dict[str, Any]] = []

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        seen.append(dict(environ))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [RULES.encode()]

    middleware = WSGISitemapMiddleware(app, config=_config())
    environ = {
        "REQUEST_METHOD": "HEAD",
        "PATH_INFO": "/robots.txt",
        "SERVER_NAME": "example.com",
        "SERVER_PORT": "80",
        "HTTP_IF_NONE_MATCH": '"x"',
        "HTTP_ACCEPT_ENCODING": "gzip",
        "HTTP_RANGE": "bytes=0-1",
        "wsgi.input": None,
    }
    statuses: list[str] = []
    body = middleware(environ, lambda status, headers, exc_info=None: statuses.append(status))  # type: ignore[arg-type]
    assert statuses == ["200 OK"] and b"".join(body) == b""
    inner = seen[0]
    assert inner["REQUEST_METHOD"] == "GET"
    assert not {"HTTP_IF_NONE_MATCH", "HTTP_ACCEPT_ENCODING", "HTTP_RANGE"} & inner.keys()
    assert inner["wsgi.input"].read() == b""


# -- review-core: defects found by the hostile review ---------------------------------


def test_wsgi_append_keeps_rules_the_app_writes_with_write() -> None:
    """PEP 3333's write() callable is part of the body: its rules must not be dropped
    (the reply was our Sitemap line alone, losing the app's Disallow)."""

    def legacy(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        write = start_response("200 OK", [("Content-Type", "text/plain")])
        write(RULES.encode())
        return []

    middleware = WSGISitemapMiddleware(legacy, config=_config())
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/robots.txt",
        "SERVER_NAME": "example.com",
        "SERVER_PORT": "80",
        "wsgi.input": None,
    }
    statuses: list[str] = []
    body = middleware(environ, lambda status, headers, exc_info=None: statuses.append(status))  # type: ignore[arg-type]
    text = b"".join(body).decode()
    assert statuses == ["200 OK"]
    assert text.startswith(RULES) and text.endswith(SITEMAP_LINE + "\n")


def test_asgi_append_answers_once_the_apps_file_is_complete(release: threading.Event) -> None:
    """robots.txt is answered once the app's file is complete: a background task Starlette
    runs after it (inside the app call) neither delays the answer nor is cancelled early."""
    from starlette.background import BackgroundTask

    finished: list[bool] = []

    async def audit() -> None:
        while not release.is_set():
            await anyio.sleep(0.02)
        finished.append(True)

    async def robots(request: Request) -> PlainTextResponse:
        return PlainTextResponse(RULES, background=BackgroundTask(audit))

    app = Starlette(routes=[Route("/robots.txt", robots)])
    app.add_middleware(ASGISitemapMiddleware, config=_config(timeout=30))
    with serve_uvicorn(app, bound_socket()) as url:
        response = httpx.get(f"{url}/robots.txt", timeout=10)
        # Answered while the background task is still waiting for its release.
        assert response.status_code == 200 and response.text.startswith(RULES)
        assert finished == []
        release.set()
        for _ in range(500):
            if finished:
                break
            threading.Event().wait(0.01)
        assert finished == [True]  # the task ran to its end, not cancelled


def test_asgi_append_answers_503_at_app_timeout_even_for_a_sync_endpoint(
    release: threading.Event,
) -> None:
    """A plain ``def`` endpoint runs in a worker thread no cancellation reaches: robots.txt
    still answers 503 at app_timeout, while that thread is blocked, and the server goes on."""
    blocked: list[bool] = []

    def robots(request: Request) -> PlainTextResponse:
        blocked.append(True)
        release.wait(60)
        return PlainTextResponse(RULES)

    async def home(request: Request) -> PlainTextResponse:
        return PlainTextResponse("home")

    app = Starlette(routes=[Route("/robots.txt", robots), Route("/", home)])
    app.add_middleware(ASGISitemapMiddleware, config=_config(timeout=0.5))
    with serve_uvicorn(app, bound_socket()) as url:
        response = httpx.get(f"{url}/robots.txt", timeout=20)
        assert response.status_code == 503 and blocked and not release.is_set()
        assert httpx.get(f"{url}/", timeout=10).text == "home"
        release.set()
