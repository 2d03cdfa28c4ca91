"""Built-in providers and the adapters for plain Python data."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from flask import Flask
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route, Router

from sitemap_middleware import ConfigurationError, SitemapConfig, SitemapEntry
from sitemap_middleware._sansio.models import Mapped
from sitemap_middleware.providers import (
    CallableProvider,
    DirectoryProvider,
    FlaskRoutesProvider,
    StarletteRoutesProvider,
    StaticProvider,
    SupportsCount,
    SupportsPages,
    SupportsVersion,
    TextFileProvider,
    as_provider,
)
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, page_urls

pytestmark = pytest.mark.anyio

#: aiofiles is bound to asyncio, so the file providers are asyncio-only.
asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"])


async def _collect(provider: Any) -> list[Any]:
    """What a provider yields, with Mapped rows resolved as the middleware does."""
    items = [item async for item in provider.entries()]
    return [item.resolve() if isinstance(item, Mapped) else item for item in items]


async def test_static_provider_has_every_capability() -> None:
    """A list becomes a StaticProvider with count, pages, version and page lastmods."""
    provider = as_provider(
        ["/a", SitemapEntry("/b", lastmod="2024-01-02"), {"loc": "/c", "lastmod": "2024-01-03"}]
    )
    assert isinstance(provider, StaticProvider)
    assert isinstance(provider, SupportsCount) and isinstance(provider, SupportsPages)
    assert isinstance(provider, SupportsVersion)
    assert await provider.count() == 3
    assert [getattr(e, "loc", None) async for e in provider.page(1, 5)] == ["/b", "/c"]
    version = await provider.version()
    assert version.last_modified == datetime(2024, 1, 3, tzinfo=timezone.utc)
    assert (
        version
        == await StaticProvider(
            ["/a", SitemapEntry("/b", lastmod="2024-01-02"), {"loc": "/c", "lastmod": "2024-01-03"}]
        ).version()
    )
    assert await provider.page_last_modified(2) == [
        datetime(2024, 1, 2, tzinfo=timezone.utc),
        datetime(2024, 1, 3, tzinfo=timezone.utc),
    ]


def _sync_gen() -> Iterator[str]:
    yield from (f"/s/{i}" for i in range(2500))


async def _async_gen() -> AsyncIterator[str]:
    for i in range(3):
        yield f"/a/{i}"


async def _async_list() -> list[str]:
    return ["/l/1"]


class _Reiterable:
    def __iter__(self) -> Iterator[str]:
        return iter(["/r/1", "/r/2"])


class _AsyncReiterable:
    def __aiter__(self) -> AsyncIterator[str]:
        return _async_gen()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (_sync_gen, 2500),
        (_async_gen, 3),
        (_async_list, 1),
        (lambda: ("/t/1", "/t/2"), 2),
        (lambda: (f"/g/{i}" for i in range(5)), 5),
        (_Reiterable(), 2),
        (_AsyncReiterable(), 3),
    ],
    ids=[
        "sync-generator-function",
        "async-generator-function",
        "async-function",
        "function-tuple",
        "function-generator",
        "reiterable",
        "async-reiterable",
    ],
)
async def test_adapters_accept_any_iterable_shape(value: Any, expected: int) -> None:
    """Generator functions, async ones, callables and re-iterables all become providers."""
    provider = as_provider(value)
    assert len(await _collect(provider)) == expected
    assert len(await _collect(provider)) == expected  # and again: nothing was used up


def test_one_shot_iterators_are_refused_with_a_hint() -> None:
    """A generator object would serve once; the error says to pass the function."""
    with pytest.raises(TypeError, match="generator function"):
        as_provider(iter(["/a"]))
    with pytest.raises(TypeError, match="async generator"):
        as_provider(_async_gen())
    with pytest.raises(ConfigurationError, match="section 'p'"):
        SitemapConfig(base_url="https://example.com", sections={"p": iter(["/a"])})
    with pytest.raises(TypeError):
        as_provider(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("capability", ["count", "page", "version", "page_last_modified"])
def test_a_capability_that_is_not_callable_is_refused_by_name(capability: str) -> None:
    """A provider whose ``count`` (or other capability) is a plain value would fail on
    every request (a 500): refused when the configuration is built, naming the attribute."""

    class Provider:
        async def entries(self) -> AsyncIterator[str]:
            yield "/a"

    setattr(Provider, capability, 5)
    with pytest.raises(
        ConfigurationError,
        match=rf"section 'p': Provider.{capability} is 5 \(int\), not a method",
    ):
        SitemapConfig(base_url="https://example.com", sections={"p": Provider()})
    with pytest.raises(TypeError, match="not a method"):
        as_provider(Provider())
    Provider.entries = ["/a"]  # type: ignore[assignment,method-assign]
    with pytest.raises(TypeError, match=r"Provider.entries is \['/a'\] \(list\), not a method"):
        as_provider(Provider())


async def test_callable_provider_rejects_non_iterables() -> None:
    """A factory returning something that is not iterable fails clearly."""
    with pytest.raises(TypeError, match="not an iterable"):
        await _collect(CallableProvider(lambda: 42))
    with pytest.raises(TypeError):
        CallableProvider(42)  # type: ignore[arg-type]


@asyncio_only
async def test_text_file_provider(tmp_path: Path) -> None:
    """One URL a line; blanks and comments skipped; version from stat."""
    path = tmp_path / "urls.txt"
    path.write_text("# comment\n/a\n\n https://example.com/b \n")
    provider = TextFileProvider(path)
    assert await _collect(provider) == ["/a", "https://example.com/b"]
    first = await provider.version()
    os.utime(path, (1_700_000_000, 1_700_000_000))
    second = await provider.version()
    assert first.token != second.token
    assert second.last_modified == datetime.fromtimestamp(1_700_000_000, tz=timezone.utc)


@asyncio_only
async def test_directory_provider_maps_files_to_urls(tmp_path: Path) -> None:
    """index.html stands for its directory, lastmod comes from mtimes, filters apply."""
    for name in (
        "index.html",
        "guide/index.html",
        "guide/intro.html",
        "private/x.html",
        "style.css",
        "faq.html",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    os.utime(tmp_path / "faq.html", (1_700_000_000, 1_700_000_000))
    provider = DirectoryProvider(
        tmp_path, url_prefix="/docs", exclude=("private/*",), strip_suffixes=(".html",)
    )
    entries = await _collect(provider)
    assert [e.loc for e in entries] == ["/docs/faq", "/docs/guide/", "/docs/guide/intro", "/docs/"]
    assert entries[0].lastmod == datetime.fromtimestamp(1_700_000_000, tz=timezone.utc)
    assert await provider.count() == 4
    version = await provider.version()
    assert version.token and version.last_modified is not None
    with pytest.raises(ValueError, match="url_prefix"):
        DirectoryProvider(tmp_path, url_prefix="docs")
    missing = DirectoryProvider(tmp_path / "nope")
    with pytest.raises(FileNotFoundError):
        await _collect(missing)


@asyncio_only
async def test_directory_provider_encodes_file_names(tmp_path: Path) -> None:
    """Spaces, ?, #, % and non-UTF-8 bytes in file names become percent-escapes, not errors."""
    names = [b"a b.html", b"what?.html", b"c#.html", b"100%.html", b"caf\xe9.html"]
    for name in names:
        (tmp_path / os.fsdecode(name)).write_text("x")
    core = make_core({"docs": DirectoryProvider(tmp_path)})
    _, body = await fetch(core, "/sitemap.xml")
    assert sorted(page_urls(check_document(body))) == sorted(
        f"https://example.com/{quote(name, safe='')}" for name in names
    )


