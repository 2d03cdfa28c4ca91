"""Entries and extensions: validation and normalisation on creation."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sitemap_middleware import Alternate, Image, InvalidEntryError, NewsArticle, SitemapEntry, Video
from sitemap_middleware._sansio.models import coerce_entry
from sitemap_middleware.providers import news_cutoff


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://example.com/a", "https://example.com/a"),
        ("HTTPS://Example.COM/a", "https://example.com/a"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com/café?q=naïve", "https://example.com/caf%C3%A9?q=na%C3%AFve"),
        ("https://bücher.example/x", "https://xn--bcher-kva.example/x"),
        ("https://example.com/a b", "https://example.com/a%20b"),
        ("https://example.com/a\tb?q=x y#z z", "https://example.com/a%09b?q=x%20y#z%20z"),
        ("https://example.com/\x00", "https://example.com/%00"),
        ("/a b/c d.html", "/a%20b/c%20d.html"),
        ("/caf\udce9", "/caf%E9"),  # a non-UTF-8 byte, decoded with surrogateescape
        ("https://example.com/100%", "https://example.com/100%25"),
        ("https://example.com/ok%20", "https://example.com/ok%20"),
        ("/about", "/about"),
        ("/über", "/%C3%BCber"),
        ("  https://example.com/trim", None),
    ],
    ids=lambda v: repr(v)[:30],
)
def test_entry_loc_is_normalised(given: str, expected: str | None) -> None:
    """IRIs become URIs: IDNA hosts, UTF-8 percent-encoding, no default port."""
    if expected is None:
        with pytest.raises(InvalidEntryError) as info:
            SitemapEntry(given)
        assert info.value.field == "loc"
    else:
        assert SitemapEntry(given).loc == expected


@pytest.mark.parametrize(
    "loc",
    [
        "ftp://example.com/a",
        "example.com/a",
        "//example.com/a",
        "https://user:pw@example.com/a",
        "https://exa mple.com/",
        "https://example.com/" + "a" * 2048,
        "https://example.com/\ud800",
        "",
        "https://-bad-.example/",
    ],
    ids=lambda v: repr(v)[:30],
)
def test_entry_rejects_bad_loc_naming_field_and_value(loc: str) -> None:
    """A bad loc raises InvalidEntryError whose message names the field and the value."""
    with pytest.raises(InvalidEntryError) as info:
        SitemapEntry(loc)
    assert info.value.field == "loc"
    assert info.value.value == loc
    assert str(info.value).startswith("invalid loc ")


def test_entry_rejects_non_string_loc() -> None:
    """A loc that is not a string is refused."""
    with pytest.raises(InvalidEntryError, match="must be a string"):
        SitemapEntry(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (date(2024, 5, 1), date(2024, 5, 1)),
        ("2024-05-01", date(2024, 5, 1)),
        ("2024-05-01T10:30:00+02:00", datetime(2024, 5, 1, 8, 30, tzinfo=timezone.utc)),
        ("2024-05-01T10:30Z", datetime(2024, 5, 1, 10, 30, tzinfo=timezone.utc)),
        (datetime(2024, 5, 1, 10, 30), datetime(2024, 5, 1, 10, 30, tzinfo=timezone.utc)),
    ],
    ids=str,
)
def test_entry_lastmod_accepts_dates_and_w3c_strings(given: Any, expected: date) -> None:
    """lastmod takes a date, an aware or naive (= UTC) datetime, or a W3C string."""
    assert SitemapEntry("/", lastmod=given).lastmod == expected


@pytest.mark.parametrize(
    "bad", ["yesterday", "2024-13-01", "2024-05-01T10:30", "2024/05/01", "20240501", 1714550400]
)
def test_entry_rejects_bad_lastmod(bad: Any) -> None:
    """Strings that are not W3C datetimes (or times without a zone) are refused."""
    with pytest.raises(InvalidEntryError) as info:
        SitemapEntry("/", lastmod=bad)
    assert info.value.field == "lastmod"


@pytest.mark.parametrize(
    ("priority", "ok"),
    [
        (0.0, True),
        (1, True),
        ("0.8", True),
        (0.25, True),
        (7, False),
        (-0.1, False),
        (float("nan"), False),
        (True, False),
        ("high", False),
    ],
    ids=repr,
)
def test_entry_priority_range(priority: Any, ok: bool) -> None:
    """priority must be a number from 0.0 to 1.0; a priority of 7 names itself in the error."""
    if ok:
        assert 0.0 <= SitemapEntry("/", priority=priority).priority <= 1.0  # type: ignore[operator]
    else:
        with pytest.raises(InvalidEntryError) as info:
            SitemapEntry("/", priority=priority)
        assert info.value.field == "priority"
        assert repr(priority)[:10] in str(info.value)


def test_entry_changefreq_is_one_of_seven_words() -> None:
    """changefreq is normalised to lower case and restricted to the protocol's words."""
    assert SitemapEntry("/", changefreq="Daily").changefreq == "daily"
    with pytest.raises(InvalidEntryError, match="changefreq 'sometimes'"):
        SitemapEntry("/", changefreq="sometimes")


