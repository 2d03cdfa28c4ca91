"""Logging has one home, ``_logs.py``: one logger, said once (ARCHITECTURE.md).

Users configure the ``sitemap_middleware`` logger by name (docs, *Logs and metrics*): every
module logs through the one object ``_logs`` creates, so no module can drift to another
name, and the helpers that keep a recurring problem from flooding the log live there.
"""

from __future__ import annotations

import importlib
import logging
import re
from pathlib import Path

import pytest

from sitemap_middleware import _logs
from sitemap_middleware._engine.observe import tell_observers
from sitemap_middleware._logs import OncePerContent, report_once

PACKAGE = Path(_logs.__file__).resolve().parent
ROOT = PACKAGE.parent


def test_the_logger_is_the_documented_one() -> None:
    assert _logs.LOGGER_NAME == "sitemap_middleware"
    assert _logs.logger is logging.getLogger("sitemap_middleware")
    docs = (ROOT / "docs" / "how-to" / "operations.md").read_text(encoding="utf-8")
    assert f'logging.getLogger("{_logs.LOGGER_NAME}")' in docs


def test_no_module_but_logs_makes_a_logger() -> None:
    """Every module logs through ``_logs.logger``: none asks ``logging`` for its own."""
    making = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "_logs.py"
        and re.search(r"getLogger\(|\bLoggerAdapter\(", path.read_text(encoding="utf-8"))
    )
    assert making == []


@pytest.mark.parametrize(
    "module",
    [
        "sitemap_middleware._engine.core",
        "sitemap_middleware._engine.plan_memo",
        "sitemap_middleware._providers.sql_reads",
        "sitemap_middleware._ops.indexnow",
        "sitemap_middleware._adapters.asgi",
    ],
)
def test_modules_log_through_the_one_logger(module: str) -> None:
    assert importlib.import_module(module).logger is _logs.logger


def test_report_once_says_a_section_problem_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_logs, "_REPORTED", set())
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        for _ in range(3):
            report_once("news", "alternates", "lists alternates but not itself")
        report_once("news", "django priority", "priority 7 left out")
        report_once("pages", "alternates", "lists alternates but not itself")
    assert [r.getMessage() for r in caplog.records] == [
        "sitemap section 'news': lists alternates but not itself (reported once per section)",
        "sitemap section 'news': priority 7 left out (reported once per section)",
        "sitemap section 'pages': lists alternates but not itself (reported once per section)",
    ]


def test_once_per_content_says_what_changed_again() -> None:
    said = OncePerContent(size=2)
    assert said.is_new("a", "v1|3")
    assert not said.is_new("a", "v1|3")
    assert said.is_new("a", "v2|3")  # new content: news
    said.forget("a")  # the problem went away ...
    assert said.is_new("a", "v2|3")  # ... so its return is news


def test_once_per_content_forgets_the_least_recently_said_first() -> None:
    said = OncePerContent(size=2)
    for name in ("a", "b", "c"):
        assert said.is_new(name, "x")
    assert said.is_new("a", "x")  # "a" was forgotten to keep two names
    assert not said.is_new("c", "x")


def test_a_failing_observer_is_logged_and_the_others_are_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    told: list[tuple[str, int]] = []

    class Broken:
        def __repr__(self) -> str:
            return "Broken()"

        def lastmods_held(self, section: str, count: int) -> None:
            raise RuntimeError("metrics backend down")

    class Counting:
        def lastmods_held(self, section: str, count: int) -> None:
            told.append((section, count))

    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        tell_observers([Broken(), object(), Counting()], "lastmods_held", "news", 3)
    assert told == [("news", 3)]
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "sitemap observer Broken() failed: RuntimeError: metrics backend down")
    ]
