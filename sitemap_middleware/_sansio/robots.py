"""robots.txt per RFC 9309: generated from groups, or the app's own plus our lines."""

from __future__ import annotations

from collections.abc import Sequence

from .._config import RobotsGroup

__all__ = ["append_sitemap_lines", "render_robots"]


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