def test_entry_is_immutable() -> None:
    """Entries are frozen value objects."""
    entry = SitemapEntry("/a")
    with pytest.raises(AttributeError):
        entry.loc = "/b"  # type: ignore[misc]
    assert entry == SitemapEntry("/a")


def test_coerce_entry_accepts_strings_and_mappings() -> None:
    """Providers may yield entries, URL strings or mappings of fields."""
    assert coerce_entry("/a") == SitemapEntry("/a")
    assert coerce_entry({"loc": "/a", "priority": 1}) == SitemapEntry("/a", priority=1.0)
    with pytest.raises(InvalidEntryError, match="entry"):
        coerce_entry({"loc": "/a", "colour": "red"})
    with pytest.raises(InvalidEntryError):
        coerce_entry(3.14)


VIDEO = dict(
    thumbnail_loc="https://cdn.example.com/t.jpg",
    title="Grilling steaks",
    description="How to grill",
    content_loc="https://cdn.example.com/v.mp4",
)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"thumbnail_loc": None}, "video.thumbnail_loc"),
        ({"content_loc": None}, "video.content_loc"),
        ({"duration": 0}, "video.duration"),
        ({"duration": 28801}, "video.duration"),
        ({"duration": 1.5}, "video.duration"),
        ({"rating": 5.1}, "video.rating"),
        ({"title": "x" * 101}, "video.title"),
        ({"tags": ["t"] * 33}, "video.tags"),
        ({"restriction": ("maybe", ["DE"])}, "video.restriction"),
        ({"restriction": ("allow", ["de"])}, "video.restriction"),
        ({"platform": ("allow", ["phone"])}, "video.platform"),
        ({"family_friendly": "yes"}, "video.family_friendly"),
        ({"description": "\x0b\x00"}, "video.description"),
    ],
    ids=lambda v: str(v)[:40],
)
def test_video_validation_names_the_field(changes: dict[str, Any], field: str) -> None:
    """Each video rule failure raises InvalidEntryError naming the field."""
    with pytest.raises(InvalidEntryError) as info:
        Video(**{**VIDEO, **changes})
    assert info.value.field == field


def test_text_fields_lose_only_the_characters_xml_forbids() -> None:
    """Characters XML 1.0 cannot carry are stripped from text fields; the rest is kept."""
    fields: dict[str, Any] = {**VIDEO, "title": "Tea\x0b time\ufffe", "description": "a\x00b"}
    video = Video(**fields)
    assert (video.title, video.description) == ("Tea time", "ab")
    article = NewsArticle(
        publication_name="Times\x1f", language="en", publication_date="2024-05-01", title="T\x08"
    )
    assert (article.publication_name, article.title) == ("Times", "T")


def test_video_accepts_all_common_fields() -> None:
    """A fully specified video validates and normalises."""
    video = Video(
        **VIDEO,
        duration=600,
        expiration_date="2030-01-01",
        rating=4.2,
        view_count=12345,
        publication_date=datetime(2024, 1, 1, 12, 0, tzinfo=timezone.utc),
        tags=["steak", "grill"],
        family_friendly=True,
        restriction=("allow", ["DE", "FR"]),
        requires_subscription=False,
        uploader="Chef",
        uploader_info="https://example.com/chef",
        platform=("deny", "tv"),
        live=False,
    )
    assert video.restriction == ("allow", ("DE", "FR"))
    assert video.platform == ("deny", ("tv",))
    assert video.expiration_date == date(2030, 1, 1)


@pytest.mark.parametrize("code", ["de", "en-GB", "zh-Hant", "x-default", "es-419"])
def test_alternate_accepts_hreflang_codes(code: str) -> None:
    """hreflang accepts language, language-region, scripts and x-default."""
    assert Alternate(code, "/de").hreflang == code


@pytest.mark.parametrize("code", ["english", "de_DE", "", "x-defaults", "d"])
def test_alternate_rejects_invalid_hreflang(code: str) -> None:
    """An invalid hreflang code is refused with the field named."""
    with pytest.raises(InvalidEntryError) as info:
        Alternate(code, "/de")
    assert info.value.field == "alternate.hreflang"


def test_news_validation() -> None:
    """News needs a publication name, an ISO 639 language, a date and a title."""
    news = NewsArticle(
        publication_name="The Times", language="en", publication_date="2024-05-01", title="Hi"
    )
    assert news.publication_date == date(2024, 5, 1)
    with pytest.raises(InvalidEntryError) as info:
        NewsArticle(
            publication_name="T", language="English", publication_date="2024-05-01", title="x"
        )
    assert info.value.field == "news.language"


def test_news_cutoff_is_two_days_back() -> None:
    """The helper returns the oldest publication time Google News accepts."""
    now = datetime(2024, 5, 3, tzinfo=timezone.utc)
    assert news_cutoff(now) == now - timedelta(days=2)


def test_entry_extensions_from_mappings_and_limits() -> None:
    """Extensions accept objects or mappings; more than 1,000 images is refused."""
    entry = SitemapEntry(
        "/a",
        images=[Image("/i.png"), {"loc": "https://cdn.example.com/j.png"}],
        alternates=[{"hreflang": "de", "href": "/de/a"}],
        videos=[VIDEO],
        news={
            "publication_name": "N",
            "language": "en",
            "publication_date": "2024-01-01",
            "title": "T",
        },
    )
    assert isinstance(entry.images[1], Image)
    assert isinstance(entry.alternates[0], Alternate)
    assert isinstance(entry.videos[0], Video)
    assert isinstance(entry.news, NewsArticle)
    with pytest.raises(InvalidEntryError, match="at most 1000 images"):
        SitemapEntry("/a", images=[Image("/i.png")] * 1001)


