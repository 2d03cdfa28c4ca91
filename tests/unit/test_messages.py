"""Messages a newcomer can act on: each names what is wrong and what to write instead
(the first ones met included: a shadowed ``--app`` module, a store's refusal, and
``manage.py sitemap``'s help)."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware import ConfigurationError, InvalidEntryError, SitemapConfig, SitemapEntry
from sitemap_middleware._ops.apps import load_app
from sitemap_middleware._ops.store_sink import store_error
from sitemap_middleware.providers import StaticProvider
from tests.harness.core import fetch, make_core

ROOT = Path(__file__).resolve().parents[2]


def test_a_relative_path_without_a_slash_says_paths_start_with_a_slash() -> None:
    """SitemapEntry("about") explains that a path must start with '/'."""
    with pytest.raises(InvalidEntryError, match=r"starts with '/'.*write '/about'"):
        SitemapEntry("about")


@pytest.mark.parametrize(
    "base_url", ["https://example.com/sitemap.xml", "https://example.com/shop/index.html"]
)
def test_a_base_url_that_names_a_document_is_refused_with_a_hint(base_url: str) -> None:
    """base_url is the site's root (or the prefix it is mounted at), not a file."""
    with pytest.raises(ConfigurationError, match=r"names a file.*base_url="):
        SitemapConfig(base_url=base_url, sections={"pages": ["/"]})


def test_a_bad_item_in_a_static_provider_is_named_by_position() -> None:
    """StaticProvider([...]) says which item is bad (its position and value)."""
    with pytest.raises(InvalidEntryError, match=r"StaticProvider item 1 \(5\)"):
        StaticProvider(["/", 5, "/x"])  # type: ignore[list-item]


@pytest.mark.anyio
async def test_invalid_entry_log_lines_name_the_entry(caplog: pytest.LogCaptureFixture) -> None:
    """A skipped entry's log line names its loc, not only the bad value."""

    async def entries() -> AsyncIterator[object]:
        yield {"loc": "/ok"}
        yield {"loc": "/widgets/7", "priority": 7}
        yield SitemapEntry("/fine")

    core = make_core({"p": entries})
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200 and b"/fine" in body
    lines = [r.getMessage() for r in caplog.records if "skipping invalid entry" in r.getMessage()]
    assert lines and "'/widgets/7'" in lines[0] and "priority 7" in lines[0], lines


