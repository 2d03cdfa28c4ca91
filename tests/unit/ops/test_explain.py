"""``sitemap-middleware explain``: why a URL is, or is not, listed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig
from sitemap_middleware.__main__ import build_parser
from tests.harness.providers import ListProvider


class _Failing:
    async def entries(self) -> Any:
        raise RuntimeError("database went away")
        yield  # pragma: no cover


def _run(config: SitemapConfig, *argv: str) -> int:
    namespace = build_parser().parse_args(["explain", *argv, "--app", "x:y"])
    namespace.app = ASGISitemapMiddleware(lambda *a: None, config=config)  # type: ignore[arg-type]
    status: int = namespace.handler(namespace)
    return status


def test_explain_says_where_a_url_is_listed_and_why_one_is_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = SitemapConfig(
        base_url="https://example.com/shop",
        sections={
            # Paths are joined to the base directory: "/about" is .../shop/about.
            "pages": ListProvider(["/", "/about", {"loc": "/bad", "priority": 7}]),
            "more": [f"/p/{i}" for i in range(5)] + ["https://example.com/shop/about"],
        },
        max_urls_per_page=3,
    )
    assert _run(config, "/about", "--json") == 0
    (about,) = json.loads(capsys.readouterr().out)
    assert about["listed"] == [
        {"section": "pages", "file": "sitemap-pages-1.xml", "position": 1},
        {"section": "more", "file": "sitemap-more-2.xml", "position": 5},
    ]
    status = _run(config, "https://example.com/shop/bad", "https://other.example/x", "/nowhere")
    text = capsys.readouterr().out
    assert status == 1
    assert "left out: section 'pages': invalid priority 7" in text
    assert "not listed: invalid loc 'https://other.example/x'" in text
    assert "/nowhere\n  not listed: no section yields it" in text


def test_explain_says_when_a_section_could_not_be_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = SitemapConfig(
        base_url="https://example.com", sections={"a": ["/x"], "broken": _Failing()}
    )
    assert _run(config, "/x", "/y") == 1
    text = capsys.readouterr().out
    assert "listed in sitemap-a-1.xml" in text
    assert "section 'broken' failed" in text


def test_a_url_asked_twice_gets_the_same_answer_twice(capsys: pytest.CaptureFixture[str]) -> None:
    """Hostile review: the first of two spellings of one URL said "no section yields it"
    (the second took its place) and the exit status was 1."""
    config = SitemapConfig(base_url="https://example.com", sections={"pages": ["/a"]})
    assert _run(config, "/a", "https://example.com/a", "/a", "--json") == 0
    answers = json.loads(capsys.readouterr().out)
    assert [answer["listed"] for answer in answers] == [
        [{"section": "pages", "file": "sitemap-pages-1.xml", "position": 0}]
    ] * 3


def test_explain_probes_through_the_app_and_asks_each_tenant_by_its_host(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without a store keeping the guard's verdicts, `explain` probes the URLs it is asked
    about through the app (a noindex page, a redirect: left out, reasons named); an app
    serving Tenants answers each URL from the site its host names (a path: the first)."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, RedirectResponse
    from starlette.routing import Route

    from sitemap_middleware import Guard, Tenants

    async def page(request: Any) -> Any:
        if request.url.path == "/old":
            return RedirectResponse("/", status_code=301)
        noindex = {"X-Robots-Tag": "noindex"} if request.url.path == "/hidden" else {}
        return HTMLResponse("<p>hello</p>", headers=noindex)

    guard = Guard(action="exclude")
    shop = SitemapConfig(
        base_url="https://shop.test", sections={"pages": ["/", "/hidden", "/old"]}, guard=guard
    )
    other = SitemapConfig(base_url="https://other.test", sections={"pages": ["/only-here"]})
    app = Starlette(routes=[Route(p, page) for p in ("/", "/hidden", "/old", "/only-here")])
    app.add_middleware(
        ASGISitemapMiddleware,
        config=Tenants(sites={"shop.test": shop, "other.test": other}),
    )
    namespace = build_parser().parse_args(["explain", "--app", "x:y", "--json", "/"])
    namespace.urls = ["/", "/hidden", "/old", "https://other.test/only-here", "https://no.test/"]
    namespace.app = app
    assert namespace.handler(namespace) == 1
    answers = {a["url"]: a for a in json.loads(capsys.readouterr().out)}
    assert [x["file"] for x in answers["/"]["listed"]] == ["sitemap-pages-1.xml"]
    assert "left out by the guard: said noindex (X-Robots-Tag)" in answers["/hidden"]["left_out"][0]
    assert "left out by the guard: redirected (301) to /" in answers["/old"]["left_out"][0]
    assert answers["https://other.test/only-here"]["listed"]
    assert answers["https://no.test/"]["problems"] == [
        "not listed: no site of the app serves its host"
    ]


def test_explain_reads_items_carrying_the_ledgers_digests(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A section the content ledger dates by a ``digest`` key: explain read its items
    without the ledger, so each was refused ("unexpected keyword argument 'digest'")."""
    from sitemap_middleware import Ledger

    items = [{"loc": "/a", "digest": "r1"}, {"loc": "/b", "digest": "r1"}]
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"listed": items, "called": ListProvider([dict(i) for i in items])},
        ledger=Ledger(source="digest"),
    )
    assert _run(config, "/a", "--json") == 0
    (found,) = json.loads(capsys.readouterr().out)
    assert [where["section"] for where in found["listed"]] == ["listed", "called"]
    assert found["left_out"] == []
