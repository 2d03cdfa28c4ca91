"""`check` for a person, run as a person runs it against real servers: a line per
document on stderr as the crawl goes, colour only on a terminal (never with NO_COLOR or
--json, always with FORCE_COLOR), a hint per common failure on real sockets (a closed
port, a server too slow, TLS to a plain server, a host that does not resolve), and the
summary table closing the text report (in process: tests/unit/ops/test_terminal.py and
test_hints.py)."""

from __future__ import annotations

import json
import os
import pty
import re
import socket
import subprocess
import sys
from pathlib import Path

from sitemap_middleware._ops.hints import HintContext, hints
from tests.harness.checking import check_report
from tests.harness.core import make_config
from tests.harness.ports import bound_socket
from tests.harness.servers import serve
from tests.integration.ops.test_check import hostile
from tests.sites.checked_sites import clean_sections
from tests.unit.ops.test_terminal import table

if sys.version_info < (3, 11):
    pass

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


# -- hints --------------------------------------------------------------------------------


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
        report = check_report(f"https://127.0.0.1:{port}/")
    assert report.failures.keys() == {"tls"}
    (hint,) = hints(report, HintContext(timeout=30))
    assert hint.startswith(f"TLS failed with 127.0.0.1:{port}: an expired or self-signed")


def test_hint_when_the_host_does_not_resolve() -> None:
    report = check_report("http://no-such-host.invalid/")
    assert report.failures.keys() == {"dns"}
    assert hints(report, HintContext(timeout=30))[0].startswith(
        "no-such-host.invalid does not resolve"
    )


def test_hint_when_base_url_is_not_the_url_checked() -> None:
    """A local server whose base_url is another site: its robots.txt sends `check` there."""
    sock = bound_socket()
    elsewhere = f"http://localhost:{closed_port()}"
    with serve("uvicorn", make_config({"pages": ["/"]}, base_url=elsewhere), sock) as url:
        report = check_report(url + "/")
    said = hints(report, HintContext(timeout=30))
    assert said[0] == (
        f"{url}/robots.txt names sitemaps on {elsewhere}: is base_url your public URL? On "
        "your machine take it from the environment (docs: Local development), or check "
        "the app in process: check --app module:app"
    )
    assert said[1].startswith(f"nothing answers at {elsewhere[7:]} (connection refused)")
