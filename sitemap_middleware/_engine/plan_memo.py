"""Plans reused: each section's plan is measured once per content version.

This module alone decides when a plan is reused. The index, ``/sitemap.xml``, pages and
their HEAD and 304 answers all start from section plans; planning means one measuring
pass over the section, so a crawl (the index, then each page) must not plan it again
for every request:

- a section whose version has a token is kept per (base URL, section, token): a token
  changes whenever content does (a last-modified time alone does not see deletions);
- a section without a token is kept for ``Renders.plan_ttl`` seconds while what it
  reports (a time, or nothing) stays the same (0: never kept; then a page request
  measures only up to the page it serves);
- concurrent requests needing the same plan share one planning pass, and its failure:
  a burst against a failing section fails together instead of retrying in turn;
- a section that fails is never kept (the next request tries again).
"""

from __future__ import annotations

import contextlib
import os
from collections import OrderedDict
from datetime import datetime
from time import monotonic

import anyio

from .._caches.store import PlanStore
from .._config import SitemapConfig, _ResolvedSection
from .._exceptions import ProviderError
from .._logs import logger
from .._providers.base import ProviderVersion
from .._sansio.batches import PlainBatch
from .._sansio.urls import BaseURL
from .._sansio.values import to_datetime
from .dedupe import deduplicated, takes_part
from .dedupe_scan import ScanBook
from .plan_codec import decode_plan, encode_plan
from .plan_reports import PlanReports
from .planning import SectionPlan, ledger_rules, plan_section, restamped, section_version
from .store_calls import StoreCalls

__all__ = ["LOG_ESTIMATE_MISSED", "LOG_SECTION_FAILED", "LOG_STALE_PLAN", "PlanMemo"]

LOG_SECTION_FAILED = "sitemap section %r left out of the index: %s"
LOG_ESTIMATE_MISSED = (
    "sitemap section %r: a page planned from row counts was not what its plan said "
    "(larger than its budget, nothing it could serve, or entries newer than the index "
    "dates it): served as it could be, and the section is planned row by row from now on"
)
LOG_STALE_PLAN = "sitemap section %r answered from its last plan while it is planned again"
#: Plans kept: a few sections times a few base URLs (trusted hosts).
MAX_PLANS = 256
#: Seconds a shared plan is kept in the store (each is for one version: never stale).
PLAN_KEEP = 7 * 24 * 3600

_Key = tuple[str, str]


