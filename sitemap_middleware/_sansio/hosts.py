"""Host policy: this module alone decides which base URL a request is answered for, and
which requests may see the explain endpoint (:func:`from_this_machine`).

The configured base URL, unless the deployment opts in with :class:`TrustedHosts`; then
the request's host is used if it is on the allow-list. Behind trusted proxies the host
and scheme come from the one header family configured, counted from the right as
werkzeug's ``ProxyFix`` does: the value the outermost trusted proxy wrote is the
``proxies``-th from the end, and whatever a client sent sits further left, unread.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping

from werkzeug.http import parse_list_header, parse_options_header

from .._settings import TrustedHosts
from .urls import BaseURL

__all__ = [
    "RELAY_HEADERS",
    "HostNotAllowed",
    "base_for",
    "forwarded_values",
    "from_this_machine",
    "site_names",
    "vary_headers",
]

#: Request headers a proxy adds: a request carrying one was relayed, whatever its peer.
RELAY_HEADERS = (
    "forwarded",
    "via",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
)
#: The peers that are this machine, as it calls itself (IPv4-mapped ::ffff:127.0.0.1 too).
_LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
#: Host names a request from this machine may use besides the site's own.
_LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})


class HostNotAllowed(Exception):
    """The request names a host that is not on the allow-list."""


def _from_right(values: list[str], proxies: int) -> str | None:
    # werkzeug ProxyFix._get_real_value: fewer values than proxies means the request
    # did not come through all of them, so none of the values can be trusted.
    if len(values) < proxies:
        return None
    return values[-proxies].strip() or None


def _values(headers: Mapping[str, str], name: str) -> list[str]:
    value = headers.get(name)
    return [] if value is None else value.split(",")


def forwarded_values(
    policy: TrustedHosts, headers: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """Host and protocol the outermost trusted proxy reports (``None`` where it says nothing)."""
    if policy.forwarded == "forwarded":
        elements = parse_list_header(headers.get("forwarded", ""))
        element = _from_right(elements, policy.proxies)
        if element is None:
            return None, None
        _, params = parse_options_header("_; " + element)
        return params.get("host") or None, (params.get("proto") or "").lower() or None
    if policy.forwarded == "x-forwarded":
        host = _from_right(_values(headers, "x-forwarded-host"), policy.proxies)
        proto = _from_right(_values(headers, "x-forwarded-proto"), policy.proxies)
        return host, proto.lower() if proto else None
    return None, None


def vary_headers(policy: TrustedHosts | None) -> tuple[str, ...]:
    """Request headers a reply depends on under this policy (for ``Vary``)."""
    if policy is None:
        return ()
    if policy.forwarded == "forwarded":
        return ("Host", "Forwarded")
    if policy.forwarded == "x-forwarded":
        return ("Host", "X-Forwarded-Host", "X-Forwarded-Proto")
    return ("Host",)


def base_for(base: BaseURL, policy: TrustedHosts | None, headers: Mapping[str, str]) -> BaseURL:
    """The base URL to answer with; raises :class:`HostNotAllowed` for unlisted hosts."""
    if policy is None:
        return base  # Host, Forwarded and X-Forwarded-* are never read
    scheme = base.origin.split(":", 1)[0]
    host, proto = forwarded_values(policy, headers)
    if proto in ("http", "https"):
        scheme = proto
    host = (host or headers.get("host") or "").strip().lower()
    if not host:
        return base
    if host not in policy.hosts:
        raise HostNotAllowed(host)
    return base.with_host(scheme, host)


def _bare(host: str) -> str:
    """A ``host[:port]`` without its port (``[::1]:8000`` -> ``[::1]``), lower-case."""
    host = host.strip().lower()
    return host if host.endswith("]") else host.rpartition(":")[0] or host


def site_names(origin: str, hosts: Iterable[str]) -> frozenset[str]:
    """The host names a site answers for: its base URL's (``origin``) and ``hosts``."""
    return frozenset(_bare(host) for host in (origin.partition("://")[2], *hosts))


def from_this_machine(
    client: str | None, headers: Mapping[str, str], names: frozenset[str]
) -> bool:
    """Whether a request may see the explain endpoint: it came straight from this machine.

    Its connection's peer (``client``, the server's word, never a header) is 127.0.0.1 or
    ::1; no proxy header says it was relayed (a proxy on this machine would make every
    visitor's peer 127.0.0.1); and its ``Host`` is ``localhost``, a loopback address or
    one of the site's ``names``, so a page whose own name was rebound to 127.0.0.1 (DNS
    rebinding, in a browser on this machine) gets nothing.
    """
    try:
        peer = ipaddress.ip_address(client or "")
    except ValueError:
        return False  # no peer address (a Unix socket) or not an address
    if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
        peer = peer.ipv4_mapped
    if peer not in _LOOPBACK or any(name in headers for name in RELAY_HEADERS):
        return False
    host = _bare(headers.get("host") or "")
    return host in _LOCAL_NAMES or host in names
