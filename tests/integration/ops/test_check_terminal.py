"""`check` for a person: a line per document on stderr as the crawl goes, colour only on a
terminal (never with NO_COLOR or --json, always with FORCE_COLOR), a hint per common
failure (on real sockets: a closed port, a server too slow, TLS to a plain server), and the
summary table closing the text report."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import socket
import ssl
import subprocess
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import httpx
import pytest
from starlette.applications import Starlette

from sitemap_middleware._ops.apps import client_for_app
from sitemap_middleware._ops.check import CheckOptions, run_check
from sitemap_middleware._ops.fetch import Fetcher, failure_kind
from sitemap_middleware._ops.findings import CheckReport
from sitemap_middleware._ops.hints import HintContext, hints
from sitemap_middleware._ops.terminal import DocumentLines, Paint, use_colour
from tests.harness.core import make_config
from tests.harness.ports import bound_socket
from tests.harness.servers import serve
from tests.integration.ops.test_check import hostile
from tests.sites.checked_sites import clean_sections

if sys.version_info < (3, 11):
    from exceptiongroup import ExceptionGroup

ROOT = Path(__file__).resolve().parents[3]
#: The SGR parameters that set a colour (foreground, background, bright).
COLOUR_PARAMETERS = re.compile(r"^(3[0-8]|4[0-8]|9[0-7]|10[0-7])$")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return {**env, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", "TERM": "xterm", **extra}


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`sitemap-middleware check ARGS`, its output to pipes (as in CI)."""
    return subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "check", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_env(**env),
        timeout=120,
        cwd=ROOT,
    )


def run_on_terminal(*args: str, **env: str) -> str:
    """The same with stdout and stderr on a pseudo-terminal: all it wrote there."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "sitemap_middleware", "check", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=_env(**env),
        cwd=ROOT,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the process is gone and the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    process.wait(60)
    return b"".join(chunks).decode("utf-8", "replace")


def colours(text: str) -> set[str]:
    """The colour parameters of every SGR sequence in ``text``."""
    found = set()
    for sequence in re.findall(r"\x1b\[([0-9;]*)m", text):
        found |= {p for p in sequence.split(";") if COLOUR_PARAMETERS.match(p)}
    return found


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def table(stdout: str) -> dict[str, str]:
    """The summary table's rows: name -> the rest of the row."""
    lines = stdout.splitlines()
    rows = lines[lines.index("summary") + 1 : -1]
    return {row[2:16].strip(): row[16:].strip() for row in rows}


# -- progress and the table ---------------------------------------------------------------