def test_entries_expose_only_their_fields_and_survive_copy_and_pickle() -> None:
    """fields()/asdict() show the protocol fields only; replace, copy and pickle round-trip."""
    import copy
    import dataclasses
    import pickle

    entry = SitemapEntry(
        "https://example.com/a", lastmod="2024-05-01", changefreq="daily", priority=0.5
    )
    assert [f.name for f in dataclasses.fields(entry)] == [
        "loc",
        "lastmod",
        "changefreq",
        "priority",
        "images",
        "videos",
        "news",
        "alternates",
    ]
    assert "_tail" not in dataclasses.asdict(entry) and "_tail" not in repr(entry)
    assert not hasattr(entry, "__dict__")  # slotted
    assert pickle.loads(pickle.dumps(entry)) == entry == copy.deepcopy(entry)
    changed = dataclasses.replace(entry, priority=0.3)
    assert changed.priority == 0.3 and changed.loc == entry.loc
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.priority = 1.0  # type: ignore[misc]


# --- plain batches: the batch path of entry_parts + locate gives the per-item results ---

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from sitemap_middleware._sansio.batches import plain_batch  # noqa: E402
from sitemap_middleware._sansio.models import (  # noqa: E402
    Mapped,
    entry_parts,
    resolve_mapped,
)
from sitemap_middleware._sansio.urls import BaseURL  # noqa: E402
from sitemap_middleware._sansio.values import date_value_and_text, to_datetime  # noqa: E402
from sitemap_middleware._sansio.xml import escape_loc  # noqa: E402
from tests.harness.documents import check_locs  # noqa: E402

_BASE = BaseURL.parse("https://example.com/shop")
_LOC_VALUES = [
    "https://example.com/shop/a",
    "https://example.com/shop/p?x=1&y='2'",
    "https://example.com/shop/caf%C3%A9",
    "https://example.com/shop/100%",
    "https://example.com/shop/./a",
    "https://example.com/shop/a/../../admin",
    "https://example.com/shop/.well-known",
    "https://example.com/other",
    "https://Example.com/shop/A",
    "https://example.com:443/shop/b",
    "https://example.com/shop/a\nb",
    "https://example.com/shop/a b",
    "https://example.com/shop/" + "x" * 2030,
    "https://example.com/shop/" + "x" * 2010,
    "/shop/relative",
    "/relative",
    "",
    "ftp://example.com/shop/f",
    "https://example.com/shop/p#a",
    "https://example.com/shop/tags/f#/c#",
    "https://example.com/shop/p?q=1#a#b",
    "https://example.com/shop/p#a%",
    "https://example.com/shop/p#a b",
    "/tags/f#/c#",
    "/p/#a%",
    "/p/#a b",
]
_LOCS = st.sampled_from(_LOC_VALUES) | st.integers() | st.none()
_LASTMOD_VALUES = [
    "2024-05-01",
    "2024-13-01",
    "2024-02-30",
    "2024-05-01T10:20:30+02:00",
    "2024-05-01T10:20:30-14:00",
    "2024-05-01T10:20:30+14:30",
    "2024-05-01T10:20:30+13:59",
    "2024-05-01T10:20:30Z",
    "2024-05-01T25:20:30Z",
    "2024-05-01T10:20+02:00",
    "2024-05-01 10:20:30+02:00",
    "\u0662024-05-01",
    " 2024-05-01",
    "",
]
_LASTMODS = st.sampled_from(_LASTMOD_VALUES) | st.sampled_from(
    [date(2024, 5, 1), datetime(2024, 5, 1, 10, tzinfo=timezone.utc), None, 5]
)
_CHANGEFREQS = st.sampled_from(["daily", "weekly", "Daily", "sometimes", "", None, 3, ["daily"]])
_PRIORITIES = st.sampled_from(
    [0.5, 0.0, 1.0, -0.0, 0.55, 1.5, float("nan"), 1, True, "0.5", None, [0.5]]
) | st.sampled_from(["x", "nan", "1_0", Decimal("NaN"), Decimal("0.1"), 10**400, 2, "-0"])


#: Values the batch path takes (a batch of only these is usually plain).
_GOOD: dict[str, st.SearchStrategy[Any]] = {
    "loc": st.sampled_from(
        [
            "https://example.com/shop/a",
            "https://example.com/shop/p?x=1&y='2'",
            "https://example.com/shop/" + "x" * 2010,
            "https://example.com/shop/p?x=1#frag",
        ]
    ),
    "lastmod": st.sampled_from(["2024-05-01T10:20:30+02:00", "2024-05-01T10:20:30-14:00"])
    | st.sampled_from(
        [datetime(2024, 5, 1, 10, 20, 30, 123), datetime(2024, 5, 2, tzinfo=timezone.utc)]
    )
    | st.sampled_from(
        [
            date(2024, 5, 1),
            datetime(2024, 5, 1, 10, tzinfo=ZoneInfo("Europe/Paris")),
            "2024-05-01T10:20:30.5Z",
            "2024-05-01T10:20+02:00",
        ]
    ),
    "changefreq": st.sampled_from(["daily", "never", "weekly", "always"]),
    "priority": st.sampled_from([0.5, 1.0, -0.0, 0.0, 0.1])
    | st.sampled_from([1, 0, "0.5", " 0.8", "1e0", Decimal("0.3"), Decimal("1.00")]),
}


