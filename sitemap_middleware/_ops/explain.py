"""The ``explain`` command: why a URL is, or is not, listed.

The explanation itself is ``_engine/explain.py``'s (the explain endpoint answers the
same); here: the command line, a core of its own, and the app asked about each URL (a
guard's probes through ``--app``). An app serving :class:`Tenants` is asked about each
URL by the site its host names (a path: the first site).
"""

from __future__ import annotations

import argparse
import json
from contextlib import AsyncExitStack
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from .._config import SitemapConfig, Tenants
from .._engine.explain import Explanation, explain_with
from .._engine.guard import PROBE_AGENT, Probe, ProbeAnswer
from .._sansio.indexable import HEAD_BYTES

__all__ = ["Explanation", "add_explain_parser", "explain"]


async def explain(
    config: SitemapConfig, urls: list[str], probe: Probe | None = None
) -> list[Explanation]:
    """An :class:`Explanation` of each of ``urls`` (absolute, or paths under the base),
    from a core of its own (see ``_engine/explain.py``).

    With a guard, ``probe`` (how to ask the app for a URL) probes those of ``urls`` that
    have no verdict in the fleet's store, as the guard would.
    """
    from .._engine.core import SitemapCore

    core = SitemapCore(config)
    try:
        return await explain_with(config, core._documents, core.guard, urls, probe)
    finally:
        await core.aclose()


def client_probe(client: httpx.AsyncClient) -> Probe:
    """The guard's GET through an in-process client: no redirect followed, the first
    bytes of the body (what ``check --app`` reads)."""

    async def probe(url: str) -> ProbeAnswer:
        headers = {"User-Agent": PROBE_AGENT, "Accept": "text/html,*/*;q=0.8"}
        async with client.stream("GET", url, headers=headers, follow_redirects=False) as got:
            body = bytearray()
            async for chunk in got.aiter_bytes():
                body += chunk
                if len(body) > HEAD_BYTES:
                    break
            return ProbeAnswer(got.status_code, list(got.headers.items()), bytes(body))

    return probe


def site_for(served: object, url: str) -> SitemapConfig | None:
    """The configuration ``url`` belongs to: the app's only one or, for :class:`Tenants`,
    the site its host names (exact ``host:port``, then the host; a path: the first site)."""
    if isinstance(served, SitemapConfig):
        return served
    tenants = getattr(served, "_tenants", served)  # (TenantCores keep their Tenants)
    if not isinstance(tenants, Tenants):
        return None
    parts = urlsplit(url)
    if not parts.netloc:
        return next(iter(tenants.sites.values()), None)
    host = parts.netloc.lower().rpartition("@")[2]
    config = tenants.sites.get(host) or tenants.sites.get(parts.hostname or "")
    if config is None and tenants.resolve is not None:
        config = tenants.resolve(host)
    return config


async def explain_app(app: object, served: object, urls: list[str]) -> list[Explanation]:
    """:func:`explain` for an app: each URL by its site, guard probes through the app."""
    from .apps import client_for_app

    answers: list[Explanation] = [Explanation(url) for url in urls]
    sites: dict[int, tuple[SitemapConfig, list[int]]] = {}
    for i, url in enumerate(urls):
        config = site_for(served, url)
        if config is None:
            answers[i].problems.append("not listed: no site of the app serves its host")
        else:
            sites.setdefault(id(config), (config, []))[1].append(i)
    async with AsyncExitStack() as stack:
        probe: Probe | None = None
        if any(config.guard is not None for config, _ in sites.values()):
            probe = client_probe(await stack.enter_async_context(client_for_app(app)))
        for config, indexes in sites.values():
            told = await explain(config, [urls[i] for i in indexes], probe)
            for i, found in zip(indexes, told, strict=True):
                answers[i] = found
    return answers


def add_explain_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "explain",
        help="say why URLs are or are not listed in the app's sitemaps",
        description=(
            "For each URL: the sitemap files that list it, or why none does (outside "
            "base_url, left out as invalid, a failed section, or no section yields it). "
            "Exit status 1 when one is not listed."
        ),
    )
    parser.add_argument("urls", nargs="+", metavar="URL", help="absolute, or a path")
    parser.add_argument("--app", metavar="MODULE:APP", required=True, help="the ASGI/WSGI app")
    parser.add_argument("--json", action="store_true", help="print the answers as JSON")
    parser.set_defaults(handler=_explain_command)


def _explain_command(args: argparse.Namespace) -> int:
    from .apps import load_app
    from .export import find_served

    app = load_app(args.app)
    answers = anyio.run(explain_app, app, find_served(app), list(args.urls))
    if args.json:
        print(json.dumps([answer.as_dict() for answer in answers], indent=2))
    else:
        print("\n".join(answer.format_text() for answer in answers))
    return 0 if all(answer.listed for answer in answers) else 1
