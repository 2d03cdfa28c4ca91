"""Languages from a rule, hand-written alternates checked, and the news window (issue #15)."""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware import (
    Alternate,
    ConfigurationError,
    Languages,
    NewsArticle,
    Section,
    SitemapConfig,
    SitemapEntry,
    _logs,
)
from sitemap_middleware._engine.core import SitemapCore
from sitemap_middleware.providers import CallableProvider
from tests.harness.core import fetch, make_core
from tests.harness.documents import check_document, child_urls
from tests.harness.providers import CountingProvider

XHTML = "{http://www.w3.org/1999/xhtml}link"
SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def _alternates(body: bytes) -> dict[str, list[tuple[str, str]]]:
    """loc -> [(hreflang, href)] in document order."""
    check_document(body)  # parsed as a crawler does, and XSD-valid (XSD order included)
    root = ET.fromstring(body)
    return {
        url.findtext(f"{SM}loc") or "": [
            (link.get("hreflang") or "", link.get("href") or "") for link in url.iter(XHTML)
        ]
        for url in root.iter(f"{SM}url")
    }


async def _collect(
    core: SitemapCore, root: str = "/sitemap.xml"
) -> dict[str, list[tuple[str, str]]]:
    """Every URL reachable from sitemap.xml (through the index when there is one)."""
    _, body = await fetch(core, root)
    if b"<sitemapindex" not in body:
        return _alternates(body)
    found: dict[str, list[tuple[str, str]]] = {}
    for child in child_urls(check_document(body)):
        _, page = await fetch(core, child.removeprefix("https://example.com"))
        for loc, links in _alternates(page).items():
            assert loc not in found, f"{loc} listed twice"
            found[loc] = links
    return found


@pytest.mark.anyio
async def test_every_language_version_lists_the_full_reciprocal_set() -> None:
    """Each neutral entry becomes one URL per language; each lists all of them, itself and
    x-default included, in the configured order."""
    languages = Languages(codes=("en", "de", "fr-CA"), x_default="en")
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"products": Section(["/products/1", "/products/2"], languages=languages)},
    )
    found = await _collect(SitemapCore(config))
    assert sorted(found) == sorted(
        f"https://example.com/{lang}/products/{i}" for lang in ("en", "de", "fr-CA") for i in (1, 2)
    )
    for i in (1, 2):
        group = [
            ("en", f"https://example.com/en/products/{i}"),
            ("de", f"https://example.com/de/products/{i}"),
            ("fr-CA", f"https://example.com/fr-CA/products/{i}"),
            ("x-default", f"https://example.com/en/products/{i}"),
        ]
        for _, href in group[:3]:
            assert found[href] == group


@pytest.mark.anyio
async def test_languages_with_a_function_keep_the_entry_fields() -> None:
    """A function maps paths per language; lastmod, changefreq and priority carry over."""
    languages = Languages(codes=("en", "ja"), url=lambda path, lang: f"{path}?hl={lang}")
    entry = SitemapEntry("/docs", lastmod="2024-05-01", changefreq="weekly", priority=0.8)
    config = SitemapConfig(
        base_url="https://example.com", sections={"docs": Section([entry], languages=languages)}
    )
    _, body = await fetch(SitemapCore(config), "/sitemap.xml")
    text = body.decode()
    assert text.count("<lastmod>2024-05-01</lastmod>") == 2
    assert "https://example.com/docs?hl=ja" in text


@pytest.mark.anyio
async def test_languages_expand_rows_mapped_by_the_middleware() -> None:
    """Rows a mapping turns into entries (CallableProvider(map=...), SQL providers) are
    expanded too; a row the mapping fails on costs its own URLs only."""
    rows = [{"slug": "tea"}, {"slug": None}, {"slug": "green tea"}]
    provider = CallableProvider(lambda: rows, map=lambda row: "/products/" + row["slug"])
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": Section(provider, languages=Languages(codes=("en", "de")))},
    )
    found = await _collect(SitemapCore(config))
    assert sorted(found) == sorted(
        f"https://example.com/{lang}/products/{slug}"
        for lang in ("en", "de")
        for slug in ("tea", "green%20tea")
    )


