"""A QuerySet read as values (issue 23, item 6): ``location="/tags/{code}/"`` builds no
model instance and serves what the same location function serves."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from sitemap_middleware import ConfigurationError, Section
from tests.harness.django import alias_or_skip, core_for, get, locs_of_index, write_tags

pytestmark = pytest.mark.usefixtures("django_project")
ALIASES = ["default", pytest.param("pg", marks=pytest.mark.postgres)]
DAY = datetime(2024, 2, 1, tzinfo=timezone.utc)


@pytest.fixture
def alias(request: pytest.FixtureRequest) -> Iterator[str]:
    name = alias_or_skip(request.param)
    yield name
    write_tags(name, [])


def _crawl(alias: str, location: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[list[bytes], int]:
    """Every page body of the tags section, and how many Tag instances were built."""
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    built = 0
    from_db = Tag.from_db.__func__

    def counting(cls: Any, *args: Any) -> Any:
        nonlocal built
        built += 1
        return from_db(cls, *args)

    monkeypatch.setattr(Tag, "from_db", classmethod(counting))
    tags = DjangoQuerySetProvider(
        Tag.objects.using(alias), lastmod="updated", location=location, changefreq="daily"
    )
    core = core_for({}, sections={"tags": Section(tags, max_urls=7)})
    status, _, index = get(core, "/sitemap_index.xml")
    assert status == 200
    pages = [get(core, url.removeprefix("https://example.com"))[2] for url in locs_of_index(index)]
    return pages, built


@pytest.mark.parametrize("alias", ALIASES, indirect=True)
def test_a_location_template_reads_values_and_serves_what_a_function_serves(
    alias: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.djangoproject.shop.models import Tag

    write_tags(alias, [])
    Tag.objects.using(alias).bulk_create(
        [Tag(pk=i, code=f"t-{i}", updated=DAY - timedelta(hours=i)) for i in range(1, 31)]
    )
    by_template, built = _crawl(alias, "/tags/{code}/", monkeypatch)
    by_function, built_by_function = _crawl(alias, lambda tag: f"/tags/{tag.code}/", monkeypatch)
    assert by_template == by_function and len(by_template) == 5
    assert built == 0 and built_by_function >= 30


def test_a_location_template_must_name_fields() -> None:
    from sitemap_middleware.django import DjangoQuerySetProvider
    from tests.djangoproject.shop.models import Tag

    with pytest.raises(ConfigurationError, match="names no field"):
        DjangoQuerySetProvider(Tag.objects.all(), location="/tags/")
    with pytest.raises(ConfigurationError, match="nope"):
        DjangoQuerySetProvider(Tag.objects.all(), location="/tags/{nope}/")