@st.composite
def _batches(draw: Any) -> list[Any]:
    clean = draw(st.booleans())
    if draw(st.booleans()):  # URL strings
        strings: list[Any] = draw(
            st.lists(_GOOD["loc"] if clean else _LOCS, min_size=1, max_size=6)
        )
        return strings
    keys = draw(st.sets(st.sampled_from(["lastmod", "changefreq", "priority", "images"])))
    fields: dict[str, st.SearchStrategy[Any]] = {
        "lastmod": _LASTMODS,
        "changefreq": _CHANGEFREQS,
        "priority": _PRIORITIES,
    }
    if clean:
        fields = {key: _GOOD[key] for key in fields}
    fields["images"] = st.just(["https://example.com/shop/i.png"])
    row = st.fixed_dictionaries(
        {"loc": _GOOD["loc"] if clean else _LOCS, **{key: fields[key] for key in keys}},
        # sometimes a key only some rows have
        optional={"priority": _PRIORITIES} if "priority" not in keys else {},
    )
    rows: list[Any] = draw(st.lists(row, min_size=1, max_size=6))
    return rows


@st.composite
def _usual_batches(draw: Any) -> list[Any]:
    """Rows with the same keys and usual values (lastmods of one kind): the batch path's."""
    keys = draw(st.sets(st.sampled_from(["lastmod", "changefreq", "priority"])))
    lastmods = draw(
        st.sampled_from(
            [
                st.sampled_from(["2024-05-01T10:20:30+02:00", "2024-05-01T10:20:30-09:30"]),
                st.sampled_from(["2024-05-01", "2023-12-31"]),
                st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1)),
            ]
        )
    )
    fields = {
        "loc": _GOOD["loc"],
        "lastmod": lastmods,
        **{k: _GOOD[k] for k in _GOOD if k != "lastmod"},
    }
    row = st.fixed_dictionaries({key: fields[key] for key in ["loc", *sorted(keys)]})
    rows: list[Any] = draw(st.lists(row, min_size=1, max_size=8))
    return rows


@pytest.mark.slow  # a property run over many examples
@settings(max_examples=200, deadline=None)
@given(_usual_batches())
def test_plain_batch_takes_usual_rows_and_gives_what_each_item_gives(raw: list[Any]) -> None:
    """Usual rows are admitted a batch at a time, with each row's result and exact sizes."""
    assert plain_batch(raw, _BASE) is not None
    _check_plain(raw)


def _each(item: Any) -> Any:
    """The per-item path: entry_parts, then the location rule (or the error)."""
    try:
        loc, tail, extended = entry_parts(item)
        return _BASE.locate(loc), tail, extended
    except InvalidEntryError:
        return "invalid"


class _Word(str):
    __slots__ = ()


class _Number(float):
    pass


def _edge_values() -> list[tuple[str, Any]]:
    values: list[tuple[str, Any]] = [("loc", value) for value in [*_LOC_VALUES, 5, None]]
    values += [("lastmod", value) for value in _LASTMOD_VALUES + [date(2024, 5, 1), None]]
    values += [
        ("lastmod", datetime(2024, 5, 1, 10, 20, 30, 999, tzinfo=zone))
        for zone in (
            None,
            timezone.utc,
            timezone(timedelta(hours=2)),
            timezone(timedelta(hours=15)),
        )
    ]
    values += [("lastmod", datetime(2024, 5, 1, tzinfo=timezone(timedelta(seconds=30))))]
    values += [("changefreq", v) for v in ["daily", "Daily", "sometimes", "", None, 3, ["daily"]]]
    values += [("changefreq", _Word("daily"))]  # a str subclass: the per-item path decides
    numbers = [0.5, -0.0, 0.55, 1.5, float("nan"), 1, True, "0.5", [0.5], _Number(0.5)]
    values += [("priority", v) for v in numbers]
    return values


@pytest.mark.parametrize(("field", "value"), _edge_values())
def test_plain_batch_edge_values(field: str, value: Any) -> None:
    """One unusual value in a plain batch: the per-item result, or the per-item path."""
    row: dict[str, Any] = {"loc": "https://example.com/shop/a", "changefreq": "daily"}
    row |= {"lastmod": "2024-05-01T10:20:30+02:00", "priority": 0.5}
    for raw in ([row, {**row, field: value}], [{**row, field: value}] * 2):
        _check_plain(raw)
    if field == "loc":
        _check_plain(["https://example.com/shop/a", value])
        _check_plain([value])


@pytest.mark.slow  # a property run over many examples
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_batches())
def test_plain_batch_gives_what_each_item_gives(raw: list[Any]) -> None:
    _check_plain(raw)