@settings(max_examples=40, deadline=None)
@given(
    items=st.integers(0, 25),
    languages=st.integers(1, 4),
    page_size=st.integers(1, 9),
    versioned=st.booleans(),
)
def test_paged_languages_list_every_url_exactly_once(
    items: int, languages: int, page_size: int, versioned: bool
) -> None:
    """With count() and page(), pages of any size cover items x languages once each."""
    codes = ("en", "de", "fr", "it")[:languages]
    provider = CountingProvider(items, versioned=versioned)
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": Section(provider, languages=Languages(codes=codes))},
        max_urls_per_page=page_size,
    )

    async def run() -> dict[str, Any]:
        core = SitemapCore(config)
        if items == 0:
            reply, _ = await fetch(core, "/sitemap.xml")
            assert reply.status == 404
            return {}
        return await _collect(core)

    found = anyio.run(run)
    expected = {
        f"https://example.com/{lang}/products/{i}?ref=a&b={i}"
        for lang in codes
        for i in range(items)
    }
    assert set(found) == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"codes": ("en", "english")}, "Languages.codes entries must be BCP 47"),
        ({"codes": ("en", "en")}, "must name distinct codes"),
        ({"codes": "en"}, "not a string"),
        ({"codes": ("en",), "url": "/{lang}/x"}, "must hold {lang} and {path}"),
        ({"codes": ("en",), "x_default": "de"}, "Languages.x_default must be one of"),
    ],
)
def test_languages_refuse_bad_settings(kwargs: dict[str, Any], message: str) -> None:
    """Bad codes, patterns and x-default fail at construction, naming the field."""
    with pytest.raises(ConfigurationError, match=message.replace("{", r"\{").replace("}", r"\}")):
        Languages(**kwargs)


@pytest.mark.anyio
async def test_hand_written_alternates_without_self_reference_are_reported_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry whose alternates omit itself is still listed, and the section's problem is
    logged once, not once per entry or per request."""
    monkeypatch.setattr(_logs, "_REPORTED", set())
    entries = [
        SitemapEntry(f"/de/p/{i}", alternates=[Alternate("en", f"/en/p/{i}")]) for i in range(5)
    ]
    core = make_core({"handmade": entries})
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        for _ in range(2):
            reply, body = await fetch(core, "/sitemap.xml")
            assert len(_alternates(body)) == 5
    problems = [r.getMessage() for r in caplog.records if "not itself" in r.getMessage()]
    assert len(problems) == 1 and "'handmade'" in problems[0]


def _article(days_old: float) -> SitemapEntry:
    published = datetime.now(timezone.utc) - timedelta(days=days_old)
    return SitemapEntry(
        f"/news/{days_old}",
        news=NewsArticle(
            publication_name="Daily", language="en", publication_date=published, title="t"
        ),
    )


@pytest.mark.anyio
async def test_news_older_than_two_days_is_left_out(caplog: pytest.LogCaptureFixture) -> None:
    """Google's window: a 2020 article (or one from three days ago) is not served."""
    entries = [
        _article(0.5),
        _article(1.9),
        _article(3),
        SitemapEntry(
            "/news/old",
            news=NewsArticle(
                publication_name="D", language="en", publication_date="2020-01-01", title="t"
            ),
        ),
    ]
    news = Section(entries, news=True)
    core = make_core({"news": news})
    with caplog.at_level(logging.INFO, logger="sitemap_middleware"):
        _, body = await fetch(core, "/sitemap.xml")
    assert sorted(_alternates(body)) == [
        "https://example.com/news/0.5",
        "https://example.com/news/1.9",
    ]
    assert any("left out 2 news articles" in r.getMessage() for r in caplog.records)
    keep_all = make_core({"news": news}, news_max_age=None)
    _, body = await fetch(keep_all, "/sitemap.xml")
    assert len(_alternates(body)) == 4
    with pytest.raises(ConfigurationError, match="news_max_age must be a positive timedelta"):
        SitemapConfig(
            base_url="https://example.com", sections={"n": entries}, news_max_age=timedelta(0)
        )


# -- review-core: defects found by the hostile review ---------------------------------


