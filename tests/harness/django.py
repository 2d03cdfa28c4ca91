"""The Django tests' project in process: its Tag rows, a core over its sitemaps, and our
documents against Django's own sitemap views, parsed (same URLs, same fields).

Django's settings are per process: the ``django_project`` fixture (tests/conftest.py)
configures them (tests/djangoproject, SQLite, plus PostgreSQL when CI starts one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone
from typing import Any

import anyio
import pytest
from lxml import etree

from sitemap_middleware._engine.core import SitemapCore
from tests.harness.core import fetch
from tests.harness.documents import check_document

#: The databases a test runs on: SQLite always, PostgreSQL when CI starts one.
ALIASES = ["default", pytest.param("pg", marks=pytest.mark.postgres)]
DAY = datetime(2024, 2, 1, tzinfo=timezone.utc)

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XHTML = "{http://www.w3.org/1999/xhtml}"
#: Section -> pages, for the seeded data (tests/djangoproject/data.py).
PAGES = {"products": 3, "pages": 1, "articles": 3, "news": 1, "catalog": 3}
#: The QuerySet provider lists what ProductSitemap lists.
DJANGO_SECTION = {"catalog": "products"}

Url = tuple[str, str | None, str | None, float | None, tuple[tuple[str, str], ...]]


def instant(text: str | None) -> datetime | None:
    """A W3C date or datetime as an aware datetime (a date is midnight UTC)."""
    if text is None:
        return None
    value = datetime.fromisoformat(text)
    if len(text) == 10:
        return datetime.combine(date.fromisoformat(text), datetime.min.time(), timezone.utc)
    return value


def urls(body: bytes, *, ours: bool) -> list[Url]:
    """(loc, lastmod day, changefreq, priority, alternates) of every <url>, in order.

    Django's template writes lastmod as a date (in TIME_ZONE, UTC here); ours keeps the
    time, so ours is reduced to its UTC day to compare.
    """
    if ours:
        check_document(body)  # ultimate-sitemap-parser, and the XSDs when available
    out = []
    for url in etree.fromstring(body).iter(NS + "url"):
        lastmod = url.findtext(NS + "lastmod")
        moment = instant(lastmod.strip()) if lastmod else None
        priority = url.findtext(NS + "priority")
        out.append(
            (
                (url.findtext(NS + "loc") or "").strip(),
                moment.astimezone(timezone.utc).date().isoformat() if moment else None,
                url.findtext(NS + "changefreq"),
                float(priority) if priority else None,
                tuple(
                    (link.get("hreflang"), link.get("href")) for link in url.iter(XHTML + "link")
                ),
            )
        )
    return out


def index(body: bytes, *, ours: bool) -> list[tuple[str, int, datetime | None]]:
    """(section, page, lastmod) of every index child, ours and Django's URL styles alike."""
    if ours:
        check_document(body)
    out = []
    for child in etree.fromstring(body).iter(NS + "sitemap"):
        loc = (child.findtext(NS + "loc") or "").strip()
        lastmod = child.findtext(NS + "lastmod")
        name = loc.rsplit("/", 1)[1]
        if ours:  # sitemap-products-2.xml
            stem = name.removeprefix("sitemap-").removesuffix(".xml").split("~")[0]
            section, page = stem.rsplit("-", 1)  # also sitemap-catalog-2~<key range>.xml
        else:  # django/sitemap-products.xml?p=2
            section, _, page = name.removeprefix("sitemap-").partition(".xml")
            page = page.removeprefix("?p=") or "1"
        out.append((section, int(page), instant(lastmod.strip()) if lastmod else None))
    return out


def assert_same_as_django(get: Callable[[str], bytes], base: str = "https://example.com") -> None:
    """Every page, the index and the root of ours against Django's views, via ``get(path)``."""
    everything: list[Url] = []
    for section, pages in PAGES.items():
        theirs_name = DJANGO_SECTION.get(section, section)
        for number in range(1, pages + 1):
            ours = urls(get(f"/sitemap-{section}-{number}.xml"), ours=True)
            theirs = urls(get(f"/django/sitemap-{theirs_name}.xml?p={number}"), ours=False)
            assert ours == theirs, (section, number)
            assert ours and all(url[0].startswith(base + "/") for url in ours)
            if section != "catalog":
                everything += ours
        # past the last page: Django 404s, so do we
        assert get(f"/sitemap-{section}-{pages + 1}.xml") == b"404"
    ours_index = index(get("/sitemap_index.xml"), ours=True)
    theirs_index = index(get("/django/sitemap_index.xml"), ours=False)
    ours_rows = [row for row in ours_index if row[0] != "catalog"]
    assert [row[:2] for row in ours_rows] == [row[:2] for row in theirs_index]
    # Django gives every page of a sitemap its latest lastmod; ours is each page's newest
    # entry (a deliberate difference): never later, and the newest page agrees.
    for (section, _, mine), (_, _, django) in zip(ours_rows, theirs_index, strict=True):
        assert mine == django or (mine is not None and django is not None and mine < django)
        newest = max((r[2] for r in ours_rows if r[0] == section and r[2]), default=None)
        assert newest == django
    assert [row[:2] for row in ours_index if row[0] == "catalog"] == [
        ("catalog", n) for n in (1, 2, 3)
    ]
    assert index(get("/sitemap.xml"), ours=True) == ours_index  # too many pages for one file
    assert len(everything) == 17 + 6 + 12 + 6


