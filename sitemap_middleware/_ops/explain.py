"""The ``explain`` command: why a URL is, or is not, listed.

For each URL asked about: the sitemap files that list it (section, page file, position
in the section), or why none does: outside ``base_url`` (the location rule), left out as
an invalid entry (the reason, as the logs give it), left out on purpose (the section's
exclude pattern, SKIP from the provider, the robots.txt rule that disallows it, or where it
is listed first: section and page, when it is a duplicate), in a
section that failed, or yielded by no section. The same plans and the same per-entry rules
as the served documents. With a guard, the verdicts a fleet's store keeps are told; a URL
asked about that has none is probed through the app (``--app``), as the guard probes it.
An app serving :class:`Tenants` is asked about each URL by the site its host names (a
path: the first site).
"""

from __future__ import annotations

import argparse
import json
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from .._config import SitemapConfig, Tenants, _ResolvedSection
from .._engine.guard import PROBE_AGENT, Probe, ProbeAnswer, judge
from .._engine.planning import SectionPlan
from .._exceptions import InvalidEntryError, ProviderError
from .._sansio.exclusion import SKIP
from .._sansio.indexable import HEAD_BYTES
from .._sansio.models import SitemapEntry, entry_parts
from .._sansio.urls import normalize_loc

__all__ = ["Explanation", "add_explain_parser", "explain"]


@dataclass(slots=True)
class Explanation:
    """What the sitemaps say about one URL."""

    url: str
    #: ``(section, sitemap file, position in the section)`` of each listing.
    listed: list[tuple[str, str, int]] = field(default_factory=list)
    #: Why items of the providers that name this URL were left out.
    left_out: list[str] = field(default_factory=list)
    #: Why the URL cannot be listed at all, or which sections could not be read.
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        listed = [{"section": s, "file": f, "position": p} for s, f, p in self.listed]
        return {"url": self.url, "listed": listed, "left_out": self.left_out,
                "problems": self.problems}  # fmt: skip

    def format_text(self) -> str:
        lines = [self.url]
        lines += [f"  listed in {f} (section {s!r}, item {p + 1})" for s, f, p in self.listed]
        if len(self.listed) > 1:
            lines.append(f"  listed {len(self.listed)} times")
        lines += [f"  left out: {reason}" for reason in self.left_out]
        lines += [f"  {problem}" for problem in self.problems]
        if not (self.listed or self.left_out or self.problems):
            lines.append("  not listed: no section yields it")
        return "\n".join(lines)


async def explain(
    config: SitemapConfig, urls: list[str], probe: Probe | None = None
) -> list[Explanation]:
    """An :class:`Explanation` of each of ``urls`` (absolute, or paths under the base).

    With a guard, ``probe`` (how to ask the app for a URL) probes those of ``urls`` that
    have no verdict in the fleet's store, as the guard would.
    """
    from .._engine.core import SitemapCore

    base = config.base
    found: dict[str, Explanation] = {}
    answers: list[Explanation] = []
    repeats: list[tuple[Explanation, Explanation]] = []  # a URL asked again: (again, first)
    for url in urls:
        answer = Explanation(url)
        answers.append(answer)
        try:
            absolute = base.locate(normalize_loc(url))
        except InvalidEntryError as exc:
            answer.problems.append(f"not listed: {exc}")
            continue
        if absolute in found:
            repeats.append((answer, found[absolute]))
        else:
            found[absolute] = answer
    core = SitemapCore(config)
    try:
        if core.guard is not None:  # what the guard found, as a fleet's store keeps it
            await core.guard.recall(list(found))
            if probe is not None:
                await _probe_unknown(core.guard.guard, core.guard.book, list(found), probe)
        await _find(core, config, found, answers)
    finally:
        await core.aclose()
    for again, first in repeats:
        again.listed, again.left_out = list(first.listed), list(first.left_out)
    return answers


async def _find(
    core: Any, config: SitemapConfig, found: dict[str, Explanation], answers: list[Explanation]
) -> None:
    """Fill ``found``'s explanations from the plans and a pass over every section."""
    plans, failed = await core._documents.plans.plan_all(config.base)
    for name in failed:
        for answer in answers:
            answer.problems.append(f"section {name!r} failed, so whether it lists this is unknown")
    children = core._documents.index_children(plans)
    finder = _Finder(config.base, found, {(c.section or "", c.number): c.name for c in children})
    by_name = {plan.name: plan for plan in plans}
    notes: list[str] = []  # SKIP names no URL: one no section lists may be one of them
    for section in config.resolved_sections:
        plan = by_name.get(section.name)
        if plan is not None:
            await finder.read(config, section, plan, answers, notes)
    for answer in answers:
        if not answer.listed and not answer.left_out:
            answer.problems += [f"maybe left out by its provider: {note}" for note in notes]