def test_a_line_per_document_in_crawl_order_then_the_table() -> None:
    """robots.txt, then the index, then its three sitemaps (in any order: fetched at
    once), each with what it held; the table counts what the JSON counts."""
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = make_config(clean_sections(base), base_url=base, max_urls_per_page=1000)
    with serve("uvicorn", config, sock) as url:
        done = run(url + "/", "--rate", "0")
        as_json = run(url + "/", "--rate", "0", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "✓ /robots.txt  robots.txt, 1 Sitemap: line"
    assert re.fullmatch(r"✓ /sitemap\.xml  index of 3 sitemaps, \d+ bytes", lines[1]), lines
    pages = sorted(line.split("  ")[0] for line in lines[2:])
    assert pages == [
        "✓ /sitemap-pages-1.xml",
        "✓ /sitemap-products-1.xml",
        "✓ /sitemap-products-2.xml",
    ], lines
    assert "urlset, 1,000 URLs, " in done.stderr and "urlset, 6 URLs, " in done.stderr
    assert "\x1b" not in done.stdout + done.stderr  # pipes: no colour
    summary = json.loads(as_json.stdout)["summary"]
    rows = table(done.stdout)
    assert rows["documents"] == f"{summary['documents']}  robots.txt 1, index 1, urlset 3"
    assert rows["URLs listed"] == f"{summary['urls']:,}" == "1,506"
    assert rows["URLs fetched"] == "0" and rows["errors"] == rows["warnings"] == "0"
    assert rows["requests"] == str(summary["requests"])
    assert re.fullmatch(r"\d+\.\d s", rows["time"]), rows
    assert done.stdout.splitlines()[-1].startswith("OK: 5 documents, 1,506 URLs listed")


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


# -- colour -------------------------------------------------------------------------------


def test_colour_on_a_terminal_and_never_with_no_color() -> None:
    """The same failing run on a terminal: its ERROR and ✗ in red; with NO_COLOR, none."""
    url = f"http://127.0.0.1:{closed_port()}/"
    coloured = run_on_terminal(url)
    assert "\x1b[31mERROR\x1b[0m   fetch-failed" in coloured, coloured
    assert "\x1b[31m✗" in coloured and "\x1b[31;1mFAILED\x1b[0m: 2 documents" in coloured
    plain = run_on_terminal(url, NO_COLOR="1")
    assert "ERROR   fetch-failed" in plain and "✗ /robots.txt" in plain, plain
    assert colours(plain) == set(), repr(plain)


def test_no_colour_in_pipes_unless_forced_and_never_with_json() -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    piped = run(url)
    assert piped.returncode == 1 and "\x1b" not in piped.stdout + piped.stderr
    forced = run(url, FORCE_COLOR="1")
    assert "\x1b[31mERROR" in forced.stdout and "\x1b[31m✗" in forced.stderr
    as_json = run(url, "--json", FORCE_COLOR="1")
    assert "\x1b" not in as_json.stdout + as_json.stderr
    assert json.loads(as_json.stdout)["summary"]["errors"] == 2
    assert as_json.stderr.splitlines()[0].startswith("✗ /robots.txt  no answer")


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


# -- hints --------------------------------------------------------------------------------


def _check(
    url: str, client: AbstractAsyncContextManager[httpx.AsyncClient] | None = None
) -> CheckReport:
    async def main() -> CheckReport:
        async with client or httpx.AsyncClient() as http:
            options = CheckOptions(http_checks=False)
            return await run_check(url, Fetcher(http, rate=0), options)

    return anyio.run(main)


def test_hint_when_nothing_answers() -> None:
    """A real closed port: refused, and the hint asks whether the server runs."""
    port = closed_port()
    done = run(f"http://127.0.0.1:{port}/")
    assert done.returncode == 1
    hint = f"hint: nothing answers at 127.0.0.1:{port} (connection refused): is the server running"
    assert hint in done.stdout, done.stdout
    assert done.stdout.count("hint: ") == 1  # two fetch-failed findings, one hint


def test_hint_to_raise_the_timeout() -> None:
    """A real server dripping its body: cut at --timeout, and told to raise it."""
    with hostile() as base:
        done = run(base + "/drip.xml", "--timeout", "0.3", "--no-http-checks", "--rate", "0")
    assert done.returncode == 1
    assert "hint: requests took longer than --timeout 0.3 s: raise it (--timeout 1.2)" in (
        done.stdout
    ), done.stdout


def test_hint_for_tls_to_a_plain_server() -> None:
    sock = bound_socket()
    port = sock.getsockname()[1]
    with serve("uvicorn", make_config({"pages": ["/"]}, base_url=f"http://127.0.0.1:{port}"), sock):
        report = _check(f"https://127.0.0.1:{port}/")
    assert report.failures.keys() == {"tls"}
    (hint,) = hints(report, HintContext(timeout=30))
    assert hint.startswith(f"TLS failed with 127.0.0.1:{port}: an expired or self-signed")


def test_hint_when_the_host_does_not_resolve() -> None:
    report = _check("http://no-such-host.invalid/")
    assert report.failures.keys() == {"dns"}
    assert hints(report, HintContext(timeout=30))[0].startswith(
        "no-such-host.invalid does not resolve"
    )


def test_hint_when_base_url_is_not_the_url_checked() -> None:
    """A local server whose base_url is another site: its robots.txt sends `check` there."""
    sock = bound_socket()
    elsewhere = f"http://localhost:{closed_port()}"
    with serve("uvicorn", make_config({"pages": ["/"]}, base_url=elsewhere), sock) as url:
        report = _check(url + "/")
    said = hints(report, HintContext(timeout=30))
    assert said[0] == (
        f"{url}/robots.txt names sitemaps on {elsewhere}: is base_url your public URL? On "
        "your machine take it from the environment (docs: Local development), or check "
        "the app in process: check --app module:app"
    )
    assert said[1].startswith(f"nothing answers at {elsewhere[7:]} (connection refused)")


def test_hint_when_no_sitemap_is_served() -> None:
    """An app without the middleware: robots.txt and /sitemap.xml are 404."""
    report = _check("https://example.com/", client_for_app(Starlette()))
    assert hints(report, HintContext(timeout=30, app=True)) == [
        "https://example.com/sitemap.xml is not found (nor robots.txt): is the sitemap "
        "middleware installed around the app answering here, and is this its path? (a "
        "base_url with a path moves the sitemaps under it)"
    ]


def test_hint_when_robots_txt_names_a_sitemap_that_is_not_found() -> None:
    """The middleware answers robots.txt, but every section is empty: /sitemap.xml is 404,
    and the hint names the empty sections before a missing middleware."""

    def nothing() -> list[str]:
        return []

    app = asgi_app(make_config("https://example.com", {"pages": nothing}))
    report = _check("https://example.com/", client_for_app(app))
    (hint,) = hints(report, HintContext(timeout=30, app=True))
    assert hint.startswith(
        "https://example.com/sitemap.xml is not found, though robots.txt names it: is every "
        "section empty?"
    ), hint
    assert "explain" in hint


def test_hints_for_findings_and_the_time_limit() -> None:
    report = CheckReport("https://example.com/")
    report.add("error", "check-time-limit", "stopped")
    report.add("warning", "lastmod-identical", "all the same")
    report.add("warning", "lastmod-identical", "all the same")
    said = hints(report, HintContext(timeout=30, max_time=2.5))
    assert said == [
        "the run stopped at --max-time 2.5 s: raise it, or fetch fewer URLs (--max-urls N, "
        "--no-check-urls)",
        "every lastmod is the same: give each URL the time its content last changed, or none "
        "(Ledger() dates content for you)",
    ]


def test_failure_kinds_read_the_causes() -> None:
    def chained(cause: BaseException) -> httpx.ConnectError:
        try:
            try:
                raise OSError("All connection attempts failed") from cause
            except OSError as exc:
                raise httpx.ConnectError(str(exc)) from exc
        except httpx.ConnectError as exc:
            return exc

    refused = ExceptionGroup("attempts", [OSError(101, "unreachable"), ConnectionRefusedError()])
    assert failure_kind(chained(refused)) == "refused"
    assert failure_kind(chained(socket.gaierror(-2, "Name or service not known"))) == "dns"
    assert failure_kind(chained(ssl.SSLError(1, "WRONG_VERSION_NUMBER"))) == "tls"
    assert failure_kind(chained(OSError(113, "No route to host"))) == "connect"
    assert failure_kind(httpx.RemoteProtocolError("peer closed")) == "http"
