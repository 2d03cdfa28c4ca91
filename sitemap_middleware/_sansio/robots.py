"""robots.txt per RFC 9309: this module alone decides what robots.txt says.

Generated from groups, or (``mode="append"``) the app's own file plus our ``Sitemap:``
line. The adapters only fetch the app's file, as :class:`AppRobotsRequest` bounds it,
and hand back an :class:`AppRobots`; what that answer means is decided here:

- 200: the app's file (its first 500 KiB, cut at a line end, as Google reads it) plus
  our line;
- 4xx but 429: the app has none (Google reads that as "no rules"): the generated file;
- anything else (5xx, 429, a redirect, no answer in time, a failing app): ``None``, so
  robots.txt answers 503 rather than replacing the app's rules with our own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._settings import Robots, RobotsGroup
from .limits import ROBOTS_MAX_BYTES

__all__ = [
    "APP_ROBOTS_DROP_HEADERS",
    "AppRobots",
    "AppRobotsRequest",
    "append_sitemap_lines",
    "render_robots",
    "robots_text",
]

#: Request headers not passed on to the app's sub-request: we need its full, plain
#: file (a 304, a range or a gzip body cannot have our line appended).
APP_ROBOTS_DROP_HEADERS = frozenset(
    (
        "accept-encoding",
        "if-none-match",
        "if-modified-since",
        "if-match",
        "if-unmodified-since",
        "if-range",
        "range",
        "content-length",
        "transfer-encoding",
    )
)


@dataclass(frozen=True, slots=True)
class AppRobotsRequest:
    """How adapters ask the wrapped app for its robots.txt: a GET, bounded in time and size."""

    timeout: float
    max_bytes: int
    drop_headers: frozenset[str] = APP_ROBOTS_DROP_HEADERS


@dataclass(frozen=True, slots=True)
class AppRobots:
    """What the app answered: its status (``None``: no answer) and the first bytes read."""

    status: int | None
    body: bytes = b""
    problem: str = ""

    @classmethod
    def failed(cls, problem: str) -> AppRobots:
        return cls(None, b"", problem)


def robots_text(robots: Robots, sitemap_urls: Sequence[str], app: AppRobots | None) -> str | None:
    """The robots.txt to serve, or ``None`` when the app's own could not be read."""
    if robots.mode == "generate":
        return render_robots(robots.groups, sitemap_urls)
    if app is None or app.status is None:
        return None
    if 400 <= app.status < 500 and app.status != 429:
        return render_robots(robots.groups, sitemap_urls)
    if app.status != 200:
        return None
    body = app.body
    if len(body) > ROBOTS_MAX_BYTES:
        body = body[:ROBOTS_MAX_BYTES]
        body = body[: body.rfind(b"\n") + 1]  # never append to half a rule
    return append_sitemap_lines(body.decode("utf-8", "replace"), sitemap_urls)


def render_robots(groups: Sequence[RobotsGroup], sitemap_urls: Sequence[str]) -> str:
    """robots.txt per RFC 9309, with one ``Sitemap:`` line per entry point.

    ``Sitemap:`` lines stand outside the groups (they apply to every crawler); no
    non-standard directive (``Host:``, ``Crawl-delay:``) is written.
    """
    lines: list[str] = []
    for group in groups:
        lines += (f"User-agent: {agent}" for agent in group.user_agents)
        lines += (f"Allow: {path}" for path in group.allow)
        lines += (f"Disallow: {path}" for path in group.disallow)
        if not group.allow and not group.disallow:
            lines.append("Disallow:")  # an empty Disallow allows everything (RFC 9309 §2.2.2)
        lines.append("")
    lines += (f"Sitemap: {url}" for url in sitemap_urls)
    return "\n".join(lines) + "\n"


def append_sitemap_lines(robots: str, sitemap_urls: Sequence[str]) -> str:
    """The app's own robots.txt with our ``Sitemap:`` lines added once at the end."""
    present = {
        line.split(":", 1)[1].strip()
        for line in robots.splitlines()
        if line.lower().startswith("sitemap:")
    }
    extra = [f"Sitemap: {url}" for url in sitemap_urls if url not in present]
    if not extra:
        return robots
    body = robots if robots.endswith("\n") or not robots else robots + "\n"
    return body + ("\n" if body else "") + "\n".join(extra) + "\n"