async def test_mapping_errors_cost_only_their_row(caplog: pytest.LogCaptureFixture) -> None:
    """A map= function raising on one row leaves out that row, logged with the row; the page serves."""

    def rows() -> list[dict[str, Any]]:
        return [{"slug": "tea"}, {"slug": None}, {"slug": "coffee"}]

    def to_entry(row: dict[str, Any]) -> SitemapEntry:
        return SitemapEntry("/p/" + row["slug"])  # TypeError for None

    core = make_core({"p": CallableProvider(rows, map=to_entry)})
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        reply, body = await fetch(core, "/sitemap-p-1.xml")
    assert page_urls(check_document(body)) == [
        "https://example.com/p/tea",
        "https://example.com/p/coffee",
    ]
    (message,) = [r.getMessage() for r in caplog.records if "skipping" in r.getMessage()]
    assert "'p'" in message and "to_entry" in message and "'slug': None" in message
    assert "TypeError" in message


@asyncio_only
async def test_directory_provider_through_the_core(tmp_path: Path) -> None:
    """A docs tree serves as a valid sitemap section."""
    (tmp_path / "a.html").write_text("x")
    core = make_core({"docs": DirectoryProvider(tmp_path)})
    _, body = await fetch(core, "/sitemap-docs-1.xml")
    assert page_urls(check_document(body)) == ["https://example.com/a.html"]


def _ok(request: Any) -> PlainTextResponse:
    return PlainTextResponse("ok")


