"""SQLAlchemy push on commit: a model's inserts, updates and deletes reach a local IndexNow
endpoint (tests/sites/indexnow_server.py) in the background, batched; a rollback sends
nothing; an endpoint failure is logged, never raised; AsyncSession's sync events fire."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from sqlalchemy import String, create_engine
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from sitemap_middleware import ConfigurationError, SitemapConfig
from sitemap_middleware.ops import IndexNowNotifier, notify_on_commit
from tests.harness.ports import bound_socket
from tests.harness.servers import serve, serve_uvicorn
from tests.sites.indexnow_server import IndexNowEndpoint

KEY = "0123456789abcdef-sqla"
Local = tuple[IndexNowEndpoint, Callable[[], IndexNowNotifier], str]


class Base(DeclarativeBase):
    pass


class Post(Base):
    __tablename__ = "posts"
    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(50))


class Other(Base):
    __tablename__ = "others"
    id: Mapped[int] = mapped_column(primary_key=True)


@pytest.fixture(scope="module")
def site() -> Iterator[SitemapConfig]:
    """Our middleware on real uvicorn, serving the IndexNow key file the endpoint checks."""
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = SitemapConfig(base_url=base, sections={"p": ["/"]}, indexnow_key=KEY)
    with serve("uvicorn", config, sock):
        yield config


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[IndexNowEndpoint, str]]:
    state = IndexNowEndpoint()
    with serve_uvicorn(state.app(), bound_socket()) as url:
        yield state, url + "/indexnow"


@pytest.fixture
def local(
    site: SitemapConfig, endpoint: tuple[IndexNowEndpoint, str]
) -> Iterator[tuple[IndexNowEndpoint, Callable[[], IndexNowNotifier], str]]:
    state, url = endpoint
    state.received.clear()
    state.answers.clear()
    state.fail = 0

    def notifier() -> IndexNowNotifier:
        return IndexNowNotifier.for_config(site, endpoint=url, retries=0, backoff=0.01, timeout=5.0)

    yield state, notifier, site.base_url


def _urls(state: IndexNowEndpoint) -> list[list[str]]:
    return [body["urlList"] for body in state.received]


@pytest.fixture
def maker() -> Iterator[sessionmaker[Session]]:
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    yield sessionmaker(engine)
    engine.dispose()


def test_a_commit_pushes_inserts_updates_and_deletes(
    local: Local, maker: sessionmaker[Session]
) -> None:
    state, notifier, base = local
    push = notify_on_commit(maker, notifier(), model=Post, location="/posts/{slug}/")
    try:
        with maker() as session:
            session.add_all([Post(slug="a"), Post(slug="b"), Other()])
            session.commit()
            assert push.flush(10)
            assert _urls(state) == [[f"{base}/posts/a/", f"{base}/posts/b/"]]
            post = session.get(Post, 1)
            assert post is not None
            post.slug = "c"
            session.delete(session.get(Post, 2))
            session.commit()
        assert push.flush(10)
        assert sorted(_urls(state)[1]) == [f"{base}/posts/b/", f"{base}/posts/c/"]
    finally:
        assert push.close(10)


def test_a_rollback_sends_nothing(local: Local, maker: sessionmaker[Session]) -> None:
    state, notifier, base = local
    push = notify_on_commit(maker, notifier(), model=Post, location=lambda p: f"/p/{p.slug}")
    try:
        with maker() as session:
            session.add(Post(slug="gone"))
            session.flush()  # after_flush collected it ...
            session.rollback()  # ... and the rollback drops it
            session.add(Post(slug="kept"))
            session.commit()
        assert push.flush(10)
        assert _urls(state) == [[f"{base}/p/kept"]]
    finally:
        push.close(10)


def test_a_savepoint_rollback_drops_only_what_the_savepoint_wrote(
    local: Local, maker: sessionmaker[Session]
) -> None:
    """SQLAlchemy fires after_rollback for a savepoint too: the enclosing transaction's
    committed writes (and a released savepoint's) are still pushed."""
    state, notifier, base = local
    push = notify_on_commit(maker, notifier(), model=Post, location=lambda p: f"/p/{p.slug}")
    try:
        with maker() as session:
            session.add(Post(slug="outer"))
            session.flush()
            with session.begin_nested():
                session.add(Post(slug="released"))
            savepoint = session.begin_nested()
            session.add(Post(slug="rolled-back"))
            session.flush()
            with session.begin_nested():
                session.add(Post(slug="inside-rolled-back"))
            savepoint.rollback()
            session.commit()
        assert push.flush(10)
        assert sorted(_urls(state)[0]) == [f"{base}/p/outer", f"{base}/p/released"]
    finally:
        push.close(10)


def test_a_released_savepoint_is_not_pushed_before_the_outer_commit(
    local: Local, maker: sessionmaker[Session]
) -> None:
    """SQLAlchemy fires after_commit for a released savepoint: nothing is queued until
    the outermost transaction commits, and an outer rollback drops the savepoint's."""
    state, notifier, base = local
    push = notify_on_commit(maker, notifier(), model=Post, location=lambda p: f"/p/{p.slug}")
    try:
        with maker() as session:
            session.add(Post(slug="outer"))
            session.flush()
            with session.begin_nested():
                session.add(Post(slug="released"))
            session.rollback()
            session.add(Post(slug="committed"))
            session.commit()
        assert push.flush(10)
        assert _urls(state) == [[f"{base}/p/committed"]]
    finally:
        push.close(10)


def test_a_session_closed_without_commit_sends_nothing(
    local: Local, maker: sessionmaker[Session]
) -> None:
    """A flush whose transaction is abandoned (close(), no commit) is not pushed by the
    session's next commit."""
    state, notifier, base = local
    push = notify_on_commit(maker, notifier(), model=Post, location=lambda p: f"/p/{p.slug}")
    try:
        session = maker()
        session.add(Post(slug="abandoned"))
        session.flush()
        session.close()
        session.add(Post(slug="committed"))
        session.commit()
        session.close()
        assert push.flush(10)
        assert _urls(state) == [[f"{base}/p/committed"]]
    finally:
        push.close(10)


def test_a_burst_is_one_batch_sent_after_the_commits(
    local: Local, maker: sessionmaker[Session]
) -> None:
    state, notifier, base = local
    push = notify_on_commit(maker, notifier(), model=Post, location="/{slug}", delay=0.5)
    try:
        for n in range(20):
            with maker() as session:
                session.add(Post(slug=f"s{n}"))
                session.commit()
        assert state.received == []  # nothing inside the commits: the thread waits
        assert push.flush(10)
        assert _urls(state) == [[f"{base}/s{n}" for n in range(20)]]
    finally:
        push.close(10)


def test_an_endpoint_failure_is_logged_not_raised(
    local: Local, maker: sessionmaker[Session], caplog: pytest.LogCaptureFixture
) -> None:
    state, notifier, base = local
    state.fail = 1
    push = notify_on_commit(maker, notifier(), model=Post, location="/{slug}", delay=0)
    try:
        with caplog.at_level("WARNING", logger="sitemap_middleware"), maker() as session:
            session.add(Post(slug="x"))
            session.commit()  # returns: the failure is the thread's
            assert push.flush(10)
        assert state.answers == [500]
        assert "500" in caplog.text
    finally:
        push.close(10)


def test_a_single_session_and_disconnect(local: Local, maker: sessionmaker[Session]) -> None:
    state, notifier, base = local
    with maker() as session:
        push = notify_on_commit(session, notifier(), model=Post, location="/{slug}")
        session.add(Post(slug="one"))
        session.commit()
        assert push.flush(10)
        push.disconnect()
        session.add(Post(slug="two"))
        session.commit()
        assert push.close(10)
    assert _urls(state) == [[f"{base}/one"]]


def test_async_sessions_push_through_their_sync_session(local: Local, tmp_path: Any) -> None:
    state, notifier, base = local

    async def main() -> None:
        engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}")
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        maker = async_sessionmaker(engine, class_=AsyncSession)
        push = notify_on_commit(maker, notifier(), model=Post, location="/{slug}")
        async with maker() as session:
            session.add(Post(slug="async"))
            await session.commit()
            session.add(Post(slug="rolled-back"))
            await session.flush()
            await session.rollback()
        async with maker() as session:  # one AsyncSession alone
            own = notify_on_commit(session, notifier(), model=Post, location="/own/{slug}")
            session.add(Post(slug="b"))
            await session.commit()
        await engine.dispose()
        assert push.flush(10) and own.flush(10)
        push.close(10)
        own.close(10)

    anyio.run(main)
    assert sorted(u for batch in _urls(state) for u in batch) == [
        f"{base}/async",
        f"{base}/b",
        f"{base}/own/b",
    ]


def test_bad_arguments_fail_at_connect(maker: sessionmaker[Session]) -> None:
    notifier = IndexNowNotifier.for_config(
        SitemapConfig(base_url="https://e.com", sections={"p": ["/"]}, indexnow_key=KEY)
    )
    with pytest.raises(ConfigurationError, match="takes a Session"):
        notify_on_commit(object(), notifier, model=Post, location="/{slug}")
    with pytest.raises(ConfigurationError, match="no attribute 'nope'"):
        notify_on_commit(maker, notifier, model=Post, location="/{nope}")
    with pytest.raises(ConfigurationError, match="delay"):
        notify_on_commit(maker, notifier, model=Post, location="/{slug}", delay=-1)
