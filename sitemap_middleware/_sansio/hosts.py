"""Host policy: which base URL a request is answered for.

The configured ``base_url`` unless the deployment opts in with ``trusted_hosts``; then
the request's host (from ``Host``, or with ``trust_forwarded`` from ``Forwarded`` or
``X-Forwarded-Host``/``-Proto``) is used only if it is on the allow-list.
"""

from __future__ import annotations

from collections.abc import Mapping

from werkzeug.http import parse_list_header, parse_options_header

from .._config import SitemapConfig
from .urls import BaseURL

__all__ = ["HostNotAllowed", "base_for", "forwarded_host_and_proto"]


class HostNotAllowed(Exception):
    """The request names a host that is not on ``trusted_hosts``."""


def forwarded_host_and_proto(headers: Mapping[str, str]) -> tuple[str | None, str]:
    """Host and protocol a trusted proxy reports: RFC 7239 ``Forwarded`` first, else
    ``X-Forwarded-Host``/``-Proto``. The first (client-most) element is used; the
    allow-list check that follows is what makes it safe."""
    forwarded = headers.get("forwarded")
    if forwarded:
        elements = parse_list_header(forwarded)
        if elements:
            _, params = parse_options_header("_; " + elements[0])
            if "host" in params or "proto" in params:
                return params.get("host"), params.get("proto", "").strip().lower()
    proto = (headers.get("x-forwarded-proto") or "").split(",")[0].strip().lower()
    return headers.get("x-forwarded-host"), proto


def base_for(config: SitemapConfig, headers: Mapping[str, str]) -> BaseURL:
    """The base URL to answer with; raises :class:`HostNotAllowed` for unlisted hosts."""
    if not config.trusted_hosts:
        return config.base  # Host, Forwarded and X-Forwarded-* are never read
    host = None
    scheme = config.base.origin.split(":", 1)[0]
    if config.trust_forwarded:
        host, proto = forwarded_host_and_proto(headers)
        if proto in ("http", "https"):
            scheme = proto
    host = (host or headers.get("host") or "").split(",")[0].strip().lower()
    if not host:
        return config.base
    if host not in config.trusted_hosts:
        raise HostNotAllowed(host)
    return config.base.with_host(scheme, host)
