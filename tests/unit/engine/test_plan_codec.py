"""Section plans as a fleet shares them: exact round trips, for their version only."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware._engine.plan_codec import decode_plan, encode_plan
from sitemap_middleware._engine.planning import SectionPlan
from sitemap_middleware._providers.base import ProviderVersion
from sitemap_middleware._sansio.paging import PagePlan

KEYS = st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20)
TIMES = st.none() | st.datetimes(timezones=st.just(timezone.utc))
PAGES = st.builds(
    PagePlan,
    st.integers(0, 10**9),
    st.integers(0, 10**9),
    st.integers(0, 50_000),
    st.integers(0, 10**8),
    st.integers(0, 1000),
    TIMES | st.dates(),  # a provider's date (Django's get_latest_lastmod) stays a date
    KEYS,
    KEYS,
)
PLANS = st.builds(
    SectionPlan,
    st.text(min_size=1, max_size=20),
    st.lists(PAGES, max_size=5).map(tuple),
    st.integers(0, 10**9),
    st.none() | st.builds(ProviderVersion, st.none() | st.text(max_size=30), TIMES),
    st.booleans(),
    left_out=st.integers(0, 10**6),
    first_left_out=st.text(max_size=40),
)


@given(plan=PLANS, identity=st.text(max_size=30))
def test_a_plan_comes_back_exactly_for_its_version_only(plan: SectionPlan, identity: str) -> None:
    data = encode_plan(identity, plan)
    assert data is not None
    back = decode_plan(data, identity)
    assert back == plan
    assert back is not None and (back.left_out, back.first_left_out) == (
        plan.left_out,
        plan.first_left_out,
    )
    assert decode_plan(data, identity + "x") is None  # another version's plan is none


def test_keys_json_cannot_carry_and_damaged_bytes_are_no_plan() -> None:
    when = datetime(2024, 1, 1, tzinfo=timezone.utc)
    page = PagePlan(0, 1, 1, 100, 0, when, when.date(), when.date())  # date keys
    assert encode_plan("t1", SectionPlan("s", (page,), 1, None)) is None
    assert decode_plan(b"\xff not json", "t1") is None
    assert decode_plan(b'{"format": 1, "identity": "t1"}', "t1") is None
    good = encode_plan("t1", SectionPlan("s", (PagePlan(0, 1, 1, 100, 0, when, 1, 1),), 1, None))
    assert good is not None and decode_plan(good, "t1") is not None
    for damaged in (
        good.replace(b'"keyed":false', b'"keyed":"no"'),
        good.replace(b"100", b"100.7"),
    ):
        assert damaged != good and decode_plan(damaged, "t1") is None
