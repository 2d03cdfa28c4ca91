"""Why a URL is, or is not, listed: what ``explain`` prints (``_ops/explain.py``) and the
explain endpoint answers (``SitemapConfig(explain_path=...)``).

For each URL asked about: the sitemap files that list it (section, page file, position
in the section), or why none does: outside ``base_url`` (the location rule), left out as
an invalid entry (the reason, as the logs give it), left out on purpose (the section's
exclude pattern, SKIP from the provider, the robots.txt rule that disallows it, or where it
is listed first: section and page, when it is a duplicate), in a
section that failed, or yielded by no section. The same plans and the same per-entry rules
as the served documents. With a guard, the verdicts a fleet's store keeps are told; a URL
asked about that has none is probed through the app, as the guard probes it.

The endpoint answers ``GET <explain_path>?url=<URL>`` (``url`` again for more) with the
command's text, or its JSON for ``Accept: application/json``, never stored; only to a
request from this machine (``_sansio/hosts.py``, ``from_this_machine``): for any other
the core's ``route`` says the path is not ours, so the app answers it (its 404).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import anyio
from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header

from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import InvalidEntryError, ProviderError
from .._sansio.exclusion import SKIP
from .._sansio.hosts import from_this_machine, site_names
from .._sansio.models import SitemapEntry, entry_parts
from .._sansio.urls import normalize_loc
from .answer import TEXT_TYPE, HTTPError, RequestInfo
from .bodies import bytes_body
from .documents import Documents
from .guard import GuardRunner, Probe, ProbeAnswer, judge
from .planning import SectionPlan
from .stream import EntryStream

__all__ = ["ExplainEndpoint", "Explanation", "explain_with"]

JSON_TYPE = "application/json"
#: How an answer starts whose URL no section may list (outside ``base_url``, invalid).
UNLISTABLE = "not listed: "
#: What every answer of the endpoint carries: never stored, never indexed, never sniffed
#: (the text repeats the URLs asked about).
_HEADERS = [
    ("Cache-Control", "no-store"),
    ("X-Robots-Tag", "noindex"),
    ("X-Content-Type-Options", "nosniff"),
]


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


async def explain_with(
    config: SitemapConfig,
    documents: Documents,
    guard: GuardRunner | None,
    urls: list[str],
    probe: Probe | None = None,
) -> list[Explanation]:
    """An :class:`Explanation` of each of ``urls`` (absolute, or paths under the base),
    from a core's ``documents`` and ``guard``. With a guard, ``probe`` (how to ask the
    app for a URL) probes those of ``urls`` that have no verdict, as the guard would."""
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
            answer.problems.append(f"{UNLISTABLE}{exc}")
            continue
        if absolute in found:
            repeats.append((answer, found[absolute]))
        else:
            found[absolute] = answer
    if guard is not None:  # what the guard found, as a fleet's store keeps it
        await guard.recall(list(found))
        if probe is not None:
            await _probe_unknown(guard.guard, guard.book, list(found), probe)
    await _find(documents, config, found, answers)
    for again, first in repeats:
        again.listed, again.left_out = list(first.listed), list(first.left_out)
    return answers


class ExplainEndpoint:
    """The explain endpoint of one site: who may ask (:meth:`trusts`) and the answer."""

    def __init__(
        self, config: SitemapConfig, documents: Documents, guard: GuardRunner | None
    ) -> None:
        self.config, self._documents, self._guard = config, documents, guard
        hosts = config.hosts.hosts if config.hosts is not None else ()
        self._names = site_names(config.base.origin, hosts)

    def trusts(self, request: RequestInfo) -> bool:
        """Whether ``request`` may see the endpoint at all (else it is the app's)."""
        return from_this_machine(request.client, request.headers, self._names)

    async def reply(
        self, request: RequestInfo
    ) -> tuple[int, list[tuple[str, str]], AsyncIterator[bytes] | None]:
        """Status, headers and body of the answer to a trusted ``request`` (the core
        makes it a ``Reply``)."""
        if request.method not in ("GET", "HEAD"):
            raise HTTPError(405, "Method Not Allowed", [("Allow", "GET, HEAD")])
        query = request.query.encode("latin-1", "replace").decode("utf-8", "replace")
        urls = parse_qs(query).get("url", [])
        if not urls:
            raise HTTPError(400, "Bad Request: name the URL to explain: ?url=/path")
        probe = self._guard.probe if self._guard is not None else None
        answers = await explain_with(self.config, self._documents, self._guard, urls, probe)
        accept = parse_accept_header(request.headers.get("accept"), MIMEAccept)
        if accept.best_match(["text/plain", JSON_TYPE], "text/plain") == JSON_TYPE:
            data = json.dumps([answer.as_dict() for answer in answers], indent=2) + "\n"
            content_type = JSON_TYPE
        else:
            data = "\n".join(answer.format_text() for answer in answers) + "\n"
            content_type = TEXT_TYPE
        body = data.encode("utf-8")
        headers = [("Content-Type", content_type), ("Content-Length", str(len(body))), *_HEADERS]
        return 200, headers, None if request.method == "HEAD" else bytes_body(body)


async def _find(
    documents: Documents,
    config: SitemapConfig,
    found: dict[str, Explanation],
    answers: list[Explanation],
) -> None:
    """Fill ``found``'s explanations from the plans and a pass over every section."""
    plans, failed = await documents.plans.plan_all(config.base)
    for name in failed:
        for answer in answers:
            answer.problems.append(f"section {name!r} failed, so whether it lists this is unknown")
    children = documents.index_children(plans)
    finder = _Finder(config.base, found, {(c.section or "", c.number): c.name for c in children})
    by_name = {plan.name: plan for plan in plans}
    notes: list[str] = []  # SKIP names no URL: one no section lists may be one of them
    for section in config.resolved_sections:
        plan = by_name.get(section.name)
        if plan is not None:
            await finder.read(config, section, plan, answers, notes)
    for answer in answers:  # (not a URL no section may list: outside base_url, invalid)
        unlistable = any(p.startswith(UNLISTABLE) for p in answer.problems)
        if not answer.listed and not answer.left_out and not unlistable:
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
                items = "item" if skipped == 1 else "items"
                notes.append(f"section {section.name!r} left out {skipped:,} {items} (SKIP)")
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
