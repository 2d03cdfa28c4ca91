"""A Django section's version with ``version_field`` reads each aggregate on its own
(``_django/summary.py``): index lookups instead of one pass over every row (issue 23,
item 3: the index after one write was 0.12-0.16x the first index, nearly all of it this
pass). Whatever the rows, it reads what the one-statement aggregate reads."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness.django import ALIASES, alias_or_skip

pytestmark = pytest.mark.usefixtures("django_project")
DAY = datetime(2024, 2, 1, tzinfo=timezone.utc)
ROWS = st.lists(
    st.tuples(
        st.integers(1, 400),  # key
        st.one_of(st.none(), st.text("abc", min_size=1, max_size=3)),  # code
        st.one_of(st.none(), st.integers(0, 100)),  # lastmod, in hours (None: no lastmod)
        st.integers(1, 10**6),  # revision
    ),
    max_size=12,
    unique_by=lambda row: row[0],
)


def _provider(alias: str) -> Any:
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Revisioned

    return DjangoQuerySetProvider(
        Revisioned.objects.using(alias),
        lastmod="updated",
        location="/r/{code}/{id}",
        version_field="revision",
        metadata_ttl=0,
    )


def _write(alias: str, rows: list[tuple[int, str | None, int | None, int]]) -> None:
    from tests.djangoproject.shop.models import Revisioned

    objects = Revisioned.objects.using(alias)
    objects.all().delete()
    objects.bulk_create(
        Revisioned(
            pk=key,
            code=code,
            updated=None if hours is None else DAY + timedelta(hours=hours),
            revision=revision,
        )
        for key, code, hours, revision in rows
    )


@pytest.mark.parametrize("alias", ALIASES)
def test_split_and_single_statement_summaries_agree(alias: str) -> None:
    name = alias_or_skip(alias)
    provider = _provider(name)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(rows=ROWS)
    def agree(rows: list[tuple[int, str | None, int | None, int]]) -> None:
        _write(name, rows)
        split = provider._versions.aggregate(provider._queryset, True)
        whole = provider._versions.aggregate(provider._queryset, False)
        assert split == whole

    try:
        agree()
    finally:
        _write(name, [])


@pytest.mark.parametrize("alias", ALIASES)
def test_the_section_version_reads_each_aggregate_alone(alias: str) -> None:
    """No statement of the section's version reads COUNT beside MAX (one pass over every
    row); a range's version (its own rows only) stays one statement."""
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    name = alias_or_skip(alias)
    _write(name, [(3, "a", 1, 1), (6, "b", None, 2), (9, "c", 5, 3)])
    provider = _provider(name)
    try:
        with CaptureQueriesContext(connections[name]) as queries:
            provider._versions.aggregate(provider._queryset, True)
        statements = [query["sql"].upper() for query in queries.captured_queries]
        assert len(statements) >= 4, statements
        assert not any("COUNT(" in each and "MAX(" in each for each in statements), statements
    finally:
        _write(name, [])
