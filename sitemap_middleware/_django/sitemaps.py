"""``django.contrib.sitemaps.Sitemap`` classes served unchanged, as providers.

This module alone mirrors Django's own ``Sitemap._urls()`` (Django 4.2 to 5.2): which
items a sitemap lists (``items()``, multiplied by language under ``i18n``), how each
field is read (``Sitemap._get``: a method is called with the item, anything else is used
as is, a missing attribute means "none"), the hreflang alternates and ``x-default``, the
pagination by ``limit``, and the index ``<lastmod>`` from ``get_latest_lastmod()``.

What differs from Django's views, on purpose:

* ``<loc>`` is the base URL plus ``location(item)``: the scheme and host come from
  ``SitemapConfig.base_url`` (or a trusted host), never from the request. A
  ``protocol`` that disagrees with the base URL's scheme is a configuration error
  (:func:`sitemap_middleware.django.sitemap_config` says so) rather than URLs on another
  origin, which the sitemaps.org location rule forbids.
* ``<lastmod>`` keeps the time of day and zone (Django's template writes the date only).
* A page is read in batches of ``batch_size`` items (a QuerySet slice each), not loaded
  whole; :class:`~sitemap_middleware.django.DjangoQuerySetProvider` avoids the OFFSETs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

from .orm import run_orm

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap

    from .._config import Section

from .._providers.base import ProviderVersion

__all__ = ["DjangoSitemapProvider", "aware_datetime", "django_sections"]

#: Items converted per worker-thread hop: one connection and one QuerySet slice each.
BATCH_SIZE = 5000


def aware_datetime(value: object) -> datetime | None:
    """A date or datetime as an aware datetime (naive means UTC, as everywhere here)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    return None


def _field(sitemap: Sitemap, name: str, obj: object) -> Any:
    """Django's ``Sitemap._get``: call a method with the item, else use the attribute."""
    try:
        attr = getattr(sitemap, name)
    except AttributeError:
        return None
    return attr(obj) if callable(attr) else attr


def _fixed_languages(sitemap: Sitemap) -> bool:
    """Whether every item has the same languages (``get_languages_for_item`` not overridden)."""
    from django.contrib.sitemaps import Sitemap

    return type(sitemap).get_languages_for_item is Sitemap.get_languages_for_item