def _check_plain(raw: list[Any]) -> None:
    expected = [_each(item) for item in raw]
    # Whatever the per-item path admits is a valid <loc> (one "#" at most, the XSD's tLoc).
    check_locs([each[0] for each in expected if each != "invalid"])
    plain = plain_batch(raw, _BASE)
    if plain is None:
        return  # the per-item path decides (tested on its own)
    check_locs(plain.locs)
    assert [
        (loc, tail, None) for loc, tail in zip(plain.locs, plain.tails, strict=True)
    ] == expected
    assert plain.tail_sizes() == [len(tail) for tail in plain.tails]
    assert plain.tails_size() == sum(map(len, plain.tails))
    assert plain.loc_size == sum(len(escape_loc(loc)) for loc in plain.locs)
    if plain.newest is not None:
        lastmods = [i.lastmod if isinstance(i, SitemapEntry) else i["lastmod"] for i in raw]
        values = [to_datetime(date_value_and_text("lastmod", v)[0]) for v in lastmods if v]
        # As written (whole seconds): what the per-entry planner reads back from the tail.
        assert plain.newest == max(values).replace(microsecond=0)


@pytest.mark.parametrize(
    "raw",
    [
        ["https://example.com/shop/a", "https://example.com/shop/b?x=1&y=2"],
        [{"loc": "https://example.com/shop/a"}],
        [
            {
                "loc": f"https://example.com/shop/p/{i}?a=1&b='{i}'",
                "lastmod": f"2024-05-0{i}T10:20:30+02:00",
                "changefreq": "daily",
                "priority": 0.5,
            }
            for i in range(1, 6)
        ],
        [{"priority": 1.0, "loc": "https://example.com/shop/a", "lastmod": "2024-05-01"}] * 3,
        [{"lastmod": "2024-05-01T10:20:30Z", "loc": "https://example.com/shop/a"}] * 2,
        ["/a", "/b?x=1&y=2", "/shop/c"],  # base-relative paths (joined to the base)
        [{"loc": "/a", "lastmod": datetime(2024, 5, 1, 10, 20, 30, 5)}] * 2,  # naive: UTC
        [{"loc": "/a", "lastmod": datetime(2024, 5, 1, tzinfo=timezone.utc)}] * 2,
        [{"loc": "/a", "changefreq": "daily"}, {"loc": "/b", "changefreq": "never"}],
    ],
)
def test_plain_batch_takes_the_usual_batches(raw: list[Any]) -> None:
    plain = plain_batch(raw, _BASE)
    assert plain is not None
    assert [(loc, tail, None) for loc, tail in zip(plain.locs, plain.tails, strict=True)] == [
        _each(item) for item in raw
    ]


@pytest.mark.parametrize(
    "raw",
    [
        [],
        ["https://example.com/shop/a", {"loc": "https://example.com/shop/b"}],
        [{"loc": "https://example.com/shop/a"}, {"lastmod": "2024-05-01"}],
        [{"loc": "https://example.com/shop/a", "lastmod": "2024-05-01"}, {"loc": "/shop/b"}],
        [
            {"loc": "https://example.com/shop/a", "lastmod": d}
            for d in ("2024-05-01", "2024-05-01T10:20:30Z")
        ],
        [{"loc": "https://example.com/shop/a\nhttps://example.com/shop/b"}],
        ["/a", "https://example.com/shop/b"],  # relative and absolute: one by one
        ["/a/../../admin"],
        ["//example.com/shop/a"],
    ],
)
def test_plain_batch_leaves_mixed_or_unusual_batches_to_each_item(raw: list[Any]) -> None:
    assert plain_batch(raw, _BASE) is None


def test_plain_batch_needs_a_canonical_base() -> None:
    raw = ["http://localhost:8000/a"]
    assert plain_batch(raw, BaseURL.parse("http://localhost:8000")) is None
    assert BaseURL.parse("http://localhost:8000").locate(entry_parts(raw[0])[0]) == raw[0]


def test_mapped_rows_are_resolved_once_each_and_a_failing_one_costs_itself() -> None:
    calls: list[int] = []

    def to_entry(row: int) -> dict[str, Any]:
        calls.append(row)
        if row == 2:
            raise ValueError("no such product")
        return {"loc": f"/p/{row}", "lastmod": datetime(2024, 5, row + 1)}

    resolved = resolve_mapped([Mapped(to_entry, row, "to_entry") for row in range(4)])
    assert calls == [0, 1, 2, 3]
    assert plain_batch(resolved, _BASE) is None  # one failed: each item decides
    assert [_each(item) for item in resolved][2] == "invalid"
    with pytest.raises(InvalidEntryError, match="to_entry.*no such product"):
        entry_parts(resolved[2])
    good = resolve_mapped([Mapped(to_entry, row, "to_entry") for row in (0, 1, 3)])
    plain = plain_batch(good, _BASE)
    assert plain is not None and plain.locs[2] == "https://example.com/shop/p/3"
    assert plain.tails[2] == "<lastmod>2024-05-04T00:00:00+00:00</lastmod>"


