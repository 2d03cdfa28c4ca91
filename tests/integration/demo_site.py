"""What the demo tests share: waiting for the demo's guard, reading a page as a crawler."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from urllib.parse import urljoin

import httpx

from sitemap_middleware.demo.planted import PLANTED
from sitemap_middleware.demo.serve import READY

#: The planted pages the guard leaves out once it has probed them.
GUARDED = tuple(p.path for p in PLANTED if "guard" in p.why)
#: Polls of the pages sitemap before giving up (the guard probes them within a second).
TRIES = 150


#: Seconds a test waits for the demo's ready line (a test-sized catalog: a few seconds).
READY_WITHIN = 120


def wait_for_ready(process: subprocess.Popen[bytes], log: Path) -> list[str]:
    """Wait for the demo's ready line (printed once it has answered every link it then
    prints); the URLs printed, in order."""
    deadline = time.monotonic() + READY_WITHIN
    while READY not in (text := log.read_text()):
        assert process.poll() is None, text
        assert time.monotonic() < deadline, f"the demo never said it was ready: {text}"
        time.sleep(0.1)
    while "Ask why:" not in (text := log.read_text()):  # the rest of the block
        assert time.monotonic() < deadline, text
        time.sleep(0.05)
    block = text.split(READY, 1)[1].split("Ask why:", 1)[0]
    return re.findall(r"^(?:\s+|Sitemaps for people \(HTML view\): )(https?://\S+)", block, re.M)


def wait_for_guard(url: str) -> None:
    """Poll the demo's pages sitemap until the guard has left its planted pages out.

    Under uvicorn the demo plans (and so probes) at start-up; under werkzeug the first
    sitemap request starts the probes. Bounded tries, nothing timed.
    """
    listed: list[str] = []
    for _ in range(TRIES):
        listed = re.findall(r"<loc>([^<]+)</loc>", httpx.get(url + "/sitemap-pages-1.xml").text)
        if not any(url + path in listed for path in GUARDED):
            return
        time.sleep(0.1)
    raise AssertionError(f"the guard left nothing out after {TRIES} tries: {listed}")


def indexable_problems(url: str, response: httpx.Response) -> list[str]:
    """What keeps a fetched page from being an indexable, self-canonical 200 (read here
    apart from the package's own reading, so the two can disagree)."""
    problems = [] if response.status_code == 200 else [f"answered {response.status_code}"]
    if "noindex" in response.headers.get("x-robots-tag", "").lower():
        problems.append("X-Robots-Tag: noindex")
    if not response.headers.get("content-type", "").startswith("text/html"):
        return problems
    for tag in re.findall(r"<meta\b[^>]*>", response.text, re.I):
        if re.search(r'name="?(robots|googlebot)\b', tag, re.I) and "noindex" in tag.lower():
            problems.append(f"meta noindex: {tag}")
    for tag in re.findall(r"<link\b[^>]*>", response.text, re.I):
        href = re.search(r'href="([^"]*)"', tag)
        canonical = re.search(r'rel="?canonical\b', tag, re.I)
        if canonical and href and urljoin(url, href[1]) != url:
            problems.append(f"canonical elsewhere: {href[1]}")
    return problems
