"""Host policy: this module alone decides which base URL a request is answered for.

The configured base URL, unless the deployment opts in with :class:`TrustedHosts`; then
the request's host is used if it is on the allow-list. Behind trusted proxies the host
and scheme come from the one header family configured, counted from the right as
werkzeug's ``ProxyFix`` does: the value the outermost trusted proxy wrote is the
``proxies``-th from the end, and whatever a client sent sits further left, unread.
"""

from __future__ import annotations

from collections.abc import Mapping

from werkzeug.http import parse_list_header, parse_options_header

from .._settings import TrustedHosts
from .urls import BaseURL

__all__ = ["HostNotAllowed", "base_for", "forwarded_values", "vary_headers"]


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
