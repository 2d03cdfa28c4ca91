"""Tenant dispatch: one core per site, picked by the request's Host header.

:class:`TenantCores` answers the same three calls as :class:`SitemapCore`, so adapters
serve one site or many alike and decide nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

from .._config import SitemapConfig, Tenants
from .._logs import logger
from .._sansio.robots import AppRobots, AppRobotsRequest
from .._sansio.routing import Kind, Target, match
from .._settings import HOST_PATTERN as _HOST
from .answer import TEXT_TYPE
from .bodies import bytes_body
from .core import Reply, RequestInfo, SitemapCore
from .guard import Probe

__all__ = ["TenantCores", "make_core"]

LOG_RESOLVE_FAILED = "sitemap tenants: resolve(%r) failed: %s: %s"
#: Routes of a default configuration: which paths an unknown host is refused on.
_DEFAULT_ROUTES = SitemapConfig(base_url="https://tenant.invalid", sections={"_": ["/"]}).routes()


class TenantCores:
    """The core of each site of a :class:`Tenants`, created on first use."""

    def __init__(self, tenants: Tenants) -> None:
        self._tenants = tenants
        self._static = {host: SitemapCore(config) for host, config in tenants.sites.items()}
        self._resolved: OrderedDict[str, SitemapCore] = OrderedDict()
        # Unknown hosts are remembered apart, so random Host headers cannot push real
        # sites out of the cache.
        self._unknown: OrderedDict[str, None] = OrderedDict()
        self._evicted: list[SitemapCore] = []
        # route(), app_robots_request() and respond() of one request look the host up once.
        self._last: tuple[RequestInfo, SitemapCore | None] | None = None
        self._probe: Probe | None = None
        first = next(iter(self._static.values()), None)
        self._unknown_routes = first.routes if first is not None else _DEFAULT_ROUTES

    def core_for(self, request: RequestInfo) -> SitemapCore | None:
        """The site that answers this request's host, or ``None`` for an unknown host."""
        last = self._last
        if last is not None and last[0] is request:
            return last[1]
        core = self._lookup(request.headers.get("host") or "")
        self._last = (request, core)
        return core

    def _lookup(self, header: str) -> SitemapCore | None:
        host = header.strip().lower()
        if not _HOST.fullmatch(host):
            return None  # not host[:port]: never a site, never passed to resolve()
        bare = host.rsplit(":", 1)[0]
        for key in (host, bare):
            if key in self._static:
                return self._static[key]
        if self._tenants.resolve is None:
            return None
        return self._resolve(bare)

    def _resolve(self, host: str) -> SitemapCore | None:
        if host in self._resolved:
            self._resolved.move_to_end(host)
            return self._resolved[host]
        if host in self._unknown:
            return None
        try:
            config = self._tenants.resolve(host) if self._tenants.resolve else None
        except Exception as exc:  # a failing lookup is that host's problem, not a crash
            logger.error(LOG_RESOLVE_FAILED, host, type(exc).__name__, exc)
            return None  # not remembered: the next request asks again
        if config is not None and not isinstance(config, SitemapConfig):
            logger.error(LOG_RESOLVE_FAILED, host, "TypeError", f"returned {config!r}")
            config = None
        if config is None:
            _remember(self._unknown, host, None, self._tenants.cache_size)
            return None
        core = SitemapCore(config)
        if self._probe is not None:
            core.probe_with(self._probe)
        evicted = _remember(self._resolved, host, core, self._tenants.cache_size)
        if evicted is not None:
            self._evicted.append(evicted)  # closed on the loop, by the next respond()
        return core

    def probe_with(self, probe: Probe) -> None:
        """How every site's guard asks the wrapped app (see :meth:`SitemapCore.probe_with`)."""
        self._probe = probe
        for core in self._static.values():
            core.probe_with(probe)

    def route(self, request: RequestInfo) -> Target | None:
        core = self.core_for(request)
        if core is None:  # (an explain endpoint is no unknown host's: the app's path)
            target = match(request.path, self._unknown_routes, request.root_path)
            return None if target is not None and target.kind is Kind.EXPLAIN else target
        return core.route(request)

    def app_robots_request(self, target: Target, request: RequestInfo) -> AppRobotsRequest | None:
        core = self.core_for(request)
        return core.app_robots_request(target, request) if core is not None else None

    def respond_now(self, target: Target, request: RequestInfo) -> Reply | None:
        """:meth:`SitemapCore.respond_now` of the request's site (``None``: respond())."""
        core = None if self._evicted else self.core_for(request)
        return core.respond_now(target, request) if core is not None else None

    async def respond(
        self, target: Target, request: RequestInfo, app_robots: AppRobots | None = None
    ) -> Reply:
        while self._evicted:
            await self._evicted.pop().aclose()
        core = self.core_for(request)
        if core is None:
            data = b"Bad Request: host not allowed\n"  # never echoes the host
            headers = [
                ("Content-Type", TEXT_TYPE),
                ("Content-Length", str(len(data))),
                ("Cache-Control", "no-store"),
            ]
            return Reply(400, headers, None if request.method == "HEAD" else bytes_body(data))
        return await core.respond(target, request, app_robots)

    async def warm_up(self) -> None:
        """Plan the sites known up front (see :meth:`SitemapCore.warm_up`)."""
        for core in self._static.values():
            await core.warm_up()

    async def aclose(self) -> None:
        for core in [*self._static.values(), *self._resolved.values(), *self._evicted]:
            await core.aclose()
        self._evicted.clear()


_V = TypeVar("_V")


def _remember(cache: OrderedDict[str, _V], key: str, value: _V, size: int) -> _V | None:
    """Put ``key`` in an LRU of ``size``; returns the value pushed out, if any."""
    cache[key] = value
    if len(cache) > size:
        return cache.popitem(last=False)[1]
    return None


def make_core(config: SitemapConfig | Tenants) -> SitemapCore | TenantCores:
    """The core for one site or for several; raises TypeError for anything else."""
    if isinstance(config, SitemapConfig):
        return SitemapCore(config)
    if isinstance(config, Tenants):
        return TenantCores(config)
    raise TypeError(f"config must be a SitemapConfig or Tenants, got {type(config).__name__}")
