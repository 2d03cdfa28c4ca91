"""Tenant dispatch: one core per site, picked by the request's Host header.

:class:`TenantCores` answers the same three calls as :class:`SitemapCore`, so adapters
serve one site or many alike and decide nothing.
"""

from __future__ import annotations

from collections import OrderedDict

from .._config import SitemapConfig, Tenants
from .._sansio.robots import AppRobots, AppRobotsRequest
from .._sansio.routing import Routes, Target, match
from .bodies import bytes_body
from .core import Reply, RequestInfo, SitemapCore
from .documents import TEXT_TYPE
from .stream import logger

__all__ = ["TenantCores", "make_core"]

LOG_RESOLVE_FAILED = "sitemap tenants: resolve(%r) failed: %s: %s"
#: Routes of a default configuration: which paths an unknown host is refused on.
_DEFAULT_ROUTES = Routes.from_config(
    SitemapConfig(base_url="https://tenant.invalid", sections={"_": ["/"]})
)


class TenantCores:
    """The core of each site of a :class:`Tenants`, created on first use."""

    def __init__(self, tenants: Tenants) -> None:
        self._tenants = tenants
        self._static = {host: SitemapCore(config) for host, config in tenants.sites.items()}
        self._resolved: OrderedDict[str, SitemapCore | None] = OrderedDict()
        first = next(iter(self._static.values()), None)
        self._unknown_routes = first.routes if first is not None else _DEFAULT_ROUTES

    def core_for(self, request: RequestInfo) -> SitemapCore | None:
        """The site that answers this request's host, or ``None`` for an unknown host."""
        host = (request.headers.get("host") or "").strip().lower()
        bare = host.rsplit(":", 1)[0] if host.rsplit(":", 1)[-1].isdigit() else host
        for key in (host, bare):
            if key in self._static:
                return self._static[key]
        if self._tenants.resolve is None or not host:
            return None
        return self._resolve(bare)

    def _resolve(self, host: str) -> SitemapCore | None:
        if host in self._resolved:
            self._resolved.move_to_end(host)
            return self._resolved[host]
        try:
            config = self._tenants.resolve(host) if self._tenants.resolve else None
        except Exception as exc:  # a failing lookup is that host's problem, not a crash
            logger.error(LOG_RESOLVE_FAILED, host, type(exc).__name__, exc)
            return None
        if config is not None and not isinstance(config, SitemapConfig):
            logger.error(LOG_RESOLVE_FAILED, host, "TypeError", f"returned {config!r}")
            config = None
        core = SitemapCore(config) if config is not None else None
        self._resolved[host] = core
        if len(self._resolved) > self._tenants.cache_size:
            self._resolved.popitem(last=False)
        return core

    def route(self, request: RequestInfo) -> Target | None:
        core = self.core_for(request)
        if core is None:
            return match(request.path, self._unknown_routes, request.root_path)
        return core.route(request)

    def app_robots_request(self, target: Target, request: RequestInfo) -> AppRobotsRequest | None:
        core = self.core_for(request)
        return core.app_robots_request(target, request) if core is not None else None

    async def respond(
        self, target: Target, request: RequestInfo, app_robots: AppRobots | None = None
    ) -> Reply:
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

    async def aclose(self) -> None:
        cores = [*self._static.values(), *(c for c in self._resolved.values() if c is not None)]
        for core in cores:
            await core.aclose()


def make_core(config: SitemapConfig | Tenants) -> SitemapCore | TenantCores:
    """The core for one site or for several; raises TypeError for anything else."""
    if isinstance(config, SitemapConfig):
        return SitemapCore(config)
    if isinstance(config, Tenants):
        return TenantCores(config)
    raise TypeError(f"config must be a SitemapConfig or Tenants, got {type(config).__name__}")
