"""Crawls of a Django QuerySet section with ``version_field`` while another thread writes
(issue 23 item 3), as test_concurrent_writes.py does for the SQL provider: every plan after
the first keeps the ranges no revision moved in and measures the others again, while the
writer renames, moves lastmods and inserts (every other crawl). What must hold: every page
the index lists answers 200 within budget; no row on two pages of one crawl; every row
that existed before the crawl on some page, unless a page's range outgrew its budget.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Any

import pytest

from sitemap_middleware import Section
from tests.harness.django import ALIASES, RevisionedRows, alias_or_skip, core_for, get, locs
from tests.harness.documents import check_document, child_urls
from tests.harness.sql import Outgrown

pytestmark = pytest.mark.usefixtures("django_project")
MAX_URLS = 8
MAX_BYTES = 4096
CRAWLS = 6


def _writer(
    rows: RevisionedRows, inserts: list[bool], writes: list[int], stop: threading.Event
) -> None:
    """One statement per transaction (autocommit), revisions in commit order."""
    from django.db import connections

    rng = random.Random(23)
    try:
        while not stop.is_set():
            kind = "insert" if inserts[0] and rng.random() < 0.3 else "rename"
            rows.write(kind, rng.randrange(300))
            writes[0] += 1
            time.sleep(0.002)  # SQLite (a rollback journal): let readers take their lock
    finally:
        connections.close_all()  # this thread's


@pytest.mark.slow
@pytest.mark.parametrize("alias", ALIASES)
def test_crawls_of_kept_ranges_while_another_thread_writes(
    alias: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every listed page answers 200 within budget; each row on one page; none missed."""
    from sitemap_middleware._django.ranges import QuerySetRanges
    from sitemap_middleware.django import DjangoQuerySetProvider

    bounds: list[tuple[Any, Any]] = []
    measure = QuerySetRanges.measure

    def recorded(self: QuerySetRanges, types: Any, per_range: int, after: Any, upto: Any) -> Any:
        bounds.append((after, upto))
        return measure(self, types, per_range, after, upto)

    monkeypatch.setattr(QuerySetRanges, "measure", recorded)

    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(130)  # keys 3..390: inserts land inside planned ranges and past them
    provider = DjangoQuerySetProvider(
        rows.objects.all(),
        lastmod="updated",
        location="/r/{code}/{id}",
        version_field="revision",
        metadata_ttl=0,
    )
    sections = {"rows": Section(provider, max_urls=MAX_URLS)}
    core = core_for({}, sections=sections, max_bytes_per_page=MAX_BYTES)
    outgrown = Outgrown()
    logging.getLogger("sitemap_middleware").addHandler(outgrown)
    inserts, writes, during, whole = [False], [0], [], 0
    stop = threading.Event()
    thread = threading.Thread(target=_writer, args=(rows, inserts, writes, stop))
    thread.start()
    try:
        for crawl in range(CRAWLS):
            inserts[0] = crawl % 2 == 1
            done, warnings = writes[0], outgrown.count
            before = set(rows.objects.values_list("pk", flat=True))
            status, _, index = get(core, "/sitemap_index.xml")
            assert status == 200, index
            seen: list[int] = []
            for url in child_urls(check_document(index)):
                status, _, body = get(core, url.removeprefix("https://example.com"))
                assert status == 200 and len(body) <= MAX_BYTES, (url, status, len(body))
                found = locs(body)
                assert 1 <= len(found) <= MAX_URLS
                seen += [int(each.rsplit("/", 1)[1]) for each in found]
            assert len(seen) == len(set(seen)), "a row was listed on two pages of one crawl"
            if outgrown.count == warnings:
                assert not before - set(seen), "rows that existed before the crawl were missed"
                whole += 1
            during.append(writes[0] - done)
    finally:
        stop.set()
        thread.join()
        logging.getLogger("sitemap_middleware").removeHandler(outgrown)
    print(f"writes during each crawl: {during}; range measures: {len(bounds)}")
    assert min(during) > 0, "the writer did not write while crawls ran"
    assert any(bound != (None, None) for bound in bounds), "no plan kept a range"
    assert whole >= CRAWLS // 2, "crawls without inserts must find every row"