def test_zone_offsets_with_sixty_minutes_or_more_are_normalised() -> None:
    """Python reads "+05:99" as an offset; XML Schema does not: such a text is written
    normalised instead of verbatim, on the batch path and the per-entry path alike."""
    from sitemap_middleware._sansio.batches import plain_batch
    from sitemap_middleware._sansio.models import entry_parts

    items = [{"loc": "https://ex.com/a", "lastmod": "2024-01-01T10:00:00+05:99"}] * 2
    batch = plain_batch(items, BaseURL.parse("https://ex.com/"))
    tails = batch.tails if batch is not None else [entry_parts(i)[1] for i in items]
    # 10:00 at +05:99 (6 h 39 min) is 03:21 UTC: written with an offset XSD reads.
    assert all("+05:99" not in tail and "2024-01-01T10:00:00+06:39" in tail for tail in tails)
    assert "2024-01-01T10:00:00+06:39" in entry_parts(items[0])[1]


def test_the_batch_path_keeps_lastmods_to_the_second_as_written() -> None:
    """A page's newest lastmod is what its entries write (whole seconds), whichever path
    admits them, so plans and index ETags do not depend on the path."""
    from sitemap_middleware._sansio.batches import plain_batch

    items = [
        {"loc": f"https://ex.com/p{i}", "lastmod": datetime(2024, 1, 1, 10, 0, 0, 123456)}
        for i in range(10)
    ]
    batch = plain_batch(items, BaseURL.parse("https://ex.com/"))
    assert batch is not None and batch.newest == datetime(2024, 1, 1, 10, tzinfo=timezone.utc)


def test_a_mapping_that_reuses_one_dict_loses_no_row() -> None:
    """Rows are mapped a batch at a time: a mapping returning the same dict object for
    every row still gives every row its own URL."""
    import anyio as _anyio

    from sitemap_middleware import SitemapConfig
    from sitemap_middleware._engine.core import SitemapCore
    from sitemap_middleware.providers import CallableProvider
    from tests.harness.core import fetch
    from tests.harness.documents import check_document, page_urls

    shared: dict[str, Any] = {}

    def to_entry(row: int) -> dict[str, Any]:
        shared["loc"] = f"/p{row}"
        return shared

    config = SitemapConfig(
        base_url="https://ex.com",
        sections={"p": CallableProvider(lambda: range(3), map=to_entry)},
    )
    _, body = _anyio.run(fetch, SitemapCore(config), "/sitemap.xml")
    assert page_urls(check_document(body)) == [f"https://ex.com/p{i}" for i in range(3)]


# --- w3c_values: the batch check of lastmod texts agrees with each text's own ---

from hypothesis import example  # noqa: E402

from sitemap_middleware._sansio.values import w3c_values  # noqa: E402

#: The parts of a W3C text, each with values in and out of range, and separators that
#: are not ours (fromisoformat reads some of them).
_W3C_PARTS: dict[str, list[str]] = {
    "year": ["2024", "0000", "0001", "9999", "\u0662024", "20a4"],
    "month": ["01", "09", "10", "12", "13", "19", "00", "1a"],
    "day": ["01", "28", "29", "30", "31", "00", "32"],
    "t": ["T", "T", "T", " ", "t", "-"],
    "hour": ["00", "09", "23", "24", "2:"],
    "minute": ["00", "59", "60"],
    "second": ["00", "59", "60"],
    "zone": [
        "Z",
        "+00:00",
        "+02:00",
        "-05:30",
        "+05:45",
        "+09:59",
        "+10:00",
        "+13:59",
        "+14:00",
        "-14:00",
        "+14:30",
        "+15:00",
        "+05:60",
        "+05:99",
        "+2:000",
        "+02-00",
        "z",
    ],
}


@st.composite
def _w3c_batches(draw: st.DrawFn) -> list[object]:
    """Batches of lastmod texts, most of one form (as a column of a table is)."""

    def part(name: str) -> str:
        values = _W3C_PARTS[name]
        # A part out of range now and then, within a batch that is otherwise usual.
        return draw(st.sampled_from(values[:2]) | st.sampled_from(values))

    form = draw(st.sampled_from(["date", "zulu", "offset", "minutes", "fraction"]))
    texts: list[object] = []
    for _ in range(draw(st.integers(1, 6))):
        text = f"{part('year')}-{part('month')}-{part('day')}"
        if form != "date":
            text += f"{part('t')}{part('hour')}:{part('minute')}"
            if form != "minutes":
                text += f":{part('second')}" + (".5" if form == "fraction" else "")
            text += "Z" if form == "zulu" else part("zone")
        texts.append(text)
    if draw(st.integers(0, 9)) == 0:  # a text of another form, or no text at all
        texts.insert(draw(st.integers(0, len(texts))), draw(st.sampled_from(["2024-05-01", 5])))
    return texts


#: Zones of every kind: UTC spelled three ways, usual offsets, a DST zone, and offsets
#: XML Schema cannot write (seconds, beyond ±14:00).
_ZONES = [
    None,
    timezone.utc,
    ZoneInfo("UTC"),
    timezone(timedelta(hours=2)),
    timezone(timedelta(hours=-9, minutes=-30)),
    ZoneInfo("Europe/Paris"),
    ZoneInfo("America/St_Johns"),
    timezone(timedelta(hours=14)),
    timezone(timedelta(hours=15)),
    timezone(timedelta(seconds=30)),
]


