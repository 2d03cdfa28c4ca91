"""The content ledger and kept plans: the records a planning pass makes name what that
pass wrote, so the next request reuses its plan instead of planning the section again
(issue 27: a 1,000,000-row section planned twice on its first two index requests)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from sitemap_middleware import Ledger
from sitemap_middleware.providers import ProviderVersion
from tests.harness.core import fetch, make_core

pytestmark = pytest.mark.anyio


class Versioned:
    """Five rows under one honest version token; counts its passes."""

    def __init__(self, digests: bool, token: str = "v1") -> None:
        self.token = token
        self.passes = 0
        self.rows: list[dict[str, Any]] = [
            {"loc": f"/p/{i}", "lastmod": "2024-05-01", **({"digest": i} if digests else {})}
            for i in range(5)
        ]

    async def entries(self) -> AsyncIterator[dict[str, Any]]:
        self.passes += 1
        for row in self.rows:
            yield dict(row)

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=self.token)


@pytest.mark.parametrize("ledger", [Ledger(), Ledger(source="digest")], ids=["fields", "digest"])
async def test_the_records_a_planning_pass_makes_do_not_plan_the_section_again(
    ledger: Ledger,
) -> None:
    rows = Versioned(digests=ledger.source == "digest")
    core = make_core({"p": rows}, ledger=ledger, max_urls_per_page=2)
    first, body = await fetch(core, "/sitemap_index.xml")
    assert first.status == 200 and body.count(b"<sitemap>") == 3
    plans = core._documents.plans
    assert plans.passes == 1
    again, same = await fetch(core, "/sitemap_index.xml")
    assert again.status == 200 and same == body
    assert plans.passes == 1  # (was 2: the records made moved the section's version)
    rows.token = "v2"  # a new version is planned again, once
    rows.rows[0]["lastmod"] = "2024-06-01"
    await fetch(core, "/sitemap_index.xml")
    await fetch(core, "/sitemap_index.xml")
    assert plans.passes == 2
