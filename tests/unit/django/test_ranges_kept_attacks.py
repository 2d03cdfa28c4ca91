"""Attacks on kept ranges (version_field): writes the revision does not order."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness.django import ALIASES, RevisionedRows, alias_or_skip, get
from tests.unit.django.test_ranges_kept import BUDGET, Measured, _core, _crawl, measured

pytestmark = pytest.mark.usefixtures("django_project")
__all__ = ["measured"]


@pytest.mark.parametrize("alias", ALIASES)
def test_a_revision_reset_measures_every_range(alias: str, measured: Measured) -> None:
    """Every row rewritten (longer codes) under revisions below the kept one (a reset
    counter, a restored dump): nothing is above the kept revision and the count is the
    same, yet every range changed: they are measured again, no page over budget."""
    rows = RevisionedRows(alias_or_skip(alias))
    rows.fill(600)
    core = _core(alias, max_urls=200)
    get(core, "/sitemap_index.xml")
    measured.clear()
    rows.objects.update(code="x" * 30, revision=1)
    crawled = _crawl(core)
    assert measured and measured[0][:2] == (None, None), measured
    assert sorted(crawled) == sorted(_crawl(_core(alias, max_urls=200)))