@st.composite
def _value_batches(draw: st.DrawFn) -> list[object]:
    """Batches of lastmod values as ORMs hand them over: dates, datetimes in any zone
    (mostly one a batch), with a stray value of another kind now and then."""
    kind = draw(st.sampled_from(["date", "datetime"]))
    zone = draw(st.sampled_from(_ZONES))
    values: list[object] = []
    for _ in range(draw(st.integers(1, 6))):
        moment = draw(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)))
        if kind == "date":
            values.append(moment.date())
        else:
            other = draw(st.sampled_from(_ZONES)) if draw(st.integers(0, 5)) == 0 else zone
            values.append(moment.replace(tzinfo=other))
    if draw(st.integers(0, 9)) == 0:
        values.insert(0, draw(st.sampled_from(["2024-05-01", datetime(2024, 5, 1)])))
    return values


@settings(max_examples=300, deadline=None)
@given(_value_batches())
@example([date(2024, 5, 1), date(1, 1, 1)])
@example([datetime(2024, 5, 1, tzinfo=ZoneInfo("Europe/Paris")), datetime(2024, 5, 1)])
def test_w3c_values_of_dates_and_zoned_datetimes_give_what_each_gives(values: list[object]) -> None:
    """Dates and aware datetimes of any zone are taken a batch at a time (issue 24, item
    4) with each value's own text and the newest of theirs; a batch the batch path
    declines is left to each value (which decides)."""
    try:
        each = [date_value_and_text("lastmod", value) for value in values]
    except InvalidEntryError:
        each = None
    found = w3c_values(values)
    if found is None:
        return
    assert each is not None  # the batch path never takes what a value's own path refuses
    newest, texts = found
    assert texts == [text for _, text in each]
    assert newest == max(to_datetime(value) for value, _ in each).replace(microsecond=0)


@pytest.mark.parametrize(
    "values",
    [
        [date(2024, 5, 1), date(2023, 1, 31)],
        [datetime(2024, 5, 1, 10, tzinfo=timezone(timedelta(hours=2)))] * 2,
        [datetime(2024, 5, 1, 10, tzinfo=ZoneInfo("Europe/Paris"))] * 2,
        ["2024-05-01T10:20+02:00", "2024-05-01T10:21+02:00"],
        ["2024-05-01T10:20:30.123Z", "2024-05-01T10:20:31.5+00:00"],
    ],
)
def test_w3c_values_take_the_shapes_apps_hand_over(values: list[object]) -> None:
    assert w3c_values(values) is not None


@pytest.mark.slow  # a property run over many examples
@settings(max_examples=400, deadline=None)
@given(_w3c_batches())
@example(["2024-05-01T10:20:30+14:00", "2024-05-01T10:20:30+13:59"])
@example(["2024-05-01T10:20:30+02:00", "2024-05-01T10:20:30+05:60"])
@example(["2024-05-01T10:20:30+02:00", "2024-05-01 10:20:30+02:00"])
@example(["2024-05-01T10:20:30Z", "2024-05-01T10:20:30+00:00"])
@example(["2024-05-01", "2024-05-0\n"])
def test_w3c_values_gives_what_each_text_gives(values: list[object]) -> None:
    """Whenever the batch check takes a batch of lastmods, each is kept as its own path
    keeps it (verbatim, valid) and the newest is the newest of theirs."""
    found = w3c_values(values)
    if found is None:
        return  # each takes date_value_and_text, which decides
    newest, texts = found
    each = [date_value_and_text("lastmod", value) for value in values]  # raises if invalid
    assert texts == [text for _, text in each]
    assert len(set(map(len, texts))) == 1  # one length a batch (PlainBatch sizes by it)
    # As written (whole seconds): what the per-entry planner reads back from the tail.
    assert newest == max(to_datetime(value) for value, _ in each).replace(microsecond=0)


@pytest.mark.parametrize("value", [10**400, -(10**400), Decimal("1e400"), "1e400"])
def test_a_priority_too_large_for_a_float_is_an_invalid_entry(value: object) -> None:
    """Found by the batch property: an int past float's range raised OverflowError (a 500
    for the document) where any other out-of-range priority is an invalid entry."""
    with pytest.raises(InvalidEntryError, match="priority .* must be between 0 and 1"):
        SitemapEntry("/a", priority=value)  # type: ignore[arg-type]


@st.composite
def _entry_batches(draw: Any) -> list[Any]:
    """SitemapEntry objects as providers build them (validated already), some extended."""
    keys = draw(st.sets(st.sampled_from(["lastmod", "changefreq", "priority"])))
    lastmod = draw(st.sampled_from(["lastmod_str", "lastmod_value"]))
    fields = {
        "lastmod": _GOOD["lastmod"]
        if lastmod == "lastmod_value"
        else st.sampled_from(["2024-05-01", "2024-05-01T10:20:30+02:00"]),
        "changefreq": _GOOD["changefreq"],
        "priority": st.sampled_from([0.5, 1.0, 0.0, 0.3, 1, Decimal("0.8")]),
    }
    row = st.fixed_dictionaries(
        {"loc": _GOOD["loc"] | st.sampled_from(["/a", "/shop/b?x=1&y=2"])}
        | {key: fields[key] | st.none() for key in keys}
    )
    rows = draw(st.lists(row, min_size=1, max_size=6))
    extended = draw(st.booleans())
    out = [SitemapEntry(**row) for row in rows]
    if extended:
        out[-1] = SitemapEntry(out[-1].loc, images=["https://example.com/shop/i.png"])
    return out