class _Finder:
    """A pass over the planned sections, telling each URL asked about where it is listed
    (section, page file, position) or why it is left out there."""

    def __init__(
        self, base: Any, found: dict[str, Explanation], names: dict[tuple[str, int], str]
    ) -> None:
        self.base, self.found, self.names = base, found, names
        #: Duplicated URLs met at their first listing.
        self.firsts: set[tuple[str, str | None]] = set()

    async def read(
        self,
        config: SitemapConfig,
        section: _ResolvedSection,
        plan: SectionPlan,
        answers: list[Explanation],
        notes: list[str],
    ) -> None:
        from .._engine.stream import EntryStream

        stream = EntryStream(
            section.name, section.provider, self.base, timeout=config.provider_timeout, strict=False
        )  # (no exclusion: what it leaves out is told below)
        exclusion = section.exclusion
        ledger = exclusion.ledger if exclusion is not None else None
        duplicates = {loc: (s, n) for loc, s, n in plan.duplicates}
        skipped = 0
        try:
            while raw := await stream.next_raw():
                if ledger is not None:  # (items may carry its digests)
                    raw = ledger.split(raw)[0]
                skipped += sum(1 for item in raw if item is SKIP)
                start = stream.pulled - len(raw)
                plain = stream.plain(raw)
                spread = stream.spread(plain, len(raw)) if plain is not None else []
                locs: list[str | None] = [item[0] if item else None for item in spread]
                if plain is None:
                    locs += self._located(raw, section.name)
                for offset, loc in enumerate(locs):
                    listed = self.found.get(loc) if loc is not None else None
                    if listed is not None and loc is not None:
                        self._tell(listed, loc, start + offset, section, plan, duplicates)
            if skipped:
                notes.append(f"section {section.name!r} left out {skipped} items (SKIP)")
        except ProviderError as exc:
            for answer in answers:
                answer.problems.append(f"section {section.name!r} failed while read: {exc}")
        finally:
            await stream.aclose()

    def _located(self, raw: list[Any], name: str) -> list[str | None]:
        """Each item's URL, one by one (None: SKIP, or refused: told, if asked about)."""
        locs: list[str | None] = []
        for item in raw:
            if item is SKIP:
                locs.append(None)
                continue
            try:
                locs.append(self.base.locate(entry_parts(item)[0]))
            except InvalidEntryError as exc:
                locs.append(None)
                if (refused := self.found.get(_raw_loc(self.base, item) or "")) is not None:
                    refused.left_out.append(f"section {name!r}: {exc}")
        return locs

    def _tell(
        self,
        listed: Explanation,
        loc: str,
        position: int,
        section: _ResolvedSection,
        plan: SectionPlan,
        duplicates: dict[str, tuple[str, int]],
    ) -> None:
        """Where the section lists ``loc`` (at ``position``), or why it leaves it out."""
        exclusion = section.exclusion
        why = exclusion.why(loc, len(self.base.origin)) if loc and exclusion else None
        if why is not None:
            listed.left_out.append(f"section {section.name!r}: {why}")
            return
        number = next((n for n, p in enumerate(plan.pages, 1) if p.start <= position < p.stop), 0)
        first = duplicates.get(loc)
        if first is not None and (
            first != (section.name, number) or (first[0], loc) in self.firsts
        ):
            where = f"listed first in section {first[0]!r}, page {first[1]}"
            listed.left_out.append(f"section {section.name!r}: a duplicate, {where}")
            return
        if first is not None:
            self.firsts.add((first[0], loc))  # (its first listing: met now)
        file = self.names.get((section.name, number), "(past the planned pages)")
        listed.listed.append((section.name, file, position))


async def _probe_unknown(guard: Any, book: Any, urls: list[str], probe: Probe) -> None:
    """Probe each of ``urls`` without a fresh verdict, one at a time; keep the verdicts."""
    for url in urls:
        known = book.verdict(url)
        if known is not None and known.until > time.time():
            continue
        try:
            with anyio.fail_after(guard.timeout):
                answer = await probe(url)
        except Exception as exc:  # the app's failure (or its silence) is the answer
            answer = ProbeAnswer(None, problem=f"{type(exc).__name__}: {exc}")
        book.recall(url, judge(url, answer, time.time(), guard))


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


def _raw_loc(base: Any, item: object) -> str | None:
    """The absolute URL an item that was left out meant, as far as it says one."""
    if isinstance(item, SitemapEntry):
        loc: object = item.loc
    elif isinstance(item, dict):
        loc = item.get("loc")
    else:
        loc = item
    if not isinstance(loc, str):
        return None
    try:
        return str(base.locate(normalize_loc(loc)))
    except InvalidEntryError:
        return None


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