async def test_starlette_routes_provider_lists_parameterless_get_routes() -> None:
    """GET routes without parameters, mounts included; include/exclude filter them."""
    app = Starlette(
        routes=[
            Route("/", _ok),
            Route("/about", _ok),
            Route("/items/{id}", _ok),
            Route("/submit", _ok, methods=["POST"]),
            Route("/hidden", _ok, include_in_schema=False),
            Route("/admin/panel", _ok),
            Mount("/blog", routes=[Route("/", _ok), Route("/{slug}", _ok)]),
            Mount("/{lang}", routes=[Route("/x", _ok)]),
        ]
    )
    provider = StarletteRoutesProvider(app, exclude=("/admin*",))
    assert await _collect(provider) == ["/", "/about", "/blog/"]
    assert await provider.count() == 3
    assert (await provider.version()).token == (
        await StarletteRoutesProvider(app, exclude=("/admin*",)).version()
    ).token
    only = StarletteRoutesProvider(
        Router(routes=[Route("/a", _ok), Route("/b", _ok)]), include=("/a",)
    )
    assert await _collect(only) == ["/a"]


async def test_fastapi_routes_skip_docs() -> None:
    """FastAPI's own /docs and /openapi.json (not in schema) are left out."""
    from fastapi import FastAPI

    api = FastAPI()

    @api.get("/items")
    def items() -> list[int]:
        return []

    @api.get("/items/{item_id}")
    def item(item_id: int) -> int:
        return item_id

    assert await _collect(StarletteRoutesProvider(api)) == ["/items"]


async def test_flask_routes_provider() -> None:
    """Argument-free GET rules of a Flask app, without the static endpoint."""
    app = Flask(__name__)

    @app.get("/")
    def home() -> str:
        return ""

    @app.get("/user/<name>")
    def user(name: str) -> str:
        return name

    @app.post("/form")
    def form() -> str:
        return ""

    @app.get("/admin")
    def admin() -> str:
        return ""

    assert await _collect(FlaskRoutesProvider(app, exclude=("/admin",))) == ["/"]


async def test_slow_sync_iterables_are_read_in_hops_of_sync_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each worker-thread hop is one call timed by provider_timeout: rows that come
    slowly (0.1 ms each, on the hops' clock) cross SYNC_BATCH at a time, so a slow row
    source is bound per 1,000 rows, not per 16,000."""
    from sitemap_middleware._providers import base

    now = [0.0]
    monkeypatch.setattr(base, "_now", lambda: now[0])

    def rows() -> Iterator[str]:
        for i in range(10_500):
            now[0] += 0.0001
            yield f"/p/{i}"

    sizes = [len(batch) async for batch in base.CallableProvider(rows).batches()]
    assert sizes == [base.SYNC_BATCH] * 10 + [500]


async def test_quick_sync_iterables_are_read_in_few_hops(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows that come at once (no time passes on the hops' clock) cross MAX_SYNC_BATCH at
    a time; a hop that turns slow stops at the next SYNC_STEP; no row is lost."""
    from sitemap_middleware._providers import base

    now = [0.0]
    monkeypatch.setattr(base, "_now", lambda: now[0])

    def rows() -> Iterator[str]:
        for i in range(40_500):
            if i == 33_000:
                now[0] += 1.0  # from here on, the third hop is slow
            yield f"/p/{i}"

    batches = [batch async for batch in base.CallableProvider(rows).batches()]
    sizes = [len(batch) for batch in batches]
    assert sizes == [base.MAX_SYNC_BATCH] * 2 + [1000 + base.SYNC_STEP, 40_500 - 33_250]
    assert [row for batch in batches for row in batch] == [f"/p/{i}" for i in range(40_500)]


async def test_generator_functions_are_called_without_a_hop_and_run_in_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Making a generator runs none of its code: no worker-thread hop for the call. Its
    body (a blocking query, say) still runs in worker threads, never on the event loop."""
    import threading

    from sitemap_middleware._providers import base
    from sitemap_middleware._providers.threads import WorkerThreads

    loop_thread = threading.get_ident()
    ran_in: list[int] = []
    hops: list[str] = []
    real_run = WorkerThreads.run

    async def counted(self: WorkerThreads, func: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(func.__name__)
        return await real_run(self, func, *args, **kwargs)

    monkeypatch.setattr(WorkerThreads, "run", counted)

    def rows() -> Iterator[str]:
        ran_in.append(threading.get_ident())
        yield from ("/a", "/b")

    class Rows:
        def __call__(self) -> Iterator[str]:
            ran_in.append(threading.get_ident())
            yield "/c"

    def listed() -> list[str]:  # a plain function may block: called in a worker thread
        ran_in.append(threading.get_ident())
        return ["/d"]

    assert [b async for b in base.CallableProvider(rows).batches()] == [["/a", "/b"]]
    assert [b async for b in base.CallableProvider(Rows()).batches()] == [["/c"]]
    assert hops == ["_take"] * 4  # two hops each: the rows, then the end
    assert [b async for b in base.CallableProvider(listed).batches()] == [["/d"]]
    assert hops[4:] == ["listed"]
    assert loop_thread not in ran_in and len(ran_in) == 3
