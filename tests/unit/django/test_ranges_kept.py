"""With ``version_field``, a QuerySet section's next plan measures only the ranges holding
rows whose revision moved (issue 23, item 3), through the SQL provider's own logic
(``_providers/sql_ranges.py``): after one row's update or insert, the range holding it;
after a delete (the counts no longer add up), every range; without ``version_field``,
every range. Whatever the writes, the kept plan lists what a fresh plan lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware import Section
from sitemap_middleware._django.ranges import QuerySetRanges
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware._providers import sql_ranges
from tests.harness.django import (
    ALIASES,
    RevisionedRows,
    alias_or_skip,
    core_for,
    get,
    locs,
    locs_of_index,
)

pytestmark = pytest.mark.usefixtures("django_project")
BUDGET = 4096
#: What a write does: a rename, a new row, a deleted row, a location gone NULL.
WRITES = st.tuples(st.sampled_from(["rename", "insert", "delete", "null"]), st.integers(0, 10**6))
#: (after, upto, rows) of every grouped window query the planner ran.
Measured = list[tuple[Any, Any, int]]


def _core(alias: str, *, version: bool = True, max_urls: int = 200) -> SitemapCore:
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Revisioned

    provider = DjangoQuerySetProvider(
        Revisioned.objects.using(alias),
        lastmod="updated",
        location="/r/{code}/{id}",
        version_field="revision" if version else None,
        metadata_ttl=0,
    )
    sections = {"rows": Section(provider, max_urls=max_urls)}
    return core_for({}, sections=sections, max_bytes_per_page=BUDGET)


def _crawl(core: SitemapCore) -> list[str]:
    """Every URL the index's pages list, each page held to the byte budget."""
    status, _, index = get(core, "/sitemap_index.xml")
    if status == 404:
        return []
    assert status == 200
    urls: list[str] = []
    for child in locs_of_index(index):
        # key-range pages: the plan came from the ranges (a plan the budget refuses them
        # falls back to reading every row, and kept ranges would go untested)
        assert "~" in child, child
        status, _, body = get(core, child.removeprefix("https://example.com"))
        assert status == 200 and len(body) <= BUDGET, (child, len(body))
        urls.extend(locs(body))
    return urls


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> Iterator[Measured]:
    calls: Measured = []
    measure = QuerySetRanges.measure

    def counting(self: QuerySetRanges, types: Any, per_range: int, after: Any, upto: Any) -> Any:
        found = measure(self, types, per_range, after, upto)
        calls.append((after, upto, sum(each.rows for each in found)))
        return found

    monkeypatch.setattr(QuerySetRanges, "measure", counting)
    yield calls


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("kind", ["rename", "insert"])
def test_after_one_write_the_next_index_measures_the_range_holding_it(
    alias: str, kind: str, measured: Measured
) -> None:
    """3,000 rows: after one row's UPDATE (or INSERT) the next index measures the range
    holding its key (at most a tenth of the rows) and lists what a fresh plan lists."""
    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(3000)
    core = _core(alias)
    assert get(core, "/sitemap_index.xml")[0] == 200
    assert measured == [(None, None, 3000)]
    measured.clear()
    rows.write(kind, 1500)
    kept = _crawl(core)
    assert len(measured) == 1, measured
    after, upto, count = measured[0]
    assert after is not None and upto is not None and 0 < count <= 300, measured
    assert sorted(kept) == sorted(_crawl(_core(alias))) and len(kept) == len(set(kept))
    assert f"https://example.com/r/{'r' if kind == 'rename' else 'n'}1500/" in str(kept)


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("version", [True, False])
def test_a_delete_or_no_version_field_measures_every_range(
    alias: str, version: bool, measured: Measured
) -> None:
    """A deleted row leaves no revision: the counts no longer add up, so every range is
    measured again; without version_field any write measures every range."""
    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(3000)
    core = _core(alias, version=version)
    get(core, "/sitemap_index.xml")
    measured.clear()
    rows.write("delete" if version else "rename", 1500)
    kept = _crawl(core)
    assert measured == [(None, None, 2999 if version else 3000)]
    assert sorted(kept) == sorted(_crawl(_core(alias, version=version)))


@pytest.mark.slow
@pytest.mark.parametrize("alias", ALIASES)
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    count=st.integers(0, 200),
    writes=st.lists(WRITES, min_size=1, max_size=6),
    max_urls=st.integers(20, 60),
    halves=st.booleans(),
)
def test_ranges_measured_again_only_where_rows_changed_serve_what_a_fresh_plan_serves(
    alias: str,
    count: int,
    writes: list[tuple[str, int]],
    max_urls: int,
    halves: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After every write, a crawl of the kept plan lists exactly the URLs a crawl of a
    fresh provider lists, each once, no page over budget."""
    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(count)
    monkeypatch.setattr(sql_ranges, "PARALLEL_ROWS", 1 if halves else 10**12)
    core = _core(alias, max_urls=max_urls)
    get(core, "/sitemap_index.xml")
    for kind, number in writes:
        rows.write(kind, number)
        kept = _crawl(core)
        assert len(kept) == len(set(kept))
        assert sorted(kept) == sorted(_crawl(_core(alias, max_urls=max_urls)))
        assert len(kept) == len(rows.ids) - rows.objects.filter(code=None).count()


@pytest.mark.parametrize("alias", ALIASES)
def test_a_sitemap_declaring_version_field_measures_the_range_holding_a_change(
    alias: str, measured: Measured
) -> None:
    """A ``Sitemap`` with ``location_template`` and ``version_field`` is served the same way."""
    from django.contrib.sitemaps import Sitemap

    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(3000)

    class Revisions(Sitemap):
        location_template = "/r/{code}/{id}"
        lastmod_field = "updated"
        version_field = "revision"

        def items(self) -> Any:
            return rows.objects.all()

    core = core_for({"rows": Revisions}, max_bytes_per_page=BUDGET)
    get(core, "/sitemap_index.xml")
    measured.clear()
    rows.write("rename", 10)
    section: Any = core.config.sections["rows"]
    section.provider.forget()  # (a Sitemap keeps metadata_ttl=1)
    assert "https://example.com/r/r10/33" in str(_crawl(core))
    assert len(measured) == 1 and measured[0][1] is not None and measured[0][2] <= 600, measured


@pytest.mark.parametrize("alias", ALIASES)
def test_a_revision_reset_measures_every_range(alias: str, measured: Measured) -> None:
    """Every row rewritten (longer codes) under a revision below the kept one (a reset
    counter, a restored dump): nothing is above the kept revision and the count is the
    same, yet every range changed. They are measured again: kept, their old bytes cut
    pages at the budget and 64 of 600 URLs went missing."""
    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(600)
    core = _core(alias, max_urls=200)  # (ranges of 9 rows: a page holds several)
    get(core, "/sitemap_index.xml")
    measured.clear()
    rows.objects.update(code="x" * 30, revision=1)
    crawled = _crawl(core)
    assert measured and measured[0][:2] == (None, None), measured
    assert sorted(crawled) == sorted(_crawl(_core(alias, max_urls=200)))
