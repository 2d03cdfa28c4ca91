"""Section plans kept in files (``Renders(plan_directory=...)``): what a restart reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware._caches.file_plans import FilePlanStore

pytestmark = pytest.mark.anyio


async def test_a_plan_saved_is_read_back_by_another_store_on_the_folder(tmp_path: Path) -> None:
    """A second store on the same folder (a restarted process) reads what the first saved;
    the folder is made when missing; a key never saved is None."""
    folder = tmp_path / "plans" / "deeper"
    await FilePlanStore(folder).save_plan("plan|f|https://example.com|items", b"{}", 3600)
    again = FilePlanStore(folder)
    assert await again.plan("plan|f|https://example.com|items") == b"{}"
    assert await again.plan("plan|f|https://example.com|other") is None


async def test_a_plan_past_its_keep_is_gone(tmp_path: Path) -> None:
    store = FilePlanStore(tmp_path)
    await store.save_plan("k", b"data", 0)
    assert await store.plan("k") is None


async def test_a_damaged_or_unreadable_file_is_no_plan(tmp_path: Path) -> None:
    """What is not a file this store wrote (cut short, foreign, a folder) reads as None:
    the section is planned again."""
    store = FilePlanStore(tmp_path)
    await store.save_plan("k", b"data", 3600)
    (path,) = [p for p in tmp_path.iterdir() if p.is_file()]
    path.write_bytes(b"not a header")
    assert await store.plan("k") is None
    path.unlink()
    path.mkdir()
    assert await store.plan("k") is None


async def test_saving_leaves_no_partial_file(tmp_path: Path) -> None:
    """A plan is written under a temporary name and renamed: a reader (another process)
    sees the old file or the new one, never half of one; nothing else is left behind."""
    store = FilePlanStore(tmp_path)
    await store.save_plan("k", b"one", 3600)
    await store.save_plan("k", b"two" * 1000, 3600)
    assert await store.plan("k") == b"two" * 1000
    assert len(os.listdir(tmp_path)) == 1


async def test_a_folder_that_cannot_be_written_is_a_store_error(tmp_path: Path) -> None:
    """Saving fails loudly (the engine logs a failing store call and goes on without it)."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OSError):
        await FilePlanStore(blocker / "plans").save_plan("k", b"x", 60)


@settings(max_examples=30, deadline=None)
@given(keys=st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5, unique=True))
def test_any_keys_map_to_their_own_files(
    tmp_path_factory: pytest.TempPathFactory, keys: list[str]
) -> None:
    """Keys name files by digest: any text (slashes, dots, NUL) is a safe name, and two
    keys never share a file."""
    import anyio

    folder = tmp_path_factory.mktemp("plans")

    async def check() -> None:
        store = FilePlanStore(folder)
        for i, key in enumerate(keys):
            await store.save_plan(key, str(i).encode(), 3600)
        assert [await store.plan(key) for key in keys] == [
            str(i).encode() for i in range(len(keys))
        ]

    anyio.run(check)


async def test_a_plan_folder_that_cannot_be_written_leaves_the_render_store_alone(
    tmp_path: Path,
) -> None:
    """A plan folder failing (read-only, disk full) costs the plans a restart would read,
    nothing else: the render store (in memory, never failing) still stamps Last-Modified
    and keeps renders, as it does with a folder that works."""
    from sitemap_middleware import Renders, SitemapConfig
    from sitemap_middleware._engine.core import SitemapCore
    from tests.harness.core import fetch, header

    blocker = tmp_path / "file"
    blocker.write_text("")

    async def served(folder: Path) -> list[tuple[int, bool]]:
        config = SitemapConfig(
            base_url="https://example.com",
            sections={"a": ["/x", "/y"]},
            renders=Renders(etag="content", plan_directory=folder),
        )
        core = SitemapCore(config)
        out = []
        for _ in range(2):
            for path in ("/sitemap_index.xml", "/sitemap-a-1.xml"):
                reply, _ = await fetch(core, path)
                out.append((reply.status, header(reply, "last-modified") is not None))
        await core.aclose()
        return out

    assert await served(blocker / "plans") == await served(tmp_path / "plans")


#: What the location function below calls: a deploy may change it, not the function.
_PREFIX = {"value": "/a"}


def _url_of(slug: str) -> str:
    return f"{_PREFIX['value']}/{slug}"


async def test_a_kept_plan_that_outgrows_its_pages_after_a_deploy_is_planned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The location function calls a helper whose code a deploy changed (longer URLs):
    the provider's version (rows, settings, the function's own code) is the same, so the
    restarted process reads the plan kept in the folder. Its pages outgrow the budget;
    the plan is then made again, and the next crawl lists every URL, each once."""
    import sqlite3

    from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine

    from sitemap_middleware import Renders, Section, SitemapConfig
    from sitemap_middleware._engine.core import SitemapCore
    from sitemap_middleware.providers import SQLAlchemyProvider
    from tests.harness.core import fetch
    from tests.harness.documents import check_document, child_urls, page_urls

    with sqlite3.connect(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, slug TEXT NOT NULL)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"s{i}") for i in range(1, 601)])
    db.close()
    table = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String))
    engine = create_engine(f"sqlite:///{tmp_path / 'db'}")

    def started() -> SitemapCore:
        provider = SQLAlchemyProvider(engine, table, key="id", location=lambda row: _url_of(row[1]))
        return SitemapCore(
            SitemapConfig(
                base_url="https://example.com",
                max_bytes_per_page=8000,
                sections={"t": Section(provider)},
                renders=Renders(plan_directory=tmp_path / "plans"),
            )
        )

    async def crawl(core: SitemapCore) -> list[str]:
        _, index = await fetch(core, "/sitemap_index.xml")
        urls: list[str] = []
        for child in child_urls(check_document(index)):
            reply, body = await fetch(core, child.removeprefix("https://example.com"))
            assert reply.status == 200 and len(body) <= 8000
            urls.extend(page_urls(check_document(body)))
        return urls

    try:
        assert len(await crawl(started())) == 600
        monkeypatch.setitem(_PREFIX, "value", "/a-much-longer-prefix-after-the-deploy/en")
        restarted = started()
        await crawl(restarted)  # pages from the kept plan: what fits of each
        urls = await crawl(restarted)
        assert len(urls) == len(set(urls)) == 600
    finally:
        engine.dispose()
