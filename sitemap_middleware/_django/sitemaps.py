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
* Values Django writes as they are but the sitemap XSD refuses cost only themselves: a
  ``priority`` outside 0.0-1.0, an unknown ``changefreq`` or a ``lastmod`` that is no
  date is left out of its ``<url>`` (logged once per section and field, naming the
  value), and a location with a space, ``<`` or other characters a URI may not hold is
  percent-encoded (``/a%20b``: the same URL). The URL itself is always kept.
* An empty sitemap's page 1 is an empty ``<urlset>`` (200), as Django's view answers
  (``allow_empty_first_page``); the index leaves it out, as it holds no URL (and
  ``sitemap.xsd`` requires one per urlset). A page the count puts in the index answers
  200 even when every entry on it was left out.
* A page is one slice of ``items()`` (one query, as in Django) read with ``.iterator()``
  in batches of ``batch_size`` by one thread, never held whole;
  :class:`~sitemap_middleware.django.DjangoQuerySetProvider` avoids even that ``OFFSET``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from itertools import islice
from typing import TYPE_CHECKING, Any

from .orm import ThreadedBatches, run_orm
from .times import aware_datetime, naive_zone, zoned

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap

    from .._config import Section

from .._exceptions import ConfigurationError, InvalidEntryError
from .._logs import report_once
from .._providers.base import ProviderVersion
from .._sansio.limits import MAX_URLS
from .._sansio.models import simple_fields
from .._sansio.skip import SKIP
from .._sansio.urls import quote_unsafe

__all__ = ["DjangoSitemapProvider", "django_sections"]

#: Items fetched (``.iterator(chunk_size)``) and converted per hand-over to the loop.
BATCH_SIZE = 2000


def _field(sitemap: Sitemap, name: str, obj: object) -> Any:
    """Django's ``Sitemap._get``: call a method with the item, else use the attribute."""
    try:
        attr = getattr(sitemap, name)
    except AttributeError:
        return None
    return attr(obj) if callable(attr) else attr


def _iterate(items: Any) -> Iterator[Any]:
    """A QuerySet through ``.iterator()`` (rows fetched in chunks), anything else as is."""
    from django.db.models import QuerySet

    if isinstance(items, QuerySet):
        return iter(items.iterator(chunk_size=BATCH_SIZE))
    return iter(items)


def _fixed_languages(sitemap: Sitemap) -> bool:
    """Whether every item has the same languages (``get_languages_for_item`` not overridden)."""
    from django.contrib.sitemaps import Sitemap

    return type(sitemap).get_languages_for_item is Sitemap.get_languages_for_item


#: The optional fields of a ``<url>``, in the order the XSD puts them.
_OPTIONAL = ("lastmod", "changefreq", "priority")


def written_location(value: object) -> object:
    """A location as Django writes it (as is), percent-encoded where a URI may not hold it."""
    return quote_unsafe(value) if isinstance(value, str) else value


def valid_fields(entry: dict[str, Any], section: str, source: str) -> dict[str, Any]:
    """``entry`` without the optional values the sitemap XSD refuses, each reported once.

    Django writes ``priority = 7`` or ``changefreq = "sometimes"`` as they are; a
    search engine reading against the XSD would reject the whole file. The URL stays;
    only the value goes (logged once per section and field, with the value).
    """
    try:
        simple_fields("/", entry["lastmod"], entry["changefreq"], entry["priority"])
        return entry
    except InvalidEntryError:
        pass
    for field in _OPTIONAL:
        try:
            simple_fields("/", **{field: entry[field]})
        except InvalidEntryError as exc:
            report_once(
                section,
                f"django {field}",
                f"{source}: {exc}; its URLs are listed without <{field}>",
            )
            entry[field] = None
    return entry


