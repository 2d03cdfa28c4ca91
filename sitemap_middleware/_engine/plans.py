"""Plans reused: each site's section plans are computed once per content version.

This module alone decides when a plan is reused. The index, ``/sitemap.xml`` and their
HEAD and 304 answers all start from the plans of every section; planning a section that
cannot count itself means reading all of it, so a crawl (the index, then each page) must
not plan it again for every request:

- plans are kept per base URL while every section reports the same version
  (:func:`version_parts`: token and time; and the same news window);
- when some section reports no version, for ``Renders.plan_ttl`` seconds (0: never kept);
- concurrent requests needing the same plans wait for one planning pass;
- plans with a failed section are never kept (the next request tries again).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from time import monotonic

import anyio

from .._config import SitemapConfig
from .._exceptions import ProviderError
from .._sansio.etag import version_parts
from .._sansio.urls import BaseURL
from .plan import SectionPlan, news_cutoff, plan_all, section_version

__all__ = ["PlanMemo"]

#: Base URLs whose plans are kept (one unless trusted hosts serve several).
MAX_SITES = 64

Versions = tuple[tuple[str, ...] | None, ...]


class PlanMemo:
    """``plan_all`` with memory: one planning pass per content version."""

    def __init__(self, config: SitemapConfig) -> None:
        self.config = config
        self._ttl = config.renders.plan_ttl
        self._kept: OrderedDict[str, tuple[Versions, float, list[SectionPlan]]] = OrderedDict()
        self._locks: dict[str, anyio.Lock] = {}
        #: Planning passes made (for tests and benchmarks).
        self.passes = 0

    async def plan_all(self, base: BaseURL) -> tuple[list[SectionPlan], list[str]]:
        """Plans of every section that answers, and the names of those that failed."""
        prefix = base.prefix
        lock = self._locks.setdefault(prefix, anyio.Lock())
        async with lock:
            try:
                versions = await self._versions()
            except ProviderError:
                versions = None  # plan_all reports the failing section
            if versions is not None and (kept := self._reusable(prefix, versions)) is not None:
                return list(kept), []
            self.passes += 1
            plans, failed = await plan_all(self.config, base)
            if versions is not None and not failed:
                self._keep(prefix, versions, plans)
            return plans, failed

    async def _versions(self) -> Versions:
        config = self.config
        versions: list[tuple[str, ...] | None] = []
        for section in config.resolved_sections:
            parts = version_parts(await section_version(config, section))
            cutoff = news_cutoff(config, section)  # a news window moves the plan hourly
            versions.append(parts if parts is None or cutoff is None else (*parts, str(cutoff)))
        return tuple(versions)

    def _reusable(self, prefix: str, versions: Versions) -> Sequence[SectionPlan] | None:
        kept = self._kept.get(prefix)
        if kept is None or kept[0] != versions:
            return None
        if None in versions and monotonic() >= kept[1]:
            return None  # a section that cannot say whether it changed: kept for plan_ttl
        self._kept.move_to_end(prefix)
        return kept[2]

    def _keep(self, prefix: str, versions: Versions, plans: list[SectionPlan]) -> None:
        if None in versions and not self._ttl:
            return
        self._kept[prefix] = (versions, monotonic() + self._ttl, list(plans))
        self._kept.move_to_end(prefix)
        while len(self._kept) > MAX_SITES:
            self._kept.popitem(last=False)
