"""The listed URLs themselves: each must answer 200, stay indexable and be canonical.

What an answer means is read by ``_sansio/indexable.py`` (the guard reads it too): the
problems Search Console reports as "Submitted URL not found (404)", "... has crawl
issue", "Page with redirect", "Submitted URL marked 'noindex'" and "Alternate page with
proper canonical tag".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import anyio

from .._sansio.indexable import HEAD_BYTES, page_signals, url_problems
from .fetch import Fetched, Fetcher
from .findings import CheckReport

__all__ = ["HEAD_BYTES", "check_listed_urls", "judge", "page_signals"]


def judge(url: str, document: str, fetched: Fetched, report: CheckReport) -> None:
    """Findings for one listed URL's response (read by ``_sansio/indexable.py``)."""
    where = {"document": document, "url": url}
    if fetched.error is not None:
        report.add("error", "url-unreachable", fetched.error, **where)
        report.failed(fetched.failure, url)
        return
    for problem in url_problems(url, fetched.status, fetched.header, fetched.body):
        report.add(problem.severity, problem.code, problem.message, **where)


async def check_listed_urls(
    fetcher: Fetcher,
    urls: Iterable[tuple[str, str]],
    report: CheckReport,
    advance: Callable[[], None] | None = None,
    workers: int = 8,
) -> None:
    """GET every ``(url, document)`` once (no redirects followed) and judge the answer.

    A few workers share one iterator, so a million URLs never become a million tasks;
    the fetcher bounds concurrency and rate on top.
    """
    pending = iter(urls)

    async def worker() -> None:
        for url, document in pending:
            fetched = await fetcher.fetch(url, headers={"Accept": "text/html,*/*;q=0.8"})
            judge(url, document, fetched, report)
            report.urls_checked += 1
            if advance is not None:
                advance()

    async with anyio.create_task_group() as group:
        for _ in range(workers):
            group.start_soon(worker)