@pytest.mark.slow  # a property run over many examples
@settings(max_examples=300, deadline=None)
@given(_entry_batches())
def test_plain_batch_takes_sitemap_entries_and_gives_what_each_gives(raw: list[Any]) -> None:
    """Entries without extensions are admitted a batch at a time, each as the per-item
    path admits it (issue 24: SitemapEntry objects on the fast path)."""
    if all(not entry.images for entry in raw) and len({entry.loc[0] == "/" for entry in raw}) == 1:
        assert plain_batch(raw, _BASE) is not None
    _check_plain(raw)


def _row_mappings(rows: list[dict[str, Any]]) -> list[Any]:
    """The rows as SQLAlchemy returns them (``row._mapping``), from an in-memory SQLite."""
    sqlalchemy = pytest.importorskip("sqlalchemy")
    engine = sqlalchemy.create_engine("sqlite://")
    columns = ["loc", "lastmod", "changefreq", "priority"]
    table = sqlalchemy.table("urls", *(sqlalchemy.column(name) for name in columns))
    keys = list(rows[0])  # the same keys in every row (a select names its columns)
    with engine.connect() as connection:
        connection.exec_driver_sql(f"CREATE TABLE urls ({', '.join(columns)})")
        connection.execute(
            sqlalchemy.insert(table), [{name: row.get(name) for name in columns} for row in rows]
        )
        select = sqlalchemy.select(*(table.c[name] for name in keys)).order_by(
            sqlalchemy.literal_column("rowid")
        )
        return [row._mapping for row in connection.execute(select)]


@pytest.mark.slow  # a property run over many examples
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_plain_batch_takes_mappings_of_one_type_and_gives_what_each_gives(data: Any) -> None:
    """A batch of one Mapping type that is not dict (``row._mapping``, a mapping proxy)
    is admitted a batch at a time when its rows would be as dicts, each as the per-item
    path (``SitemapEntry(**item)``) admits it; any other is left to each item."""
    rows = data.draw(_usual_batches() if data.draw(st.booleans()) else _batches())
    rows = [row for row in rows if type(row) is dict] or [{"loc": "/a"}]
    proxies = [MappingProxyType(row) for row in rows]
    if plain_batch([dict(row) for row in rows], _BASE) is not None:
        assert plain_batch(proxies, _BASE) is not None
    _check_plain(proxies)
    if len({tuple(row) for row in rows}) == 1 and not any(map(_stored_apart, rows)):
        mappings = _row_mappings(rows)
        assert [dict(row) for row in mappings] == rows
        if plain_batch(rows, _BASE) is not None:
            assert plain_batch(mappings, _BASE) is not None
        _check_plain(mappings)


def _stored_apart(row: dict[str, Any]) -> bool:
    """Whether SQLite would give a value of the row back other than as it was given."""
    return not all(
        value is None
        or type(value) is str
        or (type(value) is int and -(2**63) <= value < 2**63)
        or (type(value) is float and value == value)  # NaN is stored as NULL
        for value in row.values()
    )


def test_plain_batch_leaves_mixed_mapping_types_to_each_item() -> None:
    row = {"loc": "https://example.com/shop/a", "priority": 0.5}
    assert plain_batch([MappingProxyType(row), row], _BASE) is None
    assert plain_batch([MappingProxyType({**row, "images": ()})] * 2, _BASE) is None
    _check_plain([MappingProxyType({**row, "images": ()})] * 2)
    # A defaultdict answers any key: read as dict() reads it, it gains none.
    rows = [defaultdict(float, row), defaultdict(float, {"loc": row["loc"], "images": ()})]
    assert plain_batch(rows, _BASE) is None
    assert [set(each) for each in rows] == [{"loc", "priority"}, {"loc", "images"}]
    _check_plain(rows)
    assert plain_batch([defaultdict(float, row)] * 2, _BASE) is not None
    _check_plain([defaultdict(float, row)] * 2)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-3, 9), max_size=12))
def test_map_each_gives_what_resolving_each_mapped_row_gives(rows: list[int]) -> None:
    """A provider's map= applied a batch at a time (no Mapped per row): the same values,
    the same error per failing row, and a fresh dict for a mapping that reuses one."""
    from sitemap_middleware._sansio.models import map_each

    shared: dict[str, Any] = {}

    def to_entry(row: int) -> Any:
        if row < 0:
            raise ValueError(f"row {row} is gone")
        if row == 0:
            raise InvalidEntryError("loc", row, "no page")
        if row % 2:
            shared["loc"] = f"/p/{row}"
            return shared  # the same dict each time, refilled
        return f"/q/{row}"

    def shown(values: list[Any]) -> list[Any]:
        return [(type(v).__name__, str(v)) if isinstance(v, Exception) else v for v in values]

    expected = shown(resolve_mapped([Mapped(to_entry, row, "to_entry") for row in rows]))
    assert shown(map_each(to_entry, rows, "to_entry")) == expected