class PlanMemo:
    """Section plans with memory: one measuring pass per content version (per fleet,
    with a store that shares plans)."""

    def __init__(
        self,
        config: SitemapConfig,
        store: PlanStore | None = None,
        calls: StoreCalls | None = None,
    ) -> None:
        self.config = config
        #: Where a fleet's plans are shared, and how a store call is made (a failing
        #: store counts as empty; see ``store_calls.py``).
        self._store = store
        self._calls = calls or StoreCalls()
        self._ttl = config.renders.plan_ttl
        #: (prefix, section) -> (version identity, expiry, plan)
        self._kept: OrderedDict[_Key, tuple[str, float, SectionPlan]] = OrderedDict()
        #: (prefix, section) -> the key ranges its kept plan lists (see lists_range)
        self._listed: dict[_Key, frozenset[str | None]] = {}
        self._planning: dict[_Key, _Planning] = {}
        #: Plans read from the store, and the tokens whose stored plan outgrew a page.
        self._stored: dict[_Key, SectionPlan] = {}
        self._distrusted: dict[_Key, str] = {}
        #: Sections a page of whose estimated plan outgrew its budget: planned row by
        #: row from then on (see ``range_plan.py``).
        self._by_rows: set[_Key] = set()
        #: Planning passes made (for tests and benchmarks).
        self.passes = 0
        self._reports = PlanReports(config, MAX_PLANS)
        #: Whether plans keep their fingerprints (several sections compare theirs).
        taking = [s.news for s in config.resolved_sections if takes_part(s)]
        self._retain = max(taking.count(True), taking.count(False)) > 1
        #: (base prefix, group) -> the raw plans it deduplicated last and the plans made
        #: of them, the newest first (two: a keyset plan's requests during its replan,
        #: answered from the last plan, do not undo the new one's work, nor it theirs).
        self._deduped: dict[tuple[str, str], list[tuple[list[SectionPlan], list[SectionPlan]]]]
        self._deduped = {}
        self._deduping = anyio.Lock()  # (one pass reads again what two would)
        self._pid = os.getpid()
        #: The fingerprints of plans from key ranges, read a chunk at a time.
        self._scans = ScanBook()

    async def plan_all(
        self, base: BaseURL, keep: dict[str, list[PlainBatch]] | None = None
    ) -> tuple[list[SectionPlan], list[str]]:
        """Plans of every section that answers, and the names of those that failed.

        ``keep``: per section, the admitted batches of a planning pass made for this
        request, when its section is one page (see :func:`plan_section`).
        """
        pairs: list[tuple[_ResolvedSection, SectionPlan]] = []
        failed: list[str] = []
        for section in self.config.resolved_sections:
            kept = keep.setdefault(section.name, []) if keep is not None else None
            try:
                pairs.append((section, await self.plan(section, base, kept)))
            except ProviderError as exc:
                logger.error(LOG_SECTION_FAILED, section.name, exc)
                failed.append(section.name)
        reread: set[str] = set()
        plans = await self._deduplicated(base, pairs, reread)
        for plan in plans:
            if (plan.duplicates or plan.name in reread) and keep is not None:
                keep[plan.name].clear()  # read what it left out: the render reads again
        return plans, failed

    async def _deduplicated(
        self,
        base: BaseURL,
        pairs: list[tuple[_ResolvedSection, SectionPlan]],
        reread: set[str] | None = None,
    ) -> list[SectionPlan]:
        """``pairs``' plans, those of sections that take part deduplicated (one URL, one
        listing: ``dedupe.py``) by group (the news sections, and the others),
        as last time while their raw plans are the same."""
        groups: dict[str, list[tuple[_ResolvedSection, SectionPlan]]] = {}
        for section, plan in pairs:
            if takes_part(section):
                groups.setdefault("news" if section.news else "", []).append((section, plan))
        by_name: dict[str, SectionPlan] = {}
        for group, taking in groups.items():
            for plan in await self._group(base, group, taking, reread):
                by_name[plan.name] = plan
        return [by_name.get(plan.name, plan) for _, plan in pairs]

    async def _group(
        self,
        base: BaseURL,
        group: str,
        taking: list[tuple[_ResolvedSection, SectionPlan]],
        reread: set[str] | None,
    ) -> list[SectionPlan]:
        raw = [plan for _, plan in taking]
        key = (base.prefix, group)
        self._forked()
        async with self._deduping:
            kept = self._deduped.setdefault(key, [])
            for last in kept:
                if len(last[0]) >= len(raw) and all(map(_same, last[0], raw)):
                    return last[1][: len(raw)]
            done = await deduplicated(self.config, base, taking, reread)
            kept[:] = [(raw, done), *kept[:1]]
        for plan, before in zip(done, raw, strict=True):
            if plan is not before:
                self._reports.excluded(before.version, plan, dup=True)
                if plan.keyed:  # (the ranges of pages joined are listed too)
                    listed = (base.prefix, plan.name)
                    self._listed[listed] = self._listed.get(listed, frozenset()).union(
                        plan.key_ranges()
                    )
        return done

    async def section_plan(self, section: _ResolvedSection, base: BaseURL) -> SectionPlan:
        """The section's whole plan, deduplicated against the sections before it."""
        pairs = await self._before(section, base)
        plan = await self.plan(section, base)
        return (await self._deduplicated(base, [*pairs, (section, plan)]))[-1]

    async def _before(
        self, section: _ResolvedSection, base: BaseURL
    ) -> list[tuple[_ResolvedSection, SectionPlan]]:
        """The plans of the sections whose URLs the section's pages leave out (those
        before it in its group: news or not; one that fails lists nothing first)."""
        pairs: list[tuple[_ResolvedSection, SectionPlan]] = []
        if not takes_part(section):
            return pairs
        for before in self.config.resolved_sections:
            if before is section:
                break
            if takes_part(before) and before.news == section.news:
                with contextlib.suppress(ProviderError):
                    pairs.append((before, await self.plan(before, base)))
        return pairs

    async def plan(
        self, section: _ResolvedSection, base: BaseURL, keep: list[PlainBatch] | None = None
    ) -> SectionPlan:
        """The section's whole plan: kept for its version, else measured now.

        ``keep`` receives the batches of a pass made now, for the render that follows
        (never kept here: they belong to the request, and go with it).
        """
        version = await section_version(self.config, section)
        return await self._plan(section, base, version, keep)

    async def page_plan(
        self,
        section: _ResolvedSection,
        base: BaseURL,
        page: int,
        keep: list[PlainBatch] | None = None,
    ) -> SectionPlan:
        """A plan reaching ``page`` (1-based): kept, or measured as far as needed."""
        pairs = await self._before(section, base)  # they may list its URLs first
        version = await section_version(self.config, section)
        reread: set[str] = set()  # (then the pass's rows are not served: see plan_all)
        plan: SectionPlan | None = None
        if not _trusted(version) and not self._ttl:
            # Not kept anyway: measure only up to the page asked for.
            self.passes += 1
            plan = await plan_section(
                self.config,
                section,
                base,
                version,
                until_page=page,
                keep=keep,
                retain=self._retain,
            )
            plan = await self._scanned(section, base, plan)
            self._reports.unlisted(_identity(version), plan)
            done = (await self._deduplicated(base, [*pairs, (section, plan)], reread))[-1]
            if len(done.pages) == len(plan.pages):
                plan = done  # (a page emptied joins the next: numbered by a whole plan)
            else:
                plan = None
                if keep is not None:
                    keep.clear()
        if plan is None:
            plan = await self._plan(section, base, version, keep)
            plan = (await self._deduplicated(base, [*pairs, (section, plan)], reread))[-1]
        if (plan.duplicates or section.name in reread) and keep is not None:
            keep.clear()
        return plan

    async def _plan(
        self,
        section: _ResolvedSection,
        base: BaseURL,
        version: ProviderVersion | None,
        keep: list[PlainBatch] | None = None,
    ) -> SectionPlan:
        key = (base.prefix, section.name)
        token = _identity(version)
        self._forked()
        while True:
            kept = self._reusable(key, token)
            if kept is not None:
                return kept
            planning = self._planning.get(key)
            if planning is not None and (stale := self._stale(key, planning)) is not None:
                return stale
            if planning is None or planning.token != token:
                break
            await planning.done.wait()
            if planning.error is not None:
                raise planning.error
            if planning.plan is not None:
                return planning.plan
            # The planning request was cancelled (its client left): plan here instead.
        planning = self._planning[key] = _Planning(token)
        try:
            shared = await self._shared_plan(key, token) if not takes_part(section) else None
            if shared is not None:
                planning.plan = self._stored[key] = shared
                self._keep(key, token, shared)
                return shared
            self.passes += 1
            rules = ledger_rules(section)
            plan = await plan_section(
                self.config,
                section,
                base,
                version,
                keep=keep,
                retain=self._retain,
                counted=key not in self._by_rows,
            )
            planning.plan = await self._scanned(section, base, plan)
            self._reports.unlisted(token, planning.plan)
            # The records the pass made move the version: its plan is the next one's.
            moved = restamped(section, version, rules, planning.plan.span)
            token = _identity(moved or version)
            self._keep(key, token, planning.plan)
            if not takes_part(section):  # (its fingerprints are this process's alone)
                await self._share(key, token, planning.plan)
            return planning.plan
        except Exception as exc:
            planning.error = exc
            raise
        finally:
            if self._planning.get(key) is planning:
                del self._planning[key]
            planning.done.set()

    async def _scanned(
        self, section: _ResolvedSection, base: BaseURL, plan: SectionPlan
    ) -> SectionPlan:
        """A plan from key ranges read no row: its URLs' fingerprints are read now."""
        if not plan.ranged or not takes_part(section):
            return plan
        return await self._scans.scanned(self.config, section, base, plan, self._retain)

    def _forked(self) -> None:
        """In a process forked while planning (a pre-fork server's master warming up),
        drop the passes under way: they run on the parent's loop, never ending here."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._planning.clear()
            self._deduping = anyio.Lock()

    def _store_key(self, key: _Key) -> str:
        return f"plan|{self.config.fingerprint}|{key[0]}|{key[1]}"

    async def _shared_plan(self, key: _Key, token: str) -> SectionPlan | None:
        """The plan another instance made for this version, if the store has it."""
        if self._store is None or not token.startswith("t") or self._distrusted.get(key) == token:
            return None  # only a token says two instances saw the same content
        data = await self._calls.guard("reading", self._store.plan(self._store_key(key)))
        return decode_plan(data, token) if isinstance(data, bytes) else None

    async def _share(self, key: _Key, token: str, plan: SectionPlan) -> None:
        if self._store is None or not token.startswith("t"):
            return
        data = encode_plan(token, plan)
        if data is not None:
            await self._calls.guard(
                "writing", self._store.save_plan(self._store_key(key), data, PLAN_KEEP)
            )

    def lists_range(self, base: BaseURL, section: str, key_range: str) -> bool:
        """Whether the section's latest plan lists the page ``key_range``: such a page is
        worth storing (the index sends crawlers to it); ranges anyone can make up are
        not. Any kept plan will do: a range page is validated by its own rows."""
        return key_range in self._listed.get((base.prefix, section), ())

    def estimated_lastmod(self, base: BaseURL, section: str, key_range: str) -> datetime | None:
        """The lastmod the index gave the page ``key_range`` of a plan estimated from row
        counts (the lastmod column's): an entry newer than it ends such plans."""
        kept = self._kept.get((base.prefix, section))
        if kept is None or not kept[2].estimated:
            return None
        for page, token in zip(kept[2].pages, kept[2].key_ranges(), strict=True):
            if token == key_range:
                return to_datetime(page.lastmod) if page.lastmod is not None else None
        return None

    def outgrew(self, base: BaseURL, section: str, missed: bool = True) -> None:
        """A page outgrew its budget (or listed nothing, or held entries dated after the
        index): a plan read from the store (made by other code, before a deploy, say:
        same token) is dropped, and planned here at the next request; so is one whose
        bytes were estimated when ``missed`` (its bytes or dates, not rows inserted since,
        missed the plan), and the section is planned row by row from then on."""
        key = (base.prefix, section)
        kept = self._kept.get(key)
        if kept is None:
            return
        stored = self._stored.pop(key, None) is kept[2]
        estimated = kept[2].estimated and missed
        if not stored and not estimated:
            return  # (rows inserted since the index: the next version plans them)
        if stored:
            self._distrusted[key] = kept[0]
        if estimated and key not in self._by_rows:
            self._by_rows.add(key)
            logger.warning(LOG_ESTIMATE_MISSED, section)
        del self._kept[key]
        self._listed.pop(key, None)

    def _stale(self, key: _Key, planning: _Planning) -> SectionPlan | None:
        """The last plan of a keyset section while it is planned again (stale-while-
        replan): its key ranges still name pages that serve their rows as they are now,
        so requests need not wait for the new plan. Bounded by the replan itself; logged
        once per replan."""
        kept = self._kept.get(key)
        if kept is None or not kept[2].keyed or kept[0] == planning.token:
            return None
        if not planning.stale_logged:
            planning.stale_logged = True
            logger.info(LOG_STALE_PLAN, key[1])
        return kept[2]

    def _reusable(self, key: _Key, token: str) -> SectionPlan | None:
        kept = self._kept.get(key)
        if kept is None or kept[0] != token:
            return None
        if not token.startswith("t") and monotonic() >= kept[1]:
            return None  # a section that cannot say whether it changed: kept for plan_ttl
        self._kept.move_to_end(key)
        return kept[2]

    def _keep(self, key: _Key, token: str, plan: SectionPlan) -> None:
        if not token.startswith("t") and not self._ttl:
            return
        self._kept[key] = (token, monotonic() + self._ttl, plan)
        self._kept.move_to_end(key)
        # Looked up by every key-range page: encoded once per plan, not per request.
        self._listed[key] = frozenset(plan.key_ranges()) if plan.keyed else frozenset()
        while len(self._kept) > MAX_PLANS:
            self._listed.pop(self._kept.popitem(last=False)[0], None)


class _Planning:
    """A planning pass under way, and its outcome for the requests waiting on it."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.done = anyio.Event()
        self.plan: SectionPlan | None = None
        self.error: Exception | None = None
        self.stale_logged = False


def _same(one: SectionPlan, other: SectionPlan) -> bool:
    return one is other


def _trusted(version: ProviderVersion | None) -> bool:
    """Whether the version has a token (which changes whenever content does)."""
    return version is not None and bool(version.token)


def _identity(version: ProviderVersion | None) -> str:
    """What a kept plan must match: the token ("t..."), else whatever the version says
    ("u...", a time or nothing; such a plan is also bounded by plan_ttl, as a time alone
    misses deletions)."""
    if version is not None and version.token:
        return "t" + version.token
    modified = version.last_modified if version is not None else None
    return "u" + (modified.isoformat() if modified is not None else "")