@dataclass(slots=True)
class _Listing:
    """One request's view of a sitemap: the instance and its (lazy) ``items()``."""

    sitemap: Sitemap
    items: Any

    def count(self) -> int:
        from django.core.paginator import Paginator

        # Django's Paginator: QuerySet.count() when there is one, else len(); it also
        # warns about an unordered QuerySet exactly as Django's views do.
        items = Paginator(self.items, self.sitemap.limit).count
        if not self.sitemap.i18n:
            return int(items)
        if _fixed_languages(self.sitemap):
            return int(items) * len(self.sitemap._languages())
        return sum(len(self.sitemap.get_languages_for_item(item)) for item in self.items)

    def pairs(self, offset: int, limit: int) -> list[tuple[object, str | None]]:
        """Items ``offset`` to ``offset + limit`` of Django's paginated list."""
        sitemap = self.sitemap
        if not sitemap.i18n:
            return [(item, None) for item in self.items[offset : offset + limit]]
        if _fixed_languages(sitemap):
            languages = list(sitemap._languages())
            if not languages:
                return []
            first = offset // len(languages)
            stop = -(-(offset + limit) // len(languages))
            skip = offset - first * len(languages)
            chosen = self.items[first:stop]
            pairs = [(item, code) for item in chosen for code in languages]
            return list(pairs[skip : skip + limit])
        every = [
            (item, code) for item in self.items for code in sitemap.get_languages_for_item(item)
        ]
        return list(every[offset : offset + limit])

    def entry(self, item: object, language: str | None) -> dict[str, Any]:
        """One ``<url>`` as Django's ``_urls()`` builds it, as a mapping of entry fields."""
        sitemap = self.sitemap
        entry: dict[str, Any] = {
            "loc": self._location(item, language),
            "lastmod": _field(sitemap, "lastmod", item) or None,
            "changefreq": _field(sitemap, "changefreq", item) or None,
            "priority": _field(sitemap, "priority", item),
        }
        if sitemap.i18n and sitemap.alternates:
            from django.conf import settings

            languages = sitemap.get_languages_for_item(item)
            alternates = [
                {"hreflang": code, "href": self._location(item, code)} for code in languages
            ]
            if sitemap.x_default and settings.LANGUAGE_CODE in languages:
                code = settings.LANGUAGE_CODE
                href = self._location(item, code).replace(f"/{code}/", "/", 1)
                alternates.append({"hreflang": "x-default", "href": href})
            entry["alternates"] = alternates
        return entry

    def _location(self, item: object, language: str | None) -> Any:
        if language is None:
            return _field(self.sitemap, "location", item)
        from django.utils import translation

        with translation.override(language):
            return _field(self.sitemap, "location", item)


class DjangoSitemapProvider:
    """A ``django.contrib.sitemaps.Sitemap`` (subclass or instance) as a provider.

    Existing sitemap classes work unchanged: ``items()``, ``location()``, ``lastmod``,
    ``changefreq``, ``priority``, ``limit``, ``i18n``, ``languages``, ``alternates``,
    ``x_default``, ``get_languages_for_item()``, ``get_latest_lastmod()`` and
    ``GenericSitemap`` keep their Django meaning. A class is instantiated for every
    request, as Django's views do. Every call into it runs in a worker thread (the ORM
    is synchronous), whose database connections are closed when the call returns.

    :param sitemap: a ``Sitemap`` subclass or instance.
    :param batch_size: items read and converted per worker-thread hop.

    Capabilities: ``count()`` (``QuerySet.count()`` or ``len()``, times the languages
    under ``i18n``), ``page()`` (a slice of ``items()``, as Django's paginator takes),
    ``page_last_modified()`` (every page of the section gets ``get_latest_lastmod()``,
    as in Django's index) and, when ``get_latest_lastmod()`` is overridden (as
    ``GenericSitemap`` with a ``date_field`` does), ``version()`` from it, which gives
    ETag, Last-Modified and 304s. The default ``get_latest_lastmod()`` calls
    ``lastmod()`` on every item: too costly for every request, so it is used for the
    index only.

    Use it in a section with ``max_urls=sitemap.limit`` (``django_sections`` does) so
    pages split where Django's would.
    """

    def __init__(self, sitemap: Sitemap | type[Sitemap], *, batch_size: int = BATCH_SIZE) -> None:
        from django.contrib.sitemaps import Sitemap

        is_class = isinstance(sitemap, type) and issubclass(sitemap, Sitemap)
        if not (is_class or isinstance(sitemap, Sitemap)):
            raise TypeError(
                "DjangoSitemapProvider needs a django.contrib.sitemaps.Sitemap subclass or "
                f"instance, got {sitemap!r} ({type(sitemap).__name__})"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        self.sitemap = sitemap
        self.batch_size = batch_size
        limit = sitemap.limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"{self.name}.limit must be an integer >= 1, got {limit!r}")
        self.limit: int = limit
        kind: Any = sitemap if isinstance(sitemap, type) else type(sitemap)
        #: ``get_latest_lastmod`` overridden (GenericSitemap's is one query): cheap enough
        #: to answer every request's validators.
        self.versioned = kind.get_latest_lastmod is not Sitemap.get_latest_lastmod

    @property
    def name(self) -> str:
        sitemap = self.sitemap
        return sitemap.__name__ if isinstance(sitemap, type) else type(sitemap).__name__

    def __repr__(self) -> str:
        return f"DjangoSitemapProvider({self.name})"

    def _listing(self) -> _Listing:
        sitemap = self.sitemap() if isinstance(self.sitemap, type) else self.sitemap
        return _Listing(sitemap, sitemap.items())

    def entries(self) -> AsyncIterator[dict[str, Any]]:
        return self._read(0, None)

    def page(self, offset: int, limit: int) -> AsyncIterator[dict[str, Any]]:
        return self._read(offset, limit)

    async def _read(self, offset: int, limit: int | None) -> AsyncIterator[dict[str, Any]]:
        listing: _Listing | None = None
        position, end = offset, None if limit is None else offset + limit
        while end is None or position < end:
            size = self.batch_size if end is None else min(self.batch_size, end - position)
            listing, batch = await run_orm(self._batch, listing, position, size)
            for entry in batch:
                yield entry
            if len(batch) < size:
                return
            position += size

    def _batch(
        self, listing: _Listing | None, offset: int, size: int
    ) -> tuple[_Listing, list[dict[str, Any]]]:
        # items() is called once per response (as Django's view calls it once); a lazy
        # QuerySet is only sliced here, so each hop runs its own LIMIT/OFFSET query.
        listing = listing or self._listing()
        return listing, [listing.entry(item, code) for item, code in listing.pairs(offset, size)]

    async def count(self) -> int:
        return await run_orm(lambda: self._listing().count())

    async def version(self) -> ProviderVersion:
        if not self.versioned:
            return ProviderVersion()
        latest = await run_orm(lambda: self._listing().sitemap.get_latest_lastmod())
        return ProviderVersion(last_modified=aware_datetime(latest))

    async def page_last_modified(self, page_size: int) -> list[datetime | None]:
        def read() -> list[datetime | None]:
            listing = self._listing()
            latest = aware_datetime(listing.sitemap.get_latest_lastmod())
            return [latest] * -(-listing.count() // page_size)

        return await run_orm(read)


def django_sections(
    sitemaps: Mapping[str, Sitemap | type[Sitemap]], *, batch_size: int = BATCH_SIZE
) -> dict[str, Section]:
    """The ``sitemaps`` dict of a Django URLconf as sections, each paged by its ``limit``."""
    from .._config import Section

    if not isinstance(sitemaps, Mapping):
        raise TypeError(f"sitemaps must be a mapping of section name to Sitemap, got {sitemaps!r}")
    return {
        name: Section(provider, max_urls=provider.limit)
        for name, provider in (
            (name, DjangoSitemapProvider(sitemap, batch_size=batch_size))
            for name, sitemap in sitemaps.items()
        )
    }


def sitemap_protocols(sitemaps: Iterable[Sitemap | type[Sitemap]]) -> set[str]:
    """The ``protocol`` values the sitemaps force (``None``: the request's, i.e. ours)."""
    return {s.protocol for s in sitemaps if getattr(s, "protocol", None)}
