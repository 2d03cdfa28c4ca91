"""robots.txt content (sitemap_middleware._sansio.robots)."""

from __future__ import annotations

import pytest

from sitemap_middleware import ConfigurationError, Robots, RobotsGroup
from sitemap_middleware._sansio.robots import (
    AppRobots,
    append_sitemap_lines,
    render_robots,
    robots_text,
)

URLS = ["https://example.com/sitemap.xml"]


def test_render_robots_groups_and_sitemaps() -> None:
    """robots.txt has groups, then Sitemap lines; no non-standard directives."""
    text = render_robots(
        [RobotsGroup(("Googlebot",), allow=("/",), disallow=("/admin",)), RobotsGroup()],
        ["https://example.com/sitemap.xml"],
    )
    assert text == (
        "User-agent: Googlebot\nAllow: /\nDisallow: /admin\n\n"
        "User-agent: *\nDisallow:\n\nSitemap: https://example.com/sitemap.xml\n"
    )
    assert "Host:" not in text and "Crawl-delay" not in text


def test_append_sitemap_lines_keeps_app_rules_once() -> None:
    """Appending to the app's robots.txt keeps its rules and adds each Sitemap line once."""
    url = "https://example.com/sitemap.xml"
    result = append_sitemap_lines("User-agent: *\nDisallow: /x", [url])
    assert result == f"User-agent: *\nDisallow: /x\n\nSitemap: {url}\n"
    assert append_sitemap_lines(result, [url]) == result


@pytest.mark.parametrize(
    "bad", [{"disallow": ("admin",)}, {"allow": ("/a\nHost: evil",)}, {"user_agents": ()}]
)
def test_robots_group_rejects_bad_rules(bad: dict[str, object]) -> None:
    """Rules must be one-line paths; a group needs a user agent."""
    with pytest.raises(ValueError):
        RobotsGroup(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("app", "expected"),
    [
        (
            AppRobots(200, b"User-agent: *\nDisallow: /x\n"),
            "User-agent: *\nDisallow: /x\n\nSitemap: https://example.com/sitemap.xml\n",
        ),
        (
            AppRobots(404),
            "User-agent: *\nDisallow: /g\n\nSitemap: https://example.com/sitemap.xml\n",
        ),
        (
            AppRobots(403),
            "User-agent: *\nDisallow: /g\n\nSitemap: https://example.com/sitemap.xml\n",
        ),
        (AppRobots(429), None),
        (AppRobots(500), None),
        (AppRobots(301), None),
        (AppRobots.failed("timed out"), None),
        (None, None),
    ],
    ids=["200", "404", "403", "429", "500", "301", "failed", "none"],
)
def test_append_mode_reads_the_apps_answer(app: AppRobots | None, expected: str | None) -> None:
    """A 200 is appended to, a 4xx means no file, anything else is unavailable (503)."""
    robots = Robots(mode="append", groups=[RobotsGroup(disallow=["/g"])])
    assert robots_text(robots, URLS, app) == expected


def test_a_huge_app_robots_is_cut_at_a_line_end() -> None:
    """Past 500 KiB (what Google reads) the file is cut at the last full line."""
    body = b"Disallow: /abcdefgh\n" * 40_000
    text = robots_text(Robots(mode="append"), URLS, AppRobots(200, body))
    assert text is not None
    kept, _, tail = text.rpartition("\n\nSitemap: ")
    assert len(kept.encode()) <= 500 * 1024
    assert kept.endswith("Disallow: /abcdefgh")
    assert tail == "https://example.com/sitemap.xml\n"


def test_robots_settings_refuse_bad_values() -> None:
    """Robots checks its own fields."""
    with pytest.raises(ConfigurationError, match="Robots.groups must hold RobotsGroup"):
        Robots(groups=["User-agent: *"])  # type: ignore[list-item]
    assert Robots(groups=RobotsGroup()).groups == (RobotsGroup(),)  # type: ignore[arg-type]
