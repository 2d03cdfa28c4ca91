"""Host policy (sitemap_middleware._sansio.hosts): which base URL a request is answered for."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import TrustedHosts
from sitemap_middleware._sansio.hosts import RELAY_HEADERS, from_this_machine, site_names
from tests.harness.core import fetch, header, make_core
from tests.harness.documents import check_document, page_urls

pytestmark = pytest.mark.anyio


async def test_trusted_hosts_allow_list() -> None:
    """With an allow-list, a listed Host is used and an unlisted one gets 400, never echoed."""
    hosts = TrustedHosts(hosts=["example.com", "www.example.com"], forwarded="x-forwarded")
    core = make_core({"p": ["/a"]}, hosts=hosts)
    _, body = await fetch(core, "/sitemap.xml", host="www.example.com")
    assert page_urls(check_document(body)) == ["https://www.example.com/a"]
    _, body = await fetch(
        core, "/sitemap.xml", host="x", x_forwarded_host="www.example.com", x_forwarded_proto="http"
    )
    assert page_urls(check_document(body)) == ["http://www.example.com/a"]
    reply, body = await fetch(core, "/sitemap.xml", host="evil.example")
    assert reply.status == 400 and b"evil" not in body
    reply, body = await fetch(core, "/robots.txt", host="evil.example")
    assert reply.status == 400 and b"evil" not in body


async def test_rfc7239_forwarded_header_when_trusted() -> None:
    """Forwarded (RFC 7239) is read only when configured, and its host still has to be on
    the allow-list; malformed values count as absent."""
    forwarded = 'for=10.0.0.1;host=x, for=192.0.2.60;proto=http;Host="www.example.com"'
    untrusted = make_core(
        {"p": ["/a"]}, hosts=TrustedHosts(hosts=["example.com", "www.example.com"])
    )
    _, body = await fetch(untrusted, "/sitemap.xml", host="example.com", forwarded=forwarded)
    assert page_urls(check_document(body)) == ["https://example.com/a"]
    core = make_core(
        {"p": ["/a"]},
        hosts=TrustedHosts(hosts=["example.com", "www.example.com"], forwarded="forwarded"),
    )
    _, body = await fetch(
        core, "/sitemap.xml", host="example.com", forwarded=forwarded, x_forwarded_host="x"
    )
    assert page_urls(check_document(body)) == ["http://www.example.com/a"]
    reply, body = await fetch(
        core, "/sitemap.xml", host="example.com", forwarded="host=evil.example"
    )
    assert reply.status == 400 and b"evil" not in body
    for malformed in ("for", ";;;", 'host="', "proto=gopher", ","):
        reply, body = await fetch(core, "/sitemap.xml", host="example.com", forwarded=malformed)
        assert reply.status == 200
        assert page_urls(check_document(body)) == ["https://example.com/a"]


@pytest.mark.parametrize(
    ("family", "proxies", "headers", "expected"),
    [
        # The client sent its own value first; the one trusted proxy appended the real one.
        (
            "x-forwarded",
            1,
            {
                "x_forwarded_proto": "http, https",
                "x_forwarded_host": "evil.example, www.example.com",
            },
            "https://www.example.com/a",
        ),
        (
            "forwarded",
            1,
            {"forwarded": "proto=http;host=evil.example, proto=https;host=www.example.com"},
            "https://www.example.com/a",
        ),
        # Two proxies: the second value from the right is what the outer one wrote.
        (
            "x-forwarded",
            2,
            {
                "x_forwarded_proto": "http, https, http",
                "x_forwarded_host": "evil.example, www.example.com, inner",
            },
            "https://www.example.com/a",
        ),
        # Fewer values than proxies: none is trusted (werkzeug ProxyFix), Host decides.
        (
            "x-forwarded",
            2,
            {"x_forwarded_proto": "http", "x_forwarded_host": "www.example.com"},
            "https://example.com/a",
        ),
        # One family only: a client's Forwarded never beats the proxy's X-Forwarded-*.
        (
            "x-forwarded",
            1,
            {"forwarded": "proto=http;host=www.example.com", "x_forwarded_proto": "https"},
            "https://example.com/a",
        ),
        (
            "forwarded",
            1,
            {"x_forwarded_proto": "http", "x_forwarded_host": "www.example.com"},
            "https://example.com/a",
        ),
    ],
    ids=[
        "xf-client-first",
        "fwd-client-first",
        "xf-two-hops",
        "xf-too-few",
        "xf-ignores-fwd",
        "fwd-ignores-xf",
    ],
)
async def test_trusted_proxies_are_counted_from_the_right(
    family: Any, proxies: int, headers: dict[str, str], expected: str
) -> None:
    """Only the value the outermost trusted proxy wrote decides scheme and host."""
    policy = TrustedHosts(
        hosts=["example.com", "www.example.com"], forwarded=family, proxies=proxies
    )
    core = make_core({"p": ["/a"]}, hosts=policy)
    reply, body = await fetch(core, "/sitemap.xml", host="example.com", **headers)
    assert reply.status == 200
    assert page_urls(check_document(body)) == [expected]
    vary = header(reply, "Vary") or ""
    assert "Host" in vary and ("Forwarded" in vary or "X-Forwarded-Proto" in vary)


# -- who may see the explain endpoint (from_this_machine) ------------------------------

LOOPBACK_PEERS = ("127.0.0.1", "::1", "::ffff:127.0.0.1")
SITE = frozenset({"example.com", "www.example.com"})


@pytest.mark.parametrize("peer", LOOPBACK_PEERS)
@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:80", "[::1]:8000",
                                  "example.com", "WWW.example.com:8443"])  # fmt: skip
def test_a_request_straight_from_this_machine_may_see_the_explain_endpoint(
    peer: str, host: str
) -> None:
    assert from_this_machine(peer, {"host": host}, SITE)


@pytest.mark.parametrize(
    ("peer", "headers"),
    [
        ("192.0.2.7", {"host": "localhost"}),  # another machine, whatever it calls us
        ("127.0.0.2", {"host": "localhost"}),  # loopback, but not 127.0.0.1 itself
        (None, {"host": "localhost"}),  # a Unix socket: no peer address
        ("localhost", {"host": "localhost"}),  # not an address
        ("127.0.0.1", {"host": "evil.example"}),  # a name rebound to 127.0.0.1
        ("127.0.0.1", {"host": "evil.example:8000"}),
        ("127.0.0.1", {}),  # no Host at all
    ],
)
def test_others_may_not(peer: str | None, headers: dict[str, str]) -> None:
    assert not from_this_machine(peer, headers, SITE)


@given(
    peer=st.sampled_from(LOOPBACK_PEERS),
    relay=st.sampled_from(RELAY_HEADERS),
    value=st.sampled_from(["127.0.0.1", "for=127.0.0.1", "1.1 proxy", "", "localhost"]),
)
def test_a_relayed_request_never_may(peer: str, relay: str, value: str) -> None:
    """A proxy on this machine makes every visitor's peer 127.0.0.1: a request carrying a
    header a proxy adds is never trusted, whatever it says (a forged one included)."""
    assert not from_this_machine(peer, {"host": "localhost", relay: value}, SITE)


@given(peer=st.ip_addresses())
def test_no_peer_but_this_machine_may(peer: Any) -> None:
    trusted = from_this_machine(str(peer), {"host": "localhost"}, SITE)
    mapped = getattr(peer, "ipv4_mapped", None)
    assert trusted == (str(mapped or peer) in ("127.0.0.1", "::1"))


def test_site_names_are_the_base_urls_and_the_trusted_hosts_without_ports() -> None:
    names = site_names("https://Example.com:8443", ["www.example.com:8000", "[::1]"])
    assert names == {"example.com", "www.example.com", "[::1]"}
