"""RFC 9309 rule matching in `check`: longest match, Allow wins ties, wildcards, groups."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware._sansio.robots_rules import RobotsRules

ROBOTS = """\
User-agent: *
Disallow: /private/
Allow: /private/open
Disallow: /*.pdf$
Disallow: /tmp

User-agent: Googlebot
User-agent: other
Disallow: /no-google/
Allow: /no-google/yes
"""


@pytest.mark.parametrize(
    ("agent", "path", "allowed"),
    [
        ("bingbot", "/private/x", False),
        ("bingbot", "/private/open/page", True),  # longer Allow wins
        ("bingbot", "/docs/a.pdf", False),
        ("bingbot", "/docs/a.pdf?x=1", True),  # '$' ends the path
        ("bingbot", "/tmpfile", False),  # a prefix, not a directory
        ("bingbot", "/robots.txt", True),
        ("Googlebot/2.1", "/private/x", True),  # its own group only
        ("googlebot", "/no-google/a", False),
        ("Googlebot", "/no-google/yes", True),
        ("bingbot", "/%70rivate/x", False),  # percent-decoded before matching
    ],
)
def test_rules_are_read_as_rfc_9309_says(agent: str, path: str, allowed: bool) -> None:
    """Group by product token, longest match, Allow on ties, '*' and '$'."""
    assert RobotsRules(ROBOTS, agent).allowed("https://example.com" + path) is allowed


def _naive(rules: list[tuple[bool, str]], path: str) -> bool:
    """Every rule tried: the longest match wins, Allow on a tie (the RFC, literally)."""
    best: tuple[int, bool] | None = None
    for allow, pattern in rules:
        anchored = pattern.endswith("$")
        body = pattern[:-1] if anchored else pattern
        regex = ".*".join(re.escape(p) for p in body.split("*")) + ("\\Z" if anchored else "")
        if re.match(regex, path, re.DOTALL):
            key = (len(pattern), allow)
            best = key if best is None or key > best else best
    return True if best is None else best[1]


PATTERN = st.text(alphabet="/ab*$", min_size=1, max_size=6).map(lambda s: "/" + s)


@settings(max_examples=300, deadline=None)
@given(
    rules=st.lists(st.tuples(st.booleans(), PATTERN), max_size=12),
    path=st.text(alphabet="/ab.", max_size=8).map(lambda s: "/" + s),
)
def test_matching_agrees_with_trying_every_rule(rules: list[tuple[bool, str]], path: str) -> None:
    """The indexed matcher gives the answer of the literal reading of RFC 9309."""
    text = "User-agent: *\n" + "".join(
        f"{'Allow' if allow else 'Disallow'}: {pattern}\n" for allow, pattern in rules
    )
    if path == "/robots.txt":
        return
    assert RobotsRules(text, "bot").allowed("https://example.com" + path) is _naive(rules, path)


def test_check_reads_at_most_500_kib_of_robots_txt() -> None:
    """A robots.txt past 500 KiB is read up to there (RFC 9309 2.5) with a warning: a
    Sitemap: line past the cut is not seen, the rules before it apply."""
    import anyio
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    from sitemap_middleware._ops.apps import client_for_app
    from sitemap_middleware._ops.check import CheckOptions, run_check
    from sitemap_middleware._ops.fetch import Fetcher
    from sitemap_middleware._sansio.limits import ROBOTS_MAX_BYTES

    padding = "".join(f"Disallow: /junk/{i:06d}/\n" for i in range(ROBOTS_MAX_BYTES // 20))
    text = (
        "Sitemap: https://example.com/first.xml\nUser-agent: *\nDisallow: /secret\n"
        + padding
        + "Sitemap: https://example.com/late.xml\n"
    )
    assert len(text) > ROBOTS_MAX_BYTES
    urlset = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/secret/a</loc></url></urlset>"
    )

    async def robots(request: Request) -> Response:
        return PlainTextResponse(text)

    async def sitemap(request: Request) -> Response:
        return Response(urlset, media_type="application/xml")

    app = Starlette(routes=[Route("/robots.txt", robots), Route("/first.xml", sitemap)])

    async def main() -> object:
        async with client_for_app(app) as client:
            options = CheckOptions(http_checks=False)
            return await run_check("https://example.com/", Fetcher(client, rate=0), options)

    report = anyio.run(main)
    codes = report.codes()  # type: ignore[attr-defined]
    assert codes["robots-too-large"] == 1
    assert codes["robots-disallowed"] == 1  # the rule before the cut applies
    assert "late.xml" not in report.format_text()  # type: ignore[attr-defined]


def test_max_time_bounds_the_whole_run() -> None:
    """A site that answers every request slowly (each within --timeout) cannot hold
    `check` past --max-time: it stops, reports what it saw, and fails the run."""
    import anyio
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from sitemap_middleware._ops.apps import client_for_app
    from sitemap_middleware._ops.check import CheckOptions, run_check
    from sitemap_middleware._ops.fetch import Fetcher

    children = "".join(
        f"<sitemap><loc>https://example.com/s{i}.xml</loc></sitemap>" for i in range(200)
    )
    index = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{children}'
        "</sitemapindex>"
    )

    async def sitemap(request: Request) -> Response:
        if request.url.path != "/sitemap.xml":
            await anyio.sleep(0.2)  # slow, but each request well within its timeout
        return Response(index if request.url.path == "/sitemap.xml" else "", status_code=200)

    app = Starlette(routes=[Route("/{path:path}", sitemap)])

    async def main() -> object:
        async with client_for_app(app) as client:
            options = CheckOptions(http_checks=False, max_time=1.0)
            fetcher = Fetcher(client, rate=0, concurrency=1, timeout=5)
            with anyio.fail_after(60):  # a hang guard: 200 x 0.2 s would be 40 s
                return await run_check("https://example.com/", fetcher, options)

    report = anyio.run(main)
    assert report.codes()["check-time-limit"] == 1  # type: ignore[attr-defined]
    assert not report.ok  # type: ignore[attr-defined]
    assert report.requests < 50  # type: ignore[attr-defined]  # of 200 slow sitemaps
