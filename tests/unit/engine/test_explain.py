"""The explain endpoint (sitemap_middleware._engine.explain, issue 27 item 6): what
``sitemap-middleware explain`` says, at ``SitemapConfig(explain_path=...)``, to requests
from this machine only; any other request's path is the app's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sitemap_middleware import ConfigurationError, SitemapConfig, Tenants, TrustedHosts
from sitemap_middleware._engine.core import RequestInfo, SitemapCore
from sitemap_middleware._engine.tenants import TenantCores
from sitemap_middleware._ops.explain import explain
from tests.harness.core import collect, header
from tests.harness.providers import ListProvider

pytestmark = pytest.mark.anyio

PATH = "/sitemap-explain"


def _config(**kwargs: Any) -> SitemapConfig:
    kwargs.setdefault("explain_path", PATH)
    pages = ListProvider(["/", "/about", {"loc": "/bad", "priority": 7}])  # (read as served)
    return SitemapConfig(base_url="https://example.com", sections={"pages": pages}, **kwargs)


def _request(
    query: str = "url=/about",
    client: str | None = "127.0.0.1",
    method: str = "GET",
    path: str = PATH,
    **headers: str,
) -> RequestInfo:
    headers = {"host": "localhost:8000", **{k.replace("_", "-"): v for k, v in headers.items()}}
    return RequestInfo(method, path, headers, "", client, query)


async def _ask(core: SitemapCore | TenantCores, request: RequestInfo) -> tuple[int, Any, str]:
    """(status, reply, body) as an adapter sends it; status 0: the app's path."""
    target = core.route(request)
    if target is None:
        return 0, None, ""
    reply = await core.respond(target, request)
    return reply.status, reply, (await collect(reply)).decode()


async def test_the_endpoint_says_what_the_command_says_as_text_or_json() -> None:
    config = _config()
    core = SitemapCore(config)
    urls = ["/about", "https://example.com/bad", "https://other.example/x", "/nowhere"]
    query = "&".join(f"url={u}" for u in urls)
    status, reply, text = await _ask(core, _request(query))
    told = await explain(config, urls)
    assert status == 200
    assert text == "\n".join(answer.format_text() for answer in told) + "\n"
    assert "listed in sitemap-pages-1.xml (section 'pages', item 2)" in text
    assert "left out: section 'pages': invalid priority 7" in text
    assert header(reply, "content-type") == "text/plain; charset=utf-8"
    status, reply, text = await _ask(core, _request(query, accept="application/json"))
    assert status == 200 and header(reply, "content-type") == "application/json"
    assert json.loads(text) == [answer.as_dict() for answer in told]


async def test_its_answers_are_never_stored_nor_indexed() -> None:
    core = SitemapCore(_config())
    for method in ("GET", "HEAD"):
        status, reply, text = await _ask(core, _request(method=method))
        assert status == 200
        assert header(reply, "cache-control") == "no-store"
        assert header(reply, "x-robots-tag") == "noindex"
        assert header(reply, "x-content-type-options") == "nosniff"
        assert header(reply, "etag") is None and header(reply, "last-modified") is None
        assert (text == "") == (method == "HEAD")


async def test_a_trusted_request_is_told_what_it_got_wrong() -> None:
    core = SitemapCore(_config())
    status, _, text = await _ask(core, _request(""))
    assert (status, text) == (400, "Bad Request: name the URL to explain: ?url=/path\n")
    status, reply, _ = await _ask(core, _request(method="POST"))
    assert (status, header(reply, "allow")) == (405, "GET, HEAD")


@pytest.mark.parametrize(
    ("client", "headers"),
    [
        ("192.0.2.7", {}),  # another machine
        (None, {}),  # no peer address (a Unix socket)
        ("127.0.0.1", {"host": "evil.example"}),  # a name rebound to 127.0.0.1
        ("127.0.0.1", {"x_forwarded_for": "127.0.0.1"}),  # relayed (the value forged)
        ("127.0.0.1", {"forwarded": "for=127.0.0.1"}),
        ("127.0.0.1", {"x_real_ip": "127.0.0.1"}),
        ("127.0.0.1", {"via": "1.1 proxy"}),
        ("127.0.0.1", {"x_forwarded_host": "localhost"}),
    ],
)
async def test_any_other_request_goes_to_the_app(
    client: str | None, headers: dict[str, str]
) -> None:
    """Not a 403: the path is not ours for it, so the app answers (its 404)."""
    core = SitemapCore(_config())
    assert core.route(_request(client=client, **headers)) is None


async def test_it_is_off_by_default() -> None:
    core = SitemapCore(_config(explain_path=None))
    assert core.route(_request()) is None


async def test_the_host_policy_does_not_close_it_to_this_machine() -> None:
    """With TrustedHosts a Host off the list gets 400 for documents; the endpoint answers
    ``localhost`` (and the listed hosts), explaining for the configured base URL."""
    core = SitemapCore(_config(hosts=TrustedHosts(hosts=["example.com", "shop.example"])))
    for host in ("localhost:8000", "shop.example", "[::1]"):
        status, _, text = await _ask(core, _request(host=host, client="::1"))
        assert status == 200 and "listed in sitemap-pages-1.xml" in text, host
    assert core.route(_request(host="evil.example")) is None


async def test_each_tenant_answers_by_its_host_and_an_unknown_host_goes_to_the_app() -> None:
    other = SitemapConfig(base_url="https://other.example", sections={"o": ["/o"]})
    cores = TenantCores(Tenants(sites={"example.com": _config(), "other.example": other}))
    status, _, text = await _ask(cores, _request(host="example.com"))
    assert status == 200 and "sitemap-pages-1.xml" in text
    for host in ("localhost", "other.example", "unknown.example"):
        assert cores.route(_request(host=host)) is None, host


@pytest.mark.parametrize(
    "path", ["sitemap-explain", "/explain?x", "/ex plain", "/expläin", "/robots.txt",
             "/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap.xml.gz"],
)  # fmt: skip
def test_its_path_is_checked(path: str) -> None:
    with pytest.raises(ConfigurationError, match="explain_path"):
        _config(explain_path=path)


async def test_it_is_answered_at_its_whole_path_under_a_mount() -> None:
    core = SitemapCore(_config(explain_path="/shop/why"))
    request = RequestInfo("GET", "/shop/why", {"host": "localhost"}, "/shop", "127.0.0.1", "url=/")
    status, _, text = await _ask(core, request)
    assert status == 200 and text.startswith("/\n  listed in")


async def test_a_url_without_a_verdict_is_probed_through_the_app_as_the_command_does() -> None:
    """The running core's guard: its probe (the adapter's GET through the app) asks
    about a URL it has no verdict on, and keeps the verdict."""
    from sitemap_middleware import Guard
    from sitemap_middleware._engine.guard import ProbeAnswer

    asked: list[str] = []

    async def probe(url: str) -> ProbeAnswer:
        asked.append(url)
        return ProbeAnswer(200, [("X-Robots-Tag", "noindex")], b"<p>hi</p>")

    core = SitemapCore(_config(guard=Guard(action="exclude")))
    core.probe_with(probe)
    status, _, text = await _ask(core, _request("url=/about"))
    assert status == 200 and asked == ["https://example.com/about"]
    assert "left out: section 'pages': left out by the guard: said noindex" in text
    await core.aclose()
