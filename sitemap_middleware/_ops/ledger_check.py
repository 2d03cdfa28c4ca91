"""What ``check --app`` reads from the app's content ledger: lastmods that moved while
their content did not.

The rest of ``check`` judges what any site serves; this reads our middleware in process
(the app ``--app`` loaded, after the crawl went through it): per section, the URLs whose
provider lastmod moved on while their content digest stayed (the ledger writes the time
their content was first seen instead, and counts them). Google ignores lastmods that
are not consistently accurate: a provider that bumps them on every save or deploy is
worth fixing at its source.
"""

from __future__ import annotations

from .explain import site_for
from .findings import CheckReport

__all__ = ["CODE", "check_ledger"]

CODE = "lastmod-without-content"
#: URLs a finding names (the ledger keeps a few per section; the count is exact).
NAMED = 3


def check_ledger(served: object, start: str, report: CheckReport) -> None:
    """Add a warning per section whose ledger holds lastmods (``served``: what the app's
    sitemap middleware serves, :func:`find_served`)."""
    config = site_for(served, start)
    if config is None or config.ledger_book is None:
        return
    book = config.ledger_book
    for section in config.resolved_sections:
        count, examples = book.held(section.name)
        if not count:
            continue
        named = examples[:NAMED]
        urls = "; ".join(
            f"{loc} (provider: {said}, written: {written})" for loc, said, written in named
        )
        more = f"; and {count - len(named):,} more" if count > len(named) else ""
        whose, its = ("URL's", "its") if count == 1 else ("URLs'", "their")
        report.add(
            "warning",
            CODE,
            f"section {section.name!r}: {count:,} {whose} lastmod moved while {its} content "
            "did not; the content ledger writes when the content was first seen (fix the "
            f"lastmods at their source): {urls}{more}",
            url=named[0][0] if named else None,
        )
    store = config.renders.store
    if store is None or not store.shared:
        report.notes.append(
            "the content ledger keeps its records in process: a check --app run starts "
            "without the serving processes' records, so it sees only the lastmods that "
            "moved without their content during its own run (the servers count theirs: "
            "sitemap_lastmod_moved_without_content_total); with a shared "
            "Renders(store=RedisRenderStore(...)) check reads the fleet's"
        )
