"""``check --app`` lets the app's guard settle before it crawls.

A fresh process lists every URL until its guard (``Guard(action="exclude")``) has probed
it, and its plans and ETags move as the verdicts arrive: a crawl started at once reports
the pages the guard leaves out (``url-*``) and ETags moving mid-crawl. So in app mode the
check first plans every section of the sites it reads (the guard learns their URLs), on
the loop each core runs on (a WSGI middleware's portal), then waits until no URL waits
for a probe or is in flight, ``--guard-wait`` seconds at most (past them:
``guard-unsettled``, and the crawl goes on). Probes go at the check's own pace
(``--rate``), not the guard's ``max_probes_per_minute``: the check then GETs every listed
URL at that pace anyway. A guard in ``report`` mode changes no sitemap: not waited for.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio

from .._adapters.asgi import ASGISitemapMiddleware
from .._adapters.portal import get_portal
from .._adapters.wsgi import WSGISitemapMiddleware
from .._engine.answer import RequestInfo
from .._engine.core import SitemapCore
from .._engine.tenants import TenantCores
from .._sansio.guard import GuardBook
from .findings import CheckReport

__all__ = ["Settling", "find_middlewares", "settle_guards"]

#: Objects looked through for middlewares at most (an app's graph is small; a cycle or a
#: huge router must not stall the check).
MAX_OBJECTS = 10_000
#: Seconds between two looks at the guards' counts, and between two progress lines.
POLL = 0.05
SAY_EVERY = 1.0

Middleware = ASGISitemapMiddleware | WSGISitemapMiddleware
#: Runs ``core.plan_all`` on the loop the core runs on.
Planner = Callable[[], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class Settling:
    """How the wait ended: URLs with a verdict, URLs still unprobed (0: settled), the
    seconds waited and whether planning finished within them."""

    probed: int
    unprobed: int
    seconds: float
    wait: float
    planned: bool = True

    def add_to(self, report: CheckReport) -> None:
        """A ``guard-unsettled`` warning when the guard had not settled."""
        if not self.unprobed:
            return
        total = self.probed + self.unprobed
        report.add(
            "warning",
            "guard-unsettled",
            f"after --guard-wait {self.wait:g} s the guard had not probed {self.unprobed:,} "
            f"of {total:,} URLs"
            + ("" if self.planned else " (it was still planning the sections)")
            + ": the sitemaps read may list pages it would leave out (url-* findings) "
            "and change as its verdicts arrive",
        )


def find_middlewares(app: object) -> list[Middleware]:
    """Every sitemap middleware in ``app``: through ``.app``/``.wsgi_app`` chains,
    Starlette's built middleware stack, router and routes (mounted apps), werkzeug's
    ``DispatcherMiddleware`` mounts. (A Starlette app builds its stack when first
    called: its lifespan startup, or the first request.)"""
    found: list[Middleware] = []
    seen: dict[int, object] = {}  # (holds each object: its id stays its own)
    pending: list[Any] = [app]
    while pending and len(seen) < MAX_OBJECTS:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen[id(current)] = current
        if isinstance(current, ASGISitemapMiddleware | WSGISitemapMiddleware):
            found.append(current)
        for name in ("app", "wsgi_app", "middleware_stack", "router"):
            pending.append(_attribute(current, name))
        routes = _attribute(current, "routes")
        if isinstance(routes, list | tuple):
            pending += routes
        mounts = _attribute(current, "mounts")
        if isinstance(mounts, dict):
            pending += mounts.values()
    return found


def _attribute(thing: object, name: str) -> object:
    """``thing.name``, or None (a proxy such as Flask's ``current_app`` raises outside
    its context: no reason to stop the check)."""
    try:
        return getattr(thing, name, None)
    except Exception:
        return None


def _core_for(middleware: Middleware, url: str) -> SitemapCore | None:
    """The core answering ``url``'s host (with ``Tenants``: its site, if any)."""
    core = middleware.core
    if isinstance(core, TenantCores):
        return core.core_for(RequestInfo("GET", "/", {"host": urlsplit(url).netloc}))
    return core


def _planner(middleware: Middleware, core: SitemapCore) -> Planner:
    """``core.plan_all`` on the core's loop: this one (ASGI), or the WSGI portal's."""
    if isinstance(middleware, ASGISitemapMiddleware):
        return core.plan_all
    portal = middleware._portal or get_portal()

    async def plan() -> object:
        return await anyio.to_thread.run_sync(portal.call, core.plan_all, abandon_on_cancel=True)

    return plan


def _guarded(app: object, url: str, per_minute: int | None) -> list[tuple[GuardBook, Planner]]:
    """The excluding guards of the sites ``url`` reaches (each book once), paced at
    ``per_minute``, and how to plan their sections."""
    guarded: dict[int, tuple[GuardBook, Planner]] = {}
    for middleware in find_middlewares(app):
        core = _core_for(middleware, url)
        runner = core.guard if core is not None else None
        if core is None or runner is None or runner.probe is None or not runner.book.excludes:
            continue
        runner.pace_at(per_minute)
        guarded.setdefault(id(runner.book), (runner.book, _planner(middleware, core)))
    return list(guarded.values())


async def settle_guards(
    app: object,
    url: str,
    *,
    wait: float,
    rate: float,
    say: Callable[[str], None] | None = None,
) -> Settling | None:
    """Plan the sections of the app's excluding guards and wait for them to settle
    (``wait`` seconds at most; ``rate`` probes a second, 0: unpaced); ``say`` gets the
    progress lines. ``None``: no such guard."""
    per_minute = None if rate == 0 else max(1, math.ceil(rate * 60))
    guarded = _guarded(app, url, per_minute)
    if not guarded:
        return None
    started = anyio.current_time()
    planned = False
    with anyio.move_on_after(wait):
        for _, plan in guarded:
            try:
                await plan()
            except Exception:  # (strict mode's invalid entry: the crawl reports it)
                continue
        planned = True
    books = [book for book, _ in guarded]
    said_at = -math.inf
    while True:
        probed, unprobed = sum(b.probed() for b in books), sum(b.unprobed() for b in books)
        now = anyio.current_time()
        if say is not None and unprobed and now - said_at >= SAY_EVERY:
            say(f"waiting for the guard: {probed:,} of {probed + unprobed:,} URLs probed")
            said_at = now
        if not unprobed or now - started >= wait:
            break
        await anyio.sleep(POLL)
    seconds = anyio.current_time() - started
    if say is not None:
        done = "settled" if not unprobed else "not settled, crawling all the same"
        total = probed + unprobed
        say(f"waiting for the guard: {probed:,} of {total:,} URLs probed, {done} ({seconds:.1f} s)")
    return Settling(probed, unprobed, seconds, wait, planned)
