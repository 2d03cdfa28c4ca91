"""`check` for a person, in process: a line per document (and at each tenth of the listed
URLs without a terminal), words where a stream cannot encode the marks, when to colour,
and the summary table (on real sockets and terminals: tests/integration/ops/test_check_terminal.py)."""

from __future__ import annotations

import io
import json

import pytest

from sitemap_middleware._ops.terminal import DocumentLines, Paint, use_colour


def table(stdout: str) -> dict[str, str]:
    """The summary table's rows: name -> the rest of the row."""
    lines = stdout.splitlines()
    rows = lines[lines.index("summary") + 1 : -1]
    return {row[2:16].strip(): row[16:].strip() for row in rows}


def test_the_table_counts_findings_by_severity_and_code(capsys: pytest.CaptureFixture[str]) -> None:
    """`check --app` on the self-check app: its four errors and one warning, per code."""
    from sitemap_middleware.__main__ import main

    app = ["check", "--app", "tests.sites.checked_sites:selfcheck_asgi", "--no-http-checks"]
    for argv in (app, [*app, "--json"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 1
    text, data = capsys.readouterr().out.split("\n{", 1)
    summary = json.loads("{" + data)["summary"]
    rows = table(text)
    assert rows["documents"] == "2  robots.txt 1, urlset 1"
    assert rows["URLs listed"] == rows["URLs fetched"] == "7" == str(summary["urls_checked"])
    errors = "4  url-noindex 2, url-redirect 1, url-not-found 1"
    assert rows["errors"] == errors and summary["errors"] == 4
    assert rows["warnings"] == "1  url-canonical-elsewhere 1" and summary["warnings"] == 1
    assert rows["requests"] == str(summary["requests"])
    assert "hint: listed URLs answer 404: list only pages the app serves" in text


def test_many_listed_urls_get_a_line_at_each_tenth_without_a_terminal() -> None:
    stream = io.StringIO()
    lines = DocumentLines(stream, "https://example.com/", Paint(False))
    lines.listed_urls(2_000)
    for _ in range(2_000):
        lines.advance()
    said = stream.getvalue().splitlines()
    assert said[0] == "fetching 2,000 listed URLs…"
    assert said[1:] == [f"  fetched {n * 200:,} of 2,000 listed URLs" for n in range(1, 11)]


def test_a_stream_that_cannot_encode_the_marks_gets_words() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert DocumentLines(stream, "https://example.com/", Paint(False)).marks == (
        "ok",
        "FAIL",
        "warn",
        "...",
    )


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("tty", "plain", "environ", "expected"),
    [
        (True, False, {}, True),
        (False, False, {}, False),
        (True, True, {}, False),  # --json, --github
        (True, False, {"NO_COLOR": "1"}, False),
        (True, False, {"NO_COLOR": ""}, True),  # no-color.org: set and not empty
        (False, False, {"FORCE_COLOR": "1"}, True),
        (False, False, {"FORCE_COLOR": "0"}, False),
        (True, False, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
        (False, True, {"FORCE_COLOR": "1"}, False),
        (True, False, {"TERM": "dumb"}, False),
    ],
)
def test_when_to_colour(tty: bool, plain: bool, environ: dict[str, str], expected: bool) -> None:
    assert use_colour(_Stream(tty), plain=plain, environ=environ) is expected