@dataclass(slots=True)
class _Listing:
    """One request's view of a sitemap: the instance and its (lazy) ``items()``."""

    sitemap: Sitemap
    items: Any
    section: str = ""
    #: The zone of naive lastmods (see times.py), read once per request.
    zone: tzinfo = dataclasses.field(default_factory=naive_zone)

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

    def pairs(self, offset: int, limit: int | None) -> Iterator[tuple[object, str | None]]:
        """Items ``offset`` to ``offset + limit`` of Django's paginated list, lazily.

        Each window of ``items()`` is sliced once (one query for a QuerySet, as Django's
        paginator does) and read with ``.iterator()``, so a page is never held whole.
        """
        sitemap = self.sitemap
        stop = None if limit is None else offset + limit
        if not sitemap.i18n:
            return ((item, None) for item in _iterate(self.items[offset:stop]))
        if _fixed_languages(sitemap):
            languages = list(sitemap._languages())
            if not languages:
                return iter(())
            first = offset // len(languages)
            last = None if stop is None else -(-stop // len(languages))
            pairs = (
                (item, code) for item in _iterate(self.items[first:last]) for code in languages
            )
            skip = offset - first * len(languages)
            return islice(pairs, skip, None if limit is None else skip + limit)
        every = (
            (item, code)
            for item in _iterate(self.items)
            for code in sitemap.get_languages_for_item(item)
        )
        return islice(every, offset, stop)

    def batches(self, offset: int, limit: int | None, size: int) -> Iterator[list[dict[str, Any]]]:
        """The entries of that window, ``size`` at a time."""
        pairs = self.pairs(offset, limit)
        while batch := [self.entry(item, code) for item, code in islice(pairs, size)]:
            yield batch

    def entry(self, item: object, language: str | None) -> Any:
        """One ``<url>`` as Django's ``_urls()`` builds it, as a mapping of entry fields
        (:data:`SKIP` when ``location()`` returns it)."""
        sitemap = self.sitemap
        loc = self._location(item, language)
        if loc is SKIP:
            return SKIP
        entry: dict[str, Any] = {
            "loc": loc,
            "lastmod": zoned(_field(sitemap, "lastmod", item), self.zone) or None,
            "changefreq": _field(sitemap, "changefreq", item) or None,
            "priority": _field(sitemap, "priority", item),
        }
        entry = valid_fields(entry, self.section, type(sitemap).__name__)
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
            loc = _field(self.sitemap, "location", item)
            return loc if loc is SKIP else written_location(loc)
        from django.utils import translation

        with translation.override(language):
            loc = _field(self.sitemap, "location", item)
            return loc if loc is SKIP else written_location(loc)


class DjangoSitemapProvider:
    """A ``django.contrib.sitemaps.Sitemap`` (subclass or instance) as a provider.

    Existing sitemap classes work unchanged: ``items()``, ``location()``, ``lastmod``,
    ``changefreq``, ``priority``, ``limit``, ``i18n``, ``languages``, ``alternates``,
    ``x_default``, ``get_languages_for_item()``, ``get_latest_lastmod()`` and
    ``GenericSitemap`` keep their Django meaning. A class is instantiated for every
    request, as Django's views do. Every call into it runs in a worker thread (the ORM
    is synchronous), whose database connections are closed when the call returns; a
    page is read by one thread, from one slice of ``items()``.

    :param sitemap: a ``Sitemap`` subclass or instance.
    :param batch_size: items converted per hand-over to the event loop.
    :param section: the section name warnings give (default: the class name).
    :param item_dates: opt-in, Django's ``Last-Modified`` for any sitemap: ``version()``
        reads every item's ``lastmod`` (in a worker thread, as Django's view does on
        every request) and gives the newest when every listed item has one. The cost
        is one pass over ``items()`` per version check, i.e. per request for a page, the
        index or ``/sitemap.xml``. With ``HTTPSettings(trust_provider_times=True)``
        ``If-Modified-Since`` is answered from it as Django answers it.

    Capabilities: ``count()`` (``QuerySet.count()`` or ``len()``, times the languages
    under ``i18n``), ``page()`` (one slice of ``items()``, as Django's paginator takes),
    ``page_last_modified()`` (every page of the section gets ``get_latest_lastmod()``,
    as in Django's index) and, for a ``GenericSitemap`` with a ``date_field``,
    ``version()`` from the newest date, which gives Last-Modified while no item's date
    is NULL (as Django's view sends it; see :meth:`version`). Other sitemaps get no
    version unless ``item_dates=True``: whether every item has a lastmod cannot be known
    without reading them all (``get_latest_lastmod()`` is used for the index only).

    Use it in a section with ``max_urls=sitemap.limit`` (``django_sections`` does) so
    pages split where Django's would.
    """

    #: Page 1 exists even when there is nothing to list (an empty ``<urlset>``), and a
    #: page the count gives exists even if every entry on it is left out: Django's
    #: paginator (``allow_empty_first_page``) and view answer 200 for both.
    allow_empty_first_page = True
    #: The index lists ``get_latest_lastmod()`` for every page, as Django's does,
    #: whatever the entries' own lastmods (an override, None, a date).
    page_dates_override = True

    def __init__(
        self,
        sitemap: Sitemap | type[Sitemap],
        *,
        batch_size: int = BATCH_SIZE,
        section: str | None = None,
        item_dates: bool = False,
    ) -> None:
        from django.contrib.sitemaps import GenericSitemap, Sitemap

        is_class = isinstance(sitemap, type) and issubclass(sitemap, Sitemap)
        if not (is_class or isinstance(sitemap, Sitemap)):
            raise TypeError(
                "DjangoSitemapProvider needs a django.contrib.sitemaps.Sitemap subclass or "
                f"instance, got {sitemap!r} ({type(sitemap).__name__})"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        check_item_dates(item_dates)
        self.sitemap = sitemap
        #: Read every item's lastmod for version() (see :meth:`version`).
        self.item_dates = item_dates
        self.batch_size = batch_size
        #: The section name its warnings give (django_sections sets it).
        self.section = section or self.name
        limit = sitemap.limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"{self.name}.limit must be an integer >= 1, got {limit!r}")
        self.limit: int = limit
        kind: Any = sitemap if isinstance(sitemap, type) else type(sitemap)
        #: A GenericSitemap: its dates are one aggregate query away (see version()).
        self.versioned = issubclass(kind, GenericSitemap)

    @property
    def name(self) -> str:
        sitemap = self.sitemap
        return sitemap.__name__ if isinstance(sitemap, type) else type(sitemap).__name__

    def __repr__(self) -> str:
        return f"DjangoSitemapProvider({self.name})"

    def _listing(self) -> _Listing:
        sitemap = self.sitemap() if isinstance(self.sitemap, type) else self.sitemap
        return _Listing(sitemap, sitemap.items(), self.section)

    def entries(self) -> AsyncIterator[dict[str, Any]]:
        return self._read(0, None)

    def page(self, offset: int, limit: int) -> AsyncIterator[dict[str, Any]]:
        return self._read(offset, limit)

    async def _read(self, offset: int, limit: int | None) -> AsyncIterator[dict[str, Any]]:
        # One thread reads the whole window: items() called once and sliced once (one
        # query, as Django's view), iterated with .iterator() in batches.
        def produce() -> Iterator[list[dict[str, Any]]]:
            return self._listing().batches(offset, limit, self.batch_size)

        # Closed explicitly (not left to the garbage collector): stopping the thread
        # and closing its connection must happen when the reader stops.
        async with aclosing(ThreadedBatches(produce).batches()) as batches:
            async for batch in batches:
                for entry in batch:
                    yield entry

    async def count(self) -> int:
        return await run_orm(lambda: self._listing().count())

    async def version(self) -> ProviderVersion:
        """Validators only when every item has a lastmod, as Django's view sends them.

        Django sends ``Last-Modified`` only when every item has a lastmod: the newest
        date says nothing about an undated item (deleting one leaves it unchanged, and a
        bare ``If-Modified-Since`` would get a stale 304). Here that means no version at
        all (no ETag either: a version without a time would be given the time it was
        first seen, and the next version, once every item is dated, an older one). A
        ``GenericSitemap`` with a ``date_field`` is checked by one aggregate query; any
        other sitemap cannot be checked without reading every item, so it gets no version
        unless ``item_dates=True`` asks for that pass (Django's view makes it on every
        request). The date is the section's, so on a section of several pages it is the
        newest of all of them (never older than Django's page date).
        """
        if self.versioned:
            latest, every_item_dated = await run_orm(self._freshness)
        elif self.item_dates and hasattr(self.sitemap, "lastmod"):
            latest, every_item_dated = await run_orm(lambda: item_freshness(self._listing()))
        else:
            return ProviderVersion()
        if latest is None or not every_item_dated:
            return ProviderVersion()
        return ProviderVersion(last_modified=latest)

    def _freshness(self) -> tuple[datetime | None, bool]:
        """The newest lastmod and whether every item has one (runs in a worker thread)."""
        from django.contrib.sitemaps import GenericSitemap
        from django.db.models import Count, Max, Q

        sitemap = self._listing().sitemap
        field = getattr(sitemap, "date_field", None)
        if isinstance(sitemap, GenericSitemap) and isinstance(field, str):
            # One query, the same on every database (Django's own get_latest_lastmod
            # sorts NULLs first on PostgreSQL and last on SQLite).
            row = sitemap.queryset.order_by().aggregate(
                latest=Max(field), undated=Count("pk", filter=Q(**{f"{field}__isnull": True}))
            )
            return aware_datetime(row["latest"]), row["undated"] == 0
        return None, False

    async def page_last_modified(self, page_size: int) -> list[date | None]:
        def read() -> list[date | None]:
            listing = self._listing()
            given = listing.sitemap.get_latest_lastmod()
            # A date stays a date: Django's index writes it as one ("2024-02-01").
            latest = given if type(given) is date else aware_datetime(given)
            return [latest] * -(-listing.count() // page_size)

        return await run_orm(read)


def check_item_dates(value: object) -> None:
    if not isinstance(value, bool):
        raise ConfigurationError(
            f"item_dates must be True or False, got {value!r} (True: Last-Modified from "
            "every item's lastmod, read on each version check)"
        )


def item_freshness(listing: _Listing) -> tuple[datetime | None, bool]:
    """The newest lastmod of the listed items and whether every one has a date, read as
    Django's ``_urls()`` reads them (one pass; stops at the first undated item)."""
    sitemap = listing.sitemap
    items = _iterate(listing.items)
    if sitemap.i18n:  # an item listed in no language is not on the page
        if not _fixed_languages(sitemap):
            items = (item for item in items if sitemap.get_languages_for_item(item))
        elif not sitemap._languages():
            return None, True
    latest: datetime | None = None
    for item in items:
        # Django's _get: a method called with the item (not the (item, language) pair).
        modified = aware_datetime(_field(sitemap, "lastmod", item))
        if modified is None:  # None, or no date: Django sends no Last-Modified then
            return None, False
        latest = modified if latest is None else max(latest, modified)
    return latest, True


def django_sections(
    sitemaps: Mapping[str, Sitemap | type[Sitemap]],
    *,
    batch_size: int = BATCH_SIZE,
    item_dates: bool = False,
) -> dict[str, Section]:
    """The ``sitemaps`` dict of a Django URLconf as sections, each paged by its ``limit``
    (``item_dates``: see :class:`DjangoSitemapProvider`); a sitemap that declares a
    ``location_template`` or ``key_ranges = True`` is served as a QuerySet
    (``templated.py``)."""
    from .._config import Section
    from .templated import keyed_provider, templated_provider

    if not isinstance(sitemaps, Mapping):
        raise TypeError(f"sitemaps must be a mapping of section name to Sitemap, got {sitemaps!r}")
    check_item_dates(item_dates)
    sections = {}
    for name, sitemap in sitemaps.items():
        provider = DjangoSitemapProvider(
            sitemap, batch_size=batch_size, section=name, item_dates=item_dates
        )
        if provider.limit > MAX_URLS:
            raise ConfigurationError(
                f"section {name!r}: {provider.name}.limit is {provider.limit}, but a sitemap "
                f"page holds at most {MAX_URLS:,} URLs"
            )
        # A location_template (or key_ranges): served as a QuerySet, planned in the database.
        templated = templated_provider(sitemap, name) or keyed_provider(sitemap, name)
        sections[name] = Section(templated or provider, max_urls=provider.limit)
    return sections


def sitemap_protocols(sitemaps: Iterable[Sitemap | type[Sitemap]]) -> set[str]:
    """The ``protocol`` values the sitemaps force (``None``: the request's, i.e. ours)."""
    return {s.protocol for s in sitemaps if getattr(s, "protocol", None)}
