"""Plans reused: one planning pass per content version (or per plan_ttl without one)."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from sitemap_middleware import Renders
from sitemap_middleware._engine import plan_memo
from tests.harness.core import SitemapCore, fetch, header, make_core
from tests.harness.documents import check_document, page_urls
from tests.harness.providers import CountingProvider

pytestmark = pytest.mark.anyio


class Rows:
    """A plain generator function (no count, no version) that counts its passes."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.passes = 0

    def __call__(self) -> Iterator[dict[str, object]]:
        self.passes += 1
        for i in range(self.n):
            yield {"loc": f"/r/{i}?a=1&b=2", "lastmod": "2024-05-01", "priority": 0.5}


def _core(sections: dict[str, object], **renders: float) -> SitemapCore:
    return make_core(
        sections,
        max_urls_per_page=100,
        renders=Renders(**renders),  # type: ignore[arg-type]
    )


async def test_a_crawl_plans_an_unversioned_section_once_within_plan_ttl(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Index, sitemap.xml, HEAD and 304 within plan_ttl: one planning pass; after it, one more."""
    now = [1000.0]
    monkeypatch.setattr(plan_memo, "monotonic", lambda: now[0])
    rows = Rows(250)
    core = _core({"r": rows}, plan_ttl=30)
    index, body = await fetch(core, "/sitemap_index.xml")
    assert index.status == 200 and body.count(b"<sitemap>") == 3
    assert rows.passes == 1
    again, _ = await fetch(core, "/sitemap.xml")
    head, _ = await fetch(core, "/sitemap_index.xml", method="HEAD")
    assert again.status == head.status == 200 and rows.passes == 1
    now[0] += 31
    await fetch(core, "/sitemap_index.xml")
    assert rows.passes == 2


async def test_plan_ttl_zero_plans_every_time() -> None:
    """plan_ttl=0: a section without a version is planned on every request."""
    rows = Rows(50)
    core = _core({"r": rows}, plan_ttl=0)
    for _ in range(3):
        await fetch(core, "/sitemap_index.xml")
    assert rows.passes == 3


async def test_versioned_sections_are_planned_once_per_version() -> None:
    """With versions, plans hold until a version changes (whatever the time)."""
    provider = CountingProvider(250)
    core = _core({"p": provider}, plan_ttl=0)
    first, _ = await fetch(core, "/sitemap_index.xml")
    etag = header(first, "ETag")
    assert etag is not None
    not_modified, _ = await fetch(core, "/sitemap_index.xml", if_none_match=etag)
    assert not_modified.status == 304
    await fetch(core, "/sitemap_index.xml")
    assert core._documents.plans.passes == 1
    provider.n = 260  # a new version token
    await fetch(core, "/sitemap_index.xml")
    assert core._documents.plans.passes == 2


async def test_concurrent_index_requests_share_one_planning_pass() -> None:
    """Twenty concurrent cold index requests: one pass over the section."""
    rows = Rows(300)
    core = _core({"r": rows})

    async def get() -> None:
        reply, _ = await fetch(core, "/sitemap_index.xml")
        assert reply.status == 200

    async with anyio.create_task_group() as group:
        for _ in range(20):
            group.start_soon(get)
    assert rows.passes == 1


async def test_a_plan_with_a_failed_section_is_not_kept() -> None:
    """A failing section leaves the index incomplete and is planned again on the next
    request; a section that answered keeps its plan (plan_ttl)."""
    good = Rows(50)
    broken = CountingProvider(50, fail_after=0, countable=False, versioned=False)
    core = _core({"good": good, "broken": broken}, plan_ttl=30)
    for _ in range(2):
        reply, _ = await fetch(core, "/sitemap_index.xml")
        assert header(reply, "Cache-Control") == "no-store"
    assert good.passes == 1
    assert broken.iterations == 2


class PlainRows(Rows):
    """Rows in the form most providers hand over (absolute URLs, W3C texts): plain batches.

    ``bad``: positions of entries with an invalid lastmod (logged when served).
    """

    def __init__(self, n: int, bad: tuple[int, ...] = (), path: str = "p") -> None:
        super().__init__(n)
        self.bad = bad
        self.path = path

    def __call__(self) -> Iterator[dict[str, object]]:
        self.passes += 1
        for i in range(self.n):
            lastmod = "2024-13-01" if i in self.bad else f"2024-05-{1 + i % 28:02d}"
            yield {"loc": f"https://example.com/{self.path}/{i}?a=1&b=2", "lastmod": lastmod}


async def test_a_cold_one_page_section_is_read_once_for_its_page() -> None:
    """Planning a one-page section keeps what it read for the render that follows; the
    page is the one a later request (with the plan kept) reads and renders again."""
    rows = PlainRows(80)
    core = _core({"r": rows}, plan_ttl=30)
    cold, body = await fetch(core, "/sitemap-r-1.xml")
    assert cold.status == 200 and rows.passes == 1
    assert page_urls(check_document(body)) == [
        f"https://example.com/p/{i}?a=1&b=2" for i in range(80)
    ]
    again, same = await fetch(core, "/sitemap-r-1.xml")
    assert again.status == 200 and rows.passes == 2 and same == body
    fresh = _core({"r": PlainRows(80)}, plan_ttl=0)  # measured up to the page only
    assert (await fetch(fresh, "/sitemap-r-1.xml"))[1] == body


async def test_a_cold_sitemap_xml_reads_each_section_once() -> None:
    first, second = PlainRows(30), PlainRows(40, path="q")
    core = _core({"a": first, "b": second})
    reply, body = await fetch(core, "/sitemap.xml")
    assert reply.status == 200 and first.passes == second.passes == 1
    assert len(page_urls(check_document(body))) == 70
    head, _ = await fetch(
        _core({"a": PlainRows(30), "b": PlainRows(40)}), "/sitemap.xml", method="HEAD"
    )
    assert head.status == 200


@pytest.mark.parametrize("plan_ttl", [0, 30])
async def test_what_planning_read_is_not_kept_past_one_page(plan_ttl: float) -> None:
    """A section of two pages is read again for its page (the planning pass held one page
    at most, and let it go)."""
    rows = PlainRows(150)  # max_urls_per_page=100
    core = _core({"r": rows}, plan_ttl=plan_ttl)
    reply, body = await fetch(core, "/sitemap-r-1.xml")
    assert reply.status == 200 and rows.passes == 2
    assert len(page_urls(check_document(body))) == 100


async def test_a_section_with_invalid_entries_is_read_again_and_they_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rows = PlainRows(50, bad=(7,))
    core = _core({"r": rows})
    reply, body = await fetch(core, "/sitemap-r-1.xml")
    assert reply.status == 200 and rows.passes == 2
    assert len(page_urls(check_document(body))) == 49
    assert "2024-13-01" in caplog.text


class GatedKeyset:
    """A keyset section of 250 rows whose planning pass waits at a gate once closed."""

    def __init__(self) -> None:
        self.version_number = 1
        self.gate: anyio.Event | None = None

    async def version(self) -> object:
        from sitemap_middleware.providers import ProviderVersion

        return ProviderVersion(token=str(self.version_number))

    async def entries(self) -> object:  # pragma: no cover - keyed() is what is read
        raise AssertionError

    async def keyed(self, after: object, upto: object) -> object:
        for key in range(1, 251):
            if (after is None or key > after) and (upto is None or key <= upto):  # type: ignore[operator]
                if key == 1 and upto is None and self.gate is not None:
                    await self.gate.wait()  # a whole-section (planning) pass
                yield key, f"/k/{key}-v{self.version_number}"


async def test_a_keyset_index_answers_from_the_last_plan_while_the_section_is_replanned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Stale-while-replan (issue 23, item 4): while a changed keyset section is planned
    again, other index requests get the last plan at once (its key-range pages serve
    their rows as they are now) and it is logged once; then the new plan answers."""
    caplog.set_level("INFO", "sitemap_middleware")
    provider = GatedKeyset()
    core = _core({"k": provider})
    _, first = await fetch(core, "/sitemap_index.xml")
    provider.version_number = 2
    provider.gate = anyio.Event()
    answers: list[bytes] = []
    async with anyio.create_task_group() as group:

        async def replanning() -> None:
            answers.append((await fetch(core, "/sitemap_index.xml"))[1])

        group.start_soon(replanning)
        await anyio.sleep(0.05)  # the replan waits at the gate
        with anyio.fail_after(2):
            reply, stale = await fetch(core, "/sitemap_index.xml")
        assert reply.status == 200 and stale == first
        assert "answered from its last plan while it is planned again" in caplog.text
        provider.gate.set()
    assert answers and core._documents.plans.passes == 2  # the new version's plan made
    assert caplog.text.count("answered from its last plan") == 1