class _PagedList:
    """A provider with count() and page() over a fixed list of raw items."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    async def entries(self) -> Any:
        for item in self.items:
            yield item

    def page(self, offset: int, limit: int) -> Any:
        async def gen() -> Any:
            for item in self.items[offset : offset + limit]:
                yield item

        return gen()

    async def count(self) -> int:
        return len(self.items)


@pytest.mark.anyio
async def test_languages_pages_never_repeat_a_url_after_an_invalid_item() -> None:
    # 2 languages, 3 URLs a page: page 2 starts half-way through item 1 by arithmetic,
    # but item 0 (invalid) expanded to one raw item, not two.
    bad = {"loc": "/a", "priority": 7}
    config = SitemapConfig(
        base_url="https://example.com",
        max_urls_per_page=3,
        sections={
            "p": Section(
                _PagedList([bad, "/b", "/c", "/d"]), languages=Languages(codes=("en", "de"))
            )
        },
    )
    found = await _collect(SitemapCore(config))  # asserts "listed twice"
    assert sorted(found) == [
        f"https://example.com/{lang}/{p}" for lang in ("de", "en") for p in "bcd"
    ]


@pytest.mark.anyio
async def test_languages_keep_absolute_entries_under_a_base_path() -> None:
    # "/p/1" and "https://example.com/shop/p/1" are the same page under a /shop base.
    config = SitemapConfig(
        base_url="https://example.com/shop",
        sections={
            "p": Section(
                ["https://example.com/shop/p/1", "/p/2"], languages=Languages(codes=("en", "de"))
            )
        },
    )
    _, body = await fetch(SitemapCore(config), "/shop/sitemap.xml")
    assert set(_alternates(body)) == {
        "https://example.com/shop/en/p/1",
        "https://example.com/shop/de/p/1",
        "https://example.com/shop/en/p/2",
        "https://example.com/shop/de/p/2",
    }


@pytest.mark.anyio
async def test_index_never_lists_a_news_page_the_window_emptied() -> None:
    """Docs: an empty section has no pages and the index leaves it out. A news section
    whose articles are all past news_max_age was still listed, and its page answered 404."""
    old = SitemapEntry(
        "/news/1",
        news=NewsArticle(
            publication_name="Daily",
            language="en",
            publication_date=datetime(2020, 1, 1, tzinfo=timezone.utc),
            title="Old",
        ),
    )
    core = make_core({"pages": ["/a"], "news": Section([old], news=True)})
    _, body = await fetch(core, "/sitemap_index.xml")
    for child in child_urls(check_document(body)):
        reply, _ = await fetch(core, child.removeprefix("https://example.com"))
        assert reply.status == 200, child


@pytest.mark.anyio
async def test_languages_keep_the_index_lastmod_of_each_page() -> None:
    """Languages keeps count() and page(); page_last_modified() was dropped, so every
    index child of a language section lost its <lastmod> (SQLAlchemyProvider included)."""

    class Dated(_PagedList):
        async def page_last_modified(self, size: int) -> list[datetime | None]:
            return [datetime(2024, 1, 4, tzinfo=timezone.utc)] * -(-len(self.items) // size)

    config = SitemapConfig(
        base_url="https://example.com",
        max_urls_per_page=2,
        sections={"p": Section(Dated(["/a", "/b"]), languages=Languages(codes=("en", "de")))},
    )
    _, body = await fetch(SitemapCore(config), "/sitemap_index.xml")
    root = ET.fromstring(body)
    children = root.findall(f"{SM}sitemap")
    assert len(children) == 2
    assert all(child.findtext(f"{SM}lastmod") for child in children)


@pytest.mark.anyio
async def test_one_entry_too_long_once_localized_is_left_out_not_the_section() -> None:
    """A neutral path that fits 2,048 characters but not with "/de" in front made
    Languages raise inside the provider: the whole section answered 503 (or aborted
    mid-stream), where any other invalid entry is left out and logged."""
    long = "/" + "a" * 2045
    config = SitemapConfig(
        base_url="https://example.com",
        sections={"p": Section(["/ok", long], languages=Languages(codes=("en", "de")))},
    )
    reply, body = await fetch(SitemapCore(config), "/sitemap.xml")
    assert reply.status == 200
    assert set(_alternates(body)) == {"https://example.com/en/ok", "https://example.com/de/ok"}


class _Aligned(_PagedList):
    """Keyset-like: serves only pages that start on a multiple of their size."""

    def page(self, offset: int, limit: int) -> Any:
        if offset % limit:
            return super().page(0, 0)
        return super().page(offset, limit)


@pytest.mark.anyio
@pytest.mark.parametrize("page_size", [2, 3, 5, 6, 7])
async def test_languages_read_providers_that_only_serve_aligned_pages(page_size: int) -> None:
    """Page sizes that divide by the number of languages or not: every URL once."""
    config = SitemapConfig(
        base_url="https://example.com",
        max_urls_per_page=page_size,
        sections={
            "p": Section(
                _Aligned([f"/{n}" for n in range(11)]),
                languages=Languages(codes=("en", "de", "fr")),
            )
        },
    )
    found = await _collect(SitemapCore(config))
    assert sorted(found) == sorted(
        f"https://example.com/{lang}/{n}" for lang in ("en", "de", "fr") for n in range(11)
    )