@pytest.mark.parametrize(
    ("module", "code", "extra"),
    [
        ("sqlalchemy", "from sitemap_middleware.providers import SQLAlchemyProvider", "sql"),
        ("uvicorn", "from sitemap_middleware.demo.serve import run; run(['--help'])", "demo"),
    ],
)
def test_a_missing_extra_says_which_to_install(module: str, code: str, extra: str) -> None:
    """Without the package an extra brings, the error names the extra to install."""
    blocker = f"import sys; sys.modules[{module!r}] = None; "
    done = subprocess.run(
        [sys.executable, "-c", blocker + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode != 0
    assert f"sitemap-middleware[{extra}]" in done.stderr, done.stderr[-2000:]


class BareKeyed:
    """keyed() yields bare entries instead of (key, entry) pairs."""

    async def count(self) -> int:
        return 3

    async def entries(self) -> AsyncIterator[str]:
        for i in range(3):
            yield f"/{i}"

    async def keyed(self, after: object, upto: object) -> AsyncIterator[str]:
        for i in range(3):
            yield f"/{i}"


class NoPageDates:
    """page_last_modified() returns None instead of a list."""

    async def entries(self) -> AsyncIterator[str]:
        for i in range(3):
            yield f"/{i}"

    async def page_last_modified(self, page_size: int) -> None:
        return None


class RaisingSyncVersion:
    """A plain ``def version()`` that raises as it is called (a failing sync query)."""

    async def entries(self) -> AsyncIterator[str]:
        for i in range(3):
            yield f"/{i}"

    def version(self) -> Any:
        raise RuntimeError("version() database went away")


class RaisingSyncPageDates(NoPageDates):
    def page_last_modified(self, page_size: int) -> Any:
        raise RuntimeError("page_last_modified() database went away")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("provider", "capability"),
    [
        (BareKeyed(), "keyed()"),
        (NoPageDates(), "page_last_modified()"),
        (RaisingSyncVersion(), "version()"),
        (RaisingSyncPageDates(), "page_last_modified()"),
    ],
    ids=["keyed-bare-entries", "page_last_modified-none", "version-raises", "dates-raise"],
)
async def test_a_malformed_capability_answers_503_naming_it(
    provider: Any, capability: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A capability returning the wrong shape fails its section (503, the index leaves it
    out) with a message naming the capability and the value; the other sections serve."""
    core = make_core({"p": provider, "ok": ["/fine"]})
    with caplog.at_level(logging.ERROR, logger="sitemap_middleware"):
        index, body = await fetch(core, "/sitemap_index.xml")
        page, _ = await fetch(core, "/sitemap-p-1.xml")
    assert index.status == 200 and b"sitemap-ok-1.xml" in body
    assert dict(index.headers).get("Sitemap-Sections-Failed") == "p"
    assert page.status in (404, 503)  # never a 500
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert capability in logged, logged


def test_an_sql_provider_given_a_url_instead_of_an_engine_says_so() -> None:
    """A newcomer's mistake: the URL string, not an engine (was AttributeError: 'str'
    object has no attribute 'dialect')."""
    pytest.importorskip("sqlalchemy")
    from sqlalchemy import Column, Integer, MetaData, String, Table

    from sitemap_middleware import ConfigurationError
    from sitemap_middleware.providers import SQLAlchemyProvider

    table = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String))
    with pytest.raises(ConfigurationError, match="engine must be a SQLAlchemy engine.*create_"):
        SQLAlchemyProvider("sqlite:///shop.sqlite3", table, key="id", location="/{slug}")  # type: ignore[arg-type]


# What obstore raised for a PUT into a bucket that does not exist (moto; S3 says the same).
NO_SUCH_BUCKET = (
    "Object at location site/sitemap.xml not found: Error performing PUT "
    "http://127.0.0.1:5055/my-bucket/site/sitemap.xml in 3.6ms - Server returned non-2xx "
    'status code: 404 Not Found: <?xml version="1.0" encoding="utf-8"?>\n'
    "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message>"
    "<BucketName>my-bucket</BucketName></Error>\n\nDebug source:\nNotFound {\n    path: ..."
)


def test_a_store_error_names_the_services_code_and_message() -> None:
    """It said only `... 404 Not Found: <?xml version="1.0" encoding="utf-8"?>`: the cause
    was on the next line, which was cut."""
    said = store_error(FileNotFoundError(NO_SUCH_BUCKET))
    assert said.endswith("404 Not Found: NoSuchBucket: The specified bucket does not exist")
    assert "\n" not in said and "<" not in said and "Debug source" not in said


def test_a_store_error_without_a_body_is_its_first_line() -> None:
    said = store_error(OSError("Generic S3 error: builder error\n\nDebug source:\nGeneric {"))
    assert said == "Generic S3 error: builder error"


def test_an_app_module_shadowed_by_pythons_own_says_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--app site:app` with a site.py in the current directory imported Python's own
    `site` module and said only "'site' has no attribute 'app'"."""
    (tmp_path / "site.py").write_text("app = None\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"imported from .*site\.py: is your file shadowed"):
        load_app("site:app")


def test_a_local_module_without_the_app_names_no_other_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "newcomer_local_app.py").write_text("application = None\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError) as raised:
        load_app("newcomer_local_app:app")
    assert str(raised.value).endswith("'newcomer_local_app' has no attribute 'app'")


def test_manage_py_sitemaps_help_names_every_command() -> None:
    """Its help said `check|export|notify`, leaving out explain."""
    pytest.importorskip("django")
    from sitemap_middleware._django.command import COMMANDS
    from sitemap_middleware.django.management.commands.sitemap import Command

    parser = Command().create_parser("manage.py", "sitemap")
    text = parser.format_help()
    assert "|".join(COMMANDS) in text
    for command in COMMANDS:
        assert command in Command.help