def as_bytes(status: int, body: bytes) -> bytes:
    """A body, or the status as bytes for anything but 200 (so 404s compare simply)."""
    return body if status == 200 else str(status).encode()


def alias_or_skip(name: str) -> str:
    """``name``, or skip the test when that database is not configured."""
    from django.conf import settings

    if name not in settings.DATABASES:
        pytest.skip("SITEMAP_TEST_POSTGRES_URL is not set (scripts/test starts PostgreSQL)")
    return name


def write_tags(alias: str, rows: list[tuple[str | None, datetime | None]]) -> None:
    """Replace every Tag of ``alias`` with ``rows`` (code, updated), ids from 1 in order."""
    from tests.djangoproject.shop.models import Tag

    Tag.objects.using(alias).all().delete()
    Tag.objects.using(alias).bulk_create(
        Tag(pk=number, code=code, updated=updated) for number, (code, updated) in enumerate(rows, 1)
    )


def core_for(sitemaps: dict[str, Any], **kwargs: Any) -> SitemapCore:
    from sitemap_middleware.django import sitemap_config

    return SitemapCore(sitemap_config(sitemaps, base_url="https://example.com", **kwargs))


def get(core: SitemapCore, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    reply, body = anyio.run(lambda: fetch(core, path, **headers))
    return reply.status, {k.lower(): v for k, v in reply.headers}, body


def locs(body: bytes) -> list[str]:
    return [url[0] for url in urls(body, ours=True)]


def locs_of_index(body: bytes) -> list[str]:
    from lxml import etree

    check_document(body)
    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    return [loc.text or "" for loc in etree.fromstring(body).iter(ns + "loc")]


class _ItemsAreLocations:
    """Locations are the items themselves."""

    def location(self, item: str) -> str:
        return item


def sitemap_class(name: str, items: list[Any], **attributes: Any) -> Any:
    """A Django ``Sitemap`` class of ``items`` (each its own location) and ``attributes``."""
    from django.contrib.sitemaps import Sitemap

    return type(name, (_ItemsAreLocations, Sitemap), {"items": lambda self: items, **attributes})


def unmanaged_model(name: str, table: str, **fields: Any) -> Any:
    """A model of the test project's ``shop`` app over ``table``, which Django never
    creates (the test makes it, or none). Django keeps every model class it is given:
    make each name once (``functools.cache`` around the caller)."""
    from django.db import models

    meta = type("Meta", (), {"app_label": "shop", "managed": False, "db_table": table})
    attributes = {"__module__": "tests.djangoproject.shop.models", "Meta": meta, **fields}
    return type(name, (models.Model,), attributes)


class RevisionedRows:
    """Revisioned rows of one database, every insert and update taking the next revision."""

    def __init__(self, alias: str) -> None:
        from tests.djangoproject.shop.models import Revisioned

        self.objects = Revisioned.objects.using(alias)
        self.model = Revisioned
        self.revision = 0
        self.ids: list[int] = []

    def next(self) -> int:
        self.revision += 1
        return self.revision

    def fill(self, count: int) -> None:
        self.objects.all().delete()
        self.ids = list(range(3, 3 * count + 1, 3))
        self.objects.bulk_create(
            self.model(pk=key, code=f"s{key}", updated=DAY, revision=self.next())
            for key in self.ids
        )

    def write(self, kind: str, number: int) -> None:
        if kind == "insert" or not self.ids:
            key = number * 3 + 1 + number % 2  # between the existing keys, or past them
            if key not in self.ids:
                self.objects.create(pk=key, code=f"n{number}", updated=DAY, revision=self.next())
                self.ids.append(key)
            return
        key = self.ids[number % len(self.ids)]
        if kind == "delete":
            self.objects.filter(pk=key).delete()
            self.ids.remove(key)
            return
        self.objects.filter(pk=key).update(
            code=None if kind == "null" else f"r{number}",
            updated=DAY + timedelta(minutes=number),
            revision=self.next(),
        )


@contextmanager
def recorded_connections() -> Iterator[tuple[list[str], list[Any]]]:
    """SQL run and connections opened (in any thread) while the block runs."""
    from django.db.backends.signals import connection_created

    statements: list[str] = []
    opened: list[Any] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(sql)
        return execute(sql, params, many, context)

    def on_created(sender: Any, connection: Any, **kwargs: Any) -> None:
        opened.append(connection)
        connection.execute_wrappers.append(record)

    connection_created.connect(on_created)
    try:
        yield statements, opened
    finally:
        connection_created.disconnect(on_created)
        for connection in opened:
            if record in connection.execute_wrappers:
                connection.execute_wrappers.remove(record)
