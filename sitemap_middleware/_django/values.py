"""A QuerySet read as values, not model instances: its key field and location template.

``location="/tags/{code}/"`` (field names; lookups such as ``{category__slug}`` join)
reads those fields with ``values_list()``: no model instance, no ``get_absolute_url()``
or ``reverse()`` per row; entries are built a batch at a time, values percent-encoded as
the SQL provider's templates encode them (``_providers/columns.py``). Also here: when a
queryset proves its key is never NULL.
"""

from __future__ import annotations

import string
from datetime import timezone
from typing import TYPE_CHECKING, Any

from .._exceptions import ConfigurationError
from .._providers.columns import RowEntries
from .ranges import QuerySetRanges
from .times import naive_zone, zoned

if TYPE_CHECKING:
    from django.db.models import QuerySet

__all__ = ["ValueRows", "leaves_nulls_out"]


class ValueRows:
    """Rows as ``(key, entry)`` pairs from a location template of field names."""

    def __init__(
        self,
        template: str,
        queryset: QuerySet[Any],
        *,
        key: str,
        lastmod: str | None,
        changefreq: str | None,
        priority: float | None,
    ) -> None:
        try:
            fields = [name for _, name, _, _ in string.Formatter().parse(template) if name]
        except ValueError as exc:
            raise ConfigurationError(f"location template {template!r}: {exc}") from None
        if not fields:
            raise ConfigurationError(
                f"location template {template!r} names no field: write '/tags/{{slug}}/' "
                "(or pass a function of the object)"
            )
        self.names = list(dict.fromkeys([key, *fields, *([lastmod] if lastmod else [])]))
        from django.core.exceptions import FieldError

        try:  # resolves the names (and lookups) without a query
            queryset.values_list(*self.names)
        except FieldError as exc:
            raise ConfigurationError(
                f"location template {template!r}: {exc} (write model field names, "
                "or lookups such as {category__slug})"
            ) from None
        for name in fields:
            _single_valued(queryset, name, template)
        self._lastmod = lastmod
        self._key = key
        self._rows = RowEntries(
            self.names,
            template,
            key=key,
            lastmod=lastmod,
            changefreq=changefreq,
            priority=priority,
        )

    def ranges(
        self, queryset: QuerySet[Any], version_field: str | None = None
    ) -> QuerySetRanges | None:
        """The queryset's key ranges from its database (``ranges.py``), or None when only
        Python can size its rows (a field with a format of its own, a type not planned)."""
        fields = self._rows.bare_fields()
        if not fields:
            return None
        samples = self._rows.samples(len(fields))
        ranges = QuerySetRanges(queryset, self._key, fields, self._lastmod, samples, version_field)
        return ranges if ranges.types is not None else None

    def pairs(self, queryset: QuerySet[Any], size: int) -> list[tuple[Any, Any]]:
        """The first ``size`` rows of ``queryset`` as (key, entry), one query."""
        values = list(queryset.values_list(*self.names)[:size])
        columns = {name: [row[place] for row in values] for place, name in enumerate(self.names)}
        if self._lastmod is not None and (zone := naive_zone()) is not timezone.utc:
            columns[self._lastmod] = [zoned(value, zone) for value in columns[self._lastmod]]
        keys = columns[self.names[0]]
        return list(zip(keys, self._rows.entries(columns), strict=True))


def leaves_nulls_out(queryset: QuerySet[Any], field: Any) -> bool:
    """Whether the queryset's filter says ``field IS NOT NULL`` for every row it keeps.

    Recognised: ``.filter(field__isnull=False)`` and ``.exclude(field__isnull=True)``
    (alone or beside other conditions joined by AND, ``Q`` objects included), on the
    model's own table. Anything else is not proof, and the key is refused.
    """
    from django.db.models.lookups import IsNull
    from django.db.models.sql.where import AND

    query = queryset.query
    table = query.get_meta().db_table

    def is_null(node: Any, value: bool) -> bool:
        lhs = getattr(node, "lhs", None)
        return (
            isinstance(node, IsNull)
            and node.rhs is value
            and getattr(lhs, "target", None) == field
            and getattr(lhs, "alias", None) == table
        )

    def proves(node: Any) -> bool:
        if is_null(node, False):
            return True
        children: Any = getattr(node, "children", None)
        if children is None:
            return False
        if getattr(node, "negated", False):
            return len(children) == 1 and is_null(children[0], True)
        return node.connector == AND and any(proves(child) for child in children)

    return proves(query.where)


def _single_valued(queryset: QuerySet[Any], name: str, template: str) -> None:
    """Refuse a lookup through a relation holding many rows (``{tags__code}``): its
    join repeats the object once per related row, so keys, counts and versions would
    all be wrong (a location names one value). A ``FilteredRelation`` of the queryset
    is the user's join, its condition naming the one row (a translation per language)."""
    from django.core.exceptions import FieldDoesNotExist

    model, parts = queryset.model, name.split("__")
    for place, part in enumerate(parts):  # the last too: {tags} joins as well
        if model is None:
            return  # past a plain field: transforms ({published__date__year}), no join
        filtered = queryset.query._filtered_relations.get(part) if place == 0 else None
        if filtered is not None:
            for hop in filtered.relation_name.split("__"):
                model = model._meta.get_field(hop).related_model
            continue
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return  # pk, or an annotation of the queryset: no relation of the model
        if field.many_to_many or field.one_to_many:
            related = field.related_model.__name__
            rest = "__".join(parts[place + 1 :]) or "pk"  # ({tags}: the related key)
            pairs = (
                f", or of {model.__name__}.{part}.through for one URL per pair"
                if field.many_to_many and not field.auto_created
                else ""
            )
            raise ConfigurationError(
                f"location template {template!r}: {{{name}}} goes through {part!r}, a "
                "relation to many rows: a location names one value per object (use "
                "a field of a foreign key, such as {category__slug}; for one URL per "
                f"{related}, a queryset of {related}, whose template names {{{rest}}}"
                f"{pairs})"
            )
        model = field.related_model
