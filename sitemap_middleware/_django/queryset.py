"""A Django QuerySet as a provider: keyset pages, counts and versions from the database.

Pages are key ranges (``WHERE key >= :first ORDER BY key LIMIT n``), never a growing
``OFFSET``: the first key of every page comes from one window-function query (Django 4.2
filters on window annotations), cached until the data's version changes. Count and
version are one aggregate query; the version includes a checksum of every row (see
:mod:`.checksum`: renames, deletes, inserts at any key change it) and what the entries
are made with. Every query runs through :func:`run_orm` (a worker thread, connections
closed after), so the sync ORM serves under WSGI and ASGI alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._exceptions import ConfigurationError, InvalidEntryError
from .._providers.base import EntryLike, ProviderVersion
from .._providers.identity import function_identity
from .._providers.keyset import Bound, keyset_batches
from .._providers.ranges import RangeStats
from .._sansio.models import simple_fields
from .._sansio.skip import SKIP, SkipType
from .checksum import CHECKSUM_VENDORS
from .orm import run_orm
from .ranges import counted
from .row_count import check_row_count
from .sitemaps import written_location
from .summary import Summary, Versions, refusals
from .times import aware_datetime, naive_zone, zoned
from .values import ValueRows, leaves_nulls_out

if TYPE_CHECKING:
    from django.db.models import Model, QuerySet

__all__ = ["DjangoQuerySetProvider"]

_ROW = "_sitemap_row"


class DjangoQuerySetProvider:
    """Entries from a QuerySet, one object per URL, read in key order.

    :param queryset: the objects to list (``Product.objects.filter(public=True)``); its
        own ordering is replaced by ``key``. Add ``select_related()`` for what
        ``location`` reads.
    :param key: a unique, sortable field (default the primary key). Pages are key ranges.
        A nullable field is refused (several rows may be NULL, and NULL has no place in
        a key order) unless the queryset leaves NULL keys out:
        ``Tag.objects.filter(code__isnull=False)``.
    :param lastmod: a ``DateField``/``DateTimeField`` name: each entry's ``<lastmod>``,
        each index page's ``<lastmod>`` and the version (ETag, Last-Modified), which is
        given only while no row's lastmod is NULL, as Django's view sends Last-Modified.
    :param location: the object's URL path (default ``obj.get_absolute_url()``),
        percent-encoded where a URI may not hold a character (``/a b`` is ``/a%20b``);
        or a template of field names (``"/tags/{code}/"``): read as values, no model
        instance and no ``reverse()`` per row (the fast way, ``_django/values.py``); on
        SQLite and PostgreSQL its index is planned in the database (``_django/ranges.py``).
    :param changefreq: a changefreq word for every entry (or ``None``).
    :param priority: a priority for every entry, 0.0 to 1.0 (or ``None``).
    :param to_entry: builds the whole entry (a ``SitemapEntry``, URL or mapping) from an
        object instead of ``location``/``lastmod``/``changefreq``/``priority``.
    :param batch_size: objects per query (and per worker-thread hop) while streaming.
    :param checksum_fields: fields the version's row checksum covers (default every
        concrete field of the model and the fields a location template reads through a
        relation; the key is always covered). Name what the URL and entry are built
        from; relation lookups (``"category__slug"``) join.
    :param version_field: instead of the checksum, a revision field bumped from one
        sequence on every insert and update (indexed): the version is then the count,
        newest key and newest revision, without reading every row.
    :param row_count: with ``version_field``: a QuerySet of one value, the queryset's
        row count kept where it is cheap to read (a counter a trigger keeps), e.g.
        ``RowCount.objects.filter(name="products").values("total")``; it replaces the
        ``count()`` in the version. Compared with ``count()`` in one statement once a
        minute and when a whole plan does not add up to it: a count that disagrees (or
        reads NULL, or no row) is logged and ``count()`` used from then on
        (``_providers/row_count.py``). Refused over joins that repeat rows.
    :param metadata_ttl: seconds a count/version answer is reused within a process (one
        request asks for both; with the checksum the query reads every row).

    Past ``metadata_ttl``, a version (the section's, or a key-range page's) is reused
    without its aggregate when nothing was committed to the database since it was read:
    SQLite's ``PRAGMA data_version`` on a connection of the provider's own (a file
    database; every write counts, through Django or not), PostgreSQL's snapshot (13+:
    ``pg_current_snapshot()``, earlier ``txid_current_snapshot()``; a primary) read in
    the version's own statement. The queryset must read real tables of that database
    only: a view (an unmanaged model over one, also one the location template joins),
    a foreign or virtual table, ``extra()``, ``RawSQL``, the clock (``Now()``),
    ``Random()``, a function or lookup of the user's, SQLite in memory or a hot standby
    read the rows every time
    (``_providers/commits.py``).
    """

    def __init__(
        self,
        queryset: QuerySet[Any],
        *,
        key: str = "pk",
        lastmod: str | None = None,
        location: Callable[[Any], str | SkipType | None] | str | None = None,
        changefreq: str | None = None,
        priority: float | None = None,
        to_entry: Callable[[Any], EntryLike | None] | None = None,
        batch_size: int = 5000,
        checksum_fields: list[str] | tuple[str, ...] | None = None,
        version_field: str | None = None,
        row_count: QuerySet[Any] | None = None,
        metadata_ttl: float = 1.0,
    ) -> None:
        from django.db import connections
        from django.db.models import DateField, QuerySet

        if not isinstance(queryset, QuerySet):
            raise TypeError(f"queryset must be a Django QuerySet, got {type(queryset).__name__}")
        model = queryset.model
        field = model._meta.pk if key == "pk" else self._field(model, key, "key")
        if not (field.primary_key or field.unique):
            raise ValueError(
                f"key field {key!r} of {model.__name__} is not unique: "
                "pages are key ranges and would skip or repeat rows"
            )
        if field.null and not leaves_nulls_out(queryset, field):
            label = f"{model.__name__}.{field.name}"
            raise ConfigurationError(
                f"key field {label} is nullable: rows with a NULL key have no place in the "
                "key order, so pages would repeat or lose them. Use key='pk' (or another "
                "unique field that is never NULL) to list every row, or pass a queryset "
                f"that leaves them out, e.g. {model.__name__}.objects.filter("
                f"{field.name}__isnull=False)"
            )
        if lastmod is not None and not isinstance(
            self._field(model, lastmod, "lastmod"), DateField
        ):
            raise ValueError(
                f"lastmod field {lastmod!r} of {model.__name__} must be a DateField "
                "or DateTimeField"
            )
        if to_entry is not None and (location or changefreq or priority is not None):
            raise ValueError("pass either to_entry or location/changefreq/priority, not both")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        try:  # one value for every entry: a bad one would cost every URL its field
            simple_fields("/", changefreq=changefreq, priority=priority)
        except InvalidEntryError as exc:
            raise ConfigurationError(f"DjangoQuerySetProvider: {exc}") from None
        self._checksum_fields = self._checksummed(queryset, field, checksum_fields, version_field)
        self._version_field = version_field
        check_row_count(row_count, version_field, queryset)
        self._vendor = connections[queryset.db].vendor
        if version_field is None and self._vendor not in CHECKSUM_VENDORS:
            raise ConfigurationError(
                f"no row checksum for the {self._vendor!r} database of {model.__name__}: pass "
                "version_field= (a revision field bumped from one sequence on every insert "
                "and update)"
            )
        if field.null:  # provably filtered already; said again so no NULL key ever comes
            queryset = queryset.filter(**{f"{key}__isnull": False})
        self._queryset = queryset.order_by(key)
        self._key = key
        self._lastmod = lastmod
        self._location = location
        self._changefreq = changefreq
        self._priority = priority
        self._to_entry = to_entry
        self._values = (
            ValueRows(
                location,
                queryset,
                key=key,
                lastmod=lastmod,
                changefreq=changefreq,
                priority=priority,
            )
            if isinstance(location, str)
            else None
        )
        if checksum_fields is None and self._checksum_fields and self._values is not None:
            # Fields the template reads through a join ({category__slug}): renaming the
            # related row renames these URLs, so the default checksum covers them too.
            self._checksum_fields = list(
                dict.fromkeys([*self._checksum_fields, *self._values.names])
            )
        planner = self._values.ranges(self._queryset, version_field) if self._values else None
        self._planner = planner or counted(self._queryset, key, lastmod, version_field)
        made = repr(
            [f if isinstance(f, str) else function_identity(f) for f in (location, to_entry)]
        )
        self._settings_tag = hashlib.sha256(f"{made}{changefreq}{priority}".encode()).hexdigest()
        self._batch = batch_size
        self._metadata_ttl = metadata_ttl
        self._versions = Versions(
            self._queryset,
            key=key,
            lastmod=lastmod,
            version_field=version_field,
            checksum_fields=self._checksum_fields,
            settings_tag=self._settings_tag,
            metadata_ttl=metadata_ttl,
            row_count=row_count,
            in_range=self._in_range,
            read_fields=self._values.names if self._values else (),
        )
        self._plans: dict[int, tuple[str, list[Any], list[datetime | None]]] = {}

    @staticmethod
    def _checksummed(
        queryset: QuerySet[Any],
        key: Any,
        names: list[str] | tuple[str, ...] | None,
        version_field: str | None,
    ) -> list[str]:
        """The fields the row checksum covers (none with a version_field), checked."""
        from django.core.exceptions import FieldDoesNotExist, FieldError

        model = queryset.model
        if version_field is not None:
            if names is not None:
                raise ConfigurationError("pass either checksum_fields or version_field, not both")
            try:
                model._meta.get_field(version_field)
            except FieldDoesNotExist:
                raise ConfigurationError(
                    f"version_field {version_field!r} is not a field of {model.__name__}"
                ) from None
            return []
        if names is None:
            return [each.attname for each in model._meta.concrete_fields]
        if (
            not isinstance(names, (list, tuple))
            or not names
            or not all(isinstance(name, str) for name in names)
        ):
            raise ConfigurationError(
                f"checksum_fields must be a non-empty list of field names, got {names!r}"
            )
        for name in names:
            try:
                queryset.values(name)
            except FieldError as exc:
                raise ConfigurationError(
                    f"checksum field {name!r} is not a field of {model.__name__}: {exc}"
                ) from None
        return list(dict.fromkeys([key.attname, *names]))

    @staticmethod
    def _field(model: type[Model], name: str, label: str) -> Any:
        from django.core.exceptions import FieldDoesNotExist

        try:
            return model._meta.get_field(name)
        except FieldDoesNotExist:
            raise ValueError(f"{label} field {name!r} is not a field of {model.__name__}") from None

    def __repr__(self) -> str:
        return f"DjangoQuerySetProvider({self._queryset.model.__name__}, key={self._key!r})"

    # -- entries -------------------------------------------------------------------------

    def entry(self, obj: Any) -> EntryLike:
        """The entry for one object (runs in the worker thread: it may read relations)."""
        if self._to_entry is not None:
            made = self._to_entry(obj)
            return SKIP if made is None else made  # None: left out, quietly (counted)
        location = self._location
        loc = location(obj) if callable(location) else obj.get_absolute_url()
        if loc is None or loc is SKIP:
            return SKIP  # left out, quietly (counted)
        return {
            "loc": written_location(loc),
            "lastmod": zoned(getattr(obj, self._lastmod), naive_zone()) if self._lastmod else None,
            "changefreq": self._changefreq,
            "priority": self._priority,
        }

    def _fetch(self, bound: Bound, size: int) -> tuple[list[EntryLike], Any]:
        """One keyset batch: entries and the last key read."""
        queryset = self._queryset
        if bound is not None:
            lookup = "gte" if bound[0] == ">=" else "gt"
            queryset = queryset.filter(**{f"{self._key}__{lookup}": bound[1]})
        if self._values is not None:
            pairs = self._values.pairs(queryset, size)
            return [entry for _, entry in pairs], pairs[-1][0] if pairs else None
        objects = list(queryset[:size])
        last = getattr(objects[-1], self._key) if objects else None
        return [self.entry(obj) for obj in objects], last

    async def _rows_from(self, first: Bound, limit: int | None) -> AsyncIterator[EntryLike]:
        async def fetch(bound: Bound, size: int) -> tuple[list[EntryLike], Any]:
            return await run_orm(self._fetch, bound, size)

        batches = keyset_batches(fetch, first=first, limit=limit, batch_size=self._batch)
        async for batch in batches:
            for entry in batch:
                yield entry

    def _range(self, after: Any, upto: Any, size: int) -> list[tuple[Any, EntryLike]]:
        """One keyset batch of ``after < key <= upto``, each object built into its entry.

        A row whose entry cannot be built becomes an :class:`InvalidEntryError` in its
        place: the middleware leaves that row out and logs it, and serves the rest.
        """
        queryset = self._in_range(after, upto)
        if queryset is None:
            return []
        batch: list[tuple[Any, EntryLike]] = []
        try:
            if self._values is not None:
                return self._values.pairs(queryset, size)
            objects = list(queryset[:size])
        except refusals():
            return []
        for obj in objects:
            entry: Any  # an entry, or the error in its place
            try:
                entry = self.entry(obj)
            except Exception as exc:
                entry = InvalidEntryError("location", obj, f"raised {type(exc).__name__}: {exc}")
            batch.append((getattr(obj, self._key), entry))
        return batch

    async def keyed(self, after: Any, upto: Any) -> AsyncIterator[tuple[Any, EntryLike]]:
        """``(key, entry)`` in key order for ``after < key <= upto`` (pages as key ranges)."""

        async def fetch(bound: Bound, size: int) -> tuple[list[tuple[Any, EntryLike]], Any]:
            batch = await run_orm(self._range, bound[1] if bound else None, upto, size)
            return batch, batch[-1][0] if batch else None

        first: Bound = (">", after) if after is not None else None
        if after is None and upto is None:  # the whole section (a plan): check row_count
            await self._versions.check_count()
        async for batch in keyset_batches(fetch, first=first, limit=None, batch_size=self._batch):
            for pair in batch:
                yield pair

    async def entries(self) -> AsyncIterator[EntryLike]:
        async for _, entry in self.keyed(None, None):
            yield entry

    async def page(self, offset: int, limit: int) -> AsyncIterator[EntryLike]:
        starts, _ = await self._boundaries(limit)
        index = offset // limit
        if offset % limit or index >= len(starts):
            return
        async for entry in self._rows_from((">=", starts[index]), limit):
            yield entry

    # -- metadata ------------------------------------------------------------------------

    async def count(self) -> int:
        return (await self._summary())[0]

    async def version(self) -> ProviderVersion:
        """Count, newest key, newest lastmod and the row checksum (or the newest
        revision of ``version_field``); nothing while a row's lastmod is NULL.

        As Django's view sends Last-Modified only when every item has a lastmod: the
        newest date says nothing about an undated row (deleting it would leave the date
        unchanged, and a bare If-Modified-Since would get a stale 304).
        """
        _, version, every_row_dated, _ = await self._summary()
        return version if every_row_dated else ProviderVersion()

    async def _summary(self) -> Summary:
        """Row count, version and whether every row is dated (``summary.py``)."""
        return await self._versions.summary()

    async def range_version(self, after: Any, upto: Any) -> tuple[int, ProviderVersion]:
        """Rows and version of ``after < key <= upto`` alone (what a key-range page is
        validated by, at the cost of its rows), kept ``metadata_ttl`` and shared per
        range; as :meth:`version`, nothing while a row of it has no lastmod."""
        rows, version, every_row_dated, _ = await self._versions.range_summary(after, upto)
        return rows, version if every_row_dated else ProviderVersion()

    async def range_stats(self, rows_per_range: int) -> RangeStats | None:
        """The key ranges from one grouped query in the database (``_django/ranges.py``):
        sized for a location template of plain fields, else counted (the engine sizes
        them from sampled ranges); None for a key or lastmod the query does not plan."""
        if self._planner is None:
            return None
        rows, _, _, revision = await self._summary()  # read before the ranges: never newer
        return await self._planner.stats(rows, rows_per_range, revision, self._versions.check_count)

    def _in_range(self, after: Any, upto: Any) -> QuerySet[Any] | None:
        """The rows ``after < key <= upto``; None for bounds the key cannot hold (any
        client can name ranges: text for an integer key, a NUL PostgreSQL refuses)."""
        bounds = [bound for bound in (after, upto) if bound is not None]
        if self._vendor == "postgresql" and any("\x00" in str(bound) for bound in bounds):
            return None
        queryset = self._queryset
        try:
            if after is not None:
                queryset = queryset.filter(**{f"{self._key}__gt": after})
            if upto is not None:
                queryset = queryset.filter(**{f"{self._key}__lte": upto})
        except refusals():
            return None
        return queryset

    def forget(self) -> None:
        """Forget the counts and versions kept for ``metadata_ttl``: the next request
        asks the database (after a write, to serve it at once)."""
        self._versions.forget()

    async def page_last_modified(self, page_size: int) -> list[datetime | None]:
        return (await self._boundaries(page_size))[1]

    async def _boundaries(self, page_size: int) -> tuple[list[Any], list[datetime | None]]:
        """First key and newest lastmod of each page, recomputed when the version changes."""
        token = (await self._summary())[1].token or ""  # the plan's own key, always known
        cached = self._plans.get(page_size)
        if cached is not None and cached[0] == token:
            return cached[1], cached[2]
        starts, lastmods = await run_orm(self._plan, page_size)
        self._plans[page_size] = (token, starts, lastmods)
        return starts, lastmods

    def _plan(self, page_size: int) -> tuple[list[Any], list[datetime | None]]:
        from django.db.models import F, Max, Window
        from django.db.models.functions import RowNumber

        rows = self._queryset.order_by()
        if rows.query.group_by is not None:
            # Grouped rows (an aggregate annotation) refuse a window in the same query.
            keys = rows.values(self._key)
            rows = rows.model._base_manager.db_manager(rows.db).filter(**{f"{self._key}__in": keys})
        numbered = rows.alias(**{_ROW: Window(RowNumber(), order_by=F(self._key).asc())})
        # Every page's first row: row numbers 1, 1 + page_size, ... (one scan, no OFFSET).
        firsts = numbered.annotate(**{f"{_ROW}_page": (F(_ROW) - 1) % page_size}).filter(
            **{f"{_ROW}_page": 0}
        )
        starts = list(firsts.order_by(self._key).values_list(self._key, flat=True))
        lastmods: list[datetime | None] = [None] * len(starts)
        if self._lastmod is not None:
            for number, start in enumerate(starts):
                bounded = self._queryset.order_by().filter(**{f"{self._key}__gte": start})
                if number + 1 < len(starts):
                    bounded = bounded.filter(**{f"{self._key}__lt": starts[number + 1]})
                latest = bounded.aggregate(latest=Max(self._lastmod))["latest"]
                lastmods[number] = aware_datetime(latest)
        return starts, lastmods
