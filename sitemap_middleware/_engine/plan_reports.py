"""What planning passes left out, reported once per content (``plan_memo.py``'s)."""

from __future__ import annotations

from .._config import SitemapConfig
from .._logs import OncePerContent, logger
from .._sansio.dedupe import DUPLICATE
from .observe import tell_observers
from .planning import SectionPlan

__all__ = ["LOG_EXCLUDED", "LOG_UNLISTED", "PlanReports"]

#: What a planning pass left out on purpose (SKIP, exclude patterns, robots.txt).
LOG_EXCLUDED = "sitemap section %r left out %d of its %d items on purpose (%s)"
LOG_UNLISTED = (
    "sitemap section %r lists no URL: %d of its %d items were left out as invalid, so "
    "the index leaves it out (the first: %s)"
)


class PlanReports:
    """What was last reported of a section listing nothing, and of what it left out on
    purpose (at most ``most`` sections each)."""

    def __init__(self, config: SitemapConfig, most: int) -> None:
        self.config = config
        self._unlisted = OncePerContent(most)
        self._excluded = OncePerContent(most)

    def unlisted(self, token: str, plan: SectionPlan) -> None:
        """Warn when a pass left every item of a section out: nothing else would.

        The pass is quiet (its entries are logged when their page is served), and such
        a section has no page: the index leaves it out, and ``/sitemap.xml`` may answer
        404. Reported once per content: again when the version or what was left out
        changes (a provider without a token is measured anew on each request), or when
        the section relapses after listing URLs; not once per base URL (trusted hosts
        see the same content). Left out beside valid entries, entries are logged with
        their page, as ever.
        """
        self.excluded(token, plan)
        name = plan.name
        if plan.count or not plan.left_out:
            self._unlisted.forget(name)
            return
        seen = f"{token}|{plan.total}|{plan.left_out}|{plan.first_left_out}"
        if self._unlisted.is_new(name, seen):
            logger.warning(LOG_UNLISTED, name, plan.left_out, plan.total, plan.first_left_out)

    def excluded(self, token: object, plan: SectionPlan, dup: bool = False) -> None:
        """Log (INFO) and count (observers' ``entries_excluded``) what a pass left out on
        purpose, once per content: again when the version or the counts change. The
        duplicates (``dup``) are told apart, once the site's plans are known."""
        excluded = ((DUPLICATE, plan.dropped),) if dup and plan.dropped else plan.excluded
        name = plan.name + ("|duplicate" if dup else "")
        if not excluded:
            self._excluded.forget(name)
            return
        if not self._excluded.is_new(name, f"{token}|{plan.total}|{excluded}"):
            return
        counts = ", ".join(f"{reason}: {number}" for reason, number in excluded)
        total = sum(number for _, number in excluded)
        logger.info(LOG_EXCLUDED, plan.name, total, plan.total, counts)
        for reason, number in excluded:
            tell_observers(self.config.observers, "entries_excluded", plan.name, reason, number)
