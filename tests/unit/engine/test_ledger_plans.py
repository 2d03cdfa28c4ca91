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


async def test_a_plan_is_not_kept_for_records_another_pass_moved_while_it_was_made() -> None:
    """A page render during the planning pass dates a row's new content (a digest the
    provider's version does not name): the plan wrote the old record, so it must not
    be kept under the records as they are now (its index would keep the old lastmod)."""
    revisions = {f"/p/{i}": "r1" for i in range(1500)}
    hooked: list[bytes] = []

    class Provider:
        async def entries(self) -> AsyncIterator[dict[str, Any]]:
            for i in range(1500):
                if i == 1200 and revisions["/p/0"] == "r1":  # (past /p/0's batch)
                    revisions["/p/0"] = "r2"
                    hooked.append((await fetch(core, "/sitemap-p-1.xml"))[1])  # (a render)
                yield {"loc": f"/p/{i}"}

        async def version(self) -> ProviderVersion:
            return ProviderVersion(token="v1")

    core = make_core(
        {"p": Provider()},
        ledger=Ledger(source="digest", digest=lambda item: revisions[item["loc"]]),
        max_urls_per_page=1000,
    )
    await fetch(core, "/sitemap_index.xml")
    _, page = await fetch(core, "/sitemap-p-1.xml")
    assert hooked and page == hooked[0]  # (the render's record holds)
    _, index = await fetch(core, "/sitemap_index.xml")
    newest = page.split(b"<lastmod>")[1].split(b"<")[0]
    assert index.split(b"<lastmod>")[1].split(b"<")[0] == newest
