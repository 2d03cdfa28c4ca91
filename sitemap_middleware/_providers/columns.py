"""Rows to entries by column: the SQL provider's ``location=`` mode.

A table's rows become the plain dicts of the protocol's four fields a whole batch at a
time: the location from a column, a ``{column}`` template or a function of the row, the
lastmod from its column, changefreq and priority constant. No ``SitemapEntry`` and no
user function per row (except a location function), so a page costs about what
fetching its rows does; the engine admits such batches column by column.

A row that cannot give a location (a NULL in a column the location reads, a location
function that raises) becomes an :class:`InvalidEntryError` in its place: the engine
leaves that row out and logs it with the row, as it does for any invalid entry.
"""

from __future__ import annotations

import inspect
import re
import string
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

from .._exceptions import ConfigurationError, InvalidEntryError
from .._sansio.models import simple_fields
from .._sansio.skip import SKIP, SkipType
from .identity import function_identity

__all__ = ["Location", "RowEntries", "column_hint"]

#: A column name, a ``str.format`` template of column names, or a function of the row.
Location = str | Callable[[Any], "str | SkipType | None"]


#: What a value filled into a template keeps as it is: RFC 3986 unreserved characters,
#: sub-delims, ':', '@' and '/' (as Django's reverse() quotes its arguments). Anything
#: else in the data ('#', '?', '%', spaces, non-ASCII) is percent-encoded as UTF-8.
_SAFE = "/:@!$&'()*+,;=~"
_UNSAFE = re.compile(r"[^A-Za-z0-9\-._~/:@!$&'()*+,;=]")


#: What a location function gives in place of a row's entry: an error, or "leave it out".
_LEFT_OUT = frozenset((InvalidEntryError, SkipType, type(None)))


def column_hint(name: str, names: Sequence[str]) -> str:
    """What to do about a name that is not a column, when there is something to say."""
    if not name:
        return "; an empty field {} names no column: write {slug}"
    if any(each.startswith("_no_label") for each in names):
        return "; label computed columns in the select(): (...).label('path')"
    return ""


class RowEntries:
    """Builds a batch's entries from its columns (``names``: the source's columns)."""

    def __init__(
        self,
        names: Sequence[str],
        location: Location,
        *,
        key: str,
        lastmod: str | None,
        changefreq: str | None,
        priority: float | None,
    ) -> None:
        try:  # one value for every entry: a bad one would cost every URL its field
            _, _, changefreq, priority, _ = simple_fields(
                "/", changefreq=changefreq, priority=priority
            )
        except InvalidEntryError as exc:
            raise ConfigurationError(
                f"SQLAlchemyProvider: {exc} (changefreq and priority are the same for every "
                "URL; per-row values need to_entry=)"
            ) from None
        self._template: str | None = None
        self._function: Callable[[Any], str | SkipType | None] | None = None
        #: The columns the location reads, in template order: a NULL there costs the row.
        self.reads: list[str] = []
        #: Per template field: the place of its column in reads, and its own format.
        self._fields: list[tuple[int, str]] = []
        if inspect.iscoroutinefunction(location):
            raise ConfigurationError(
                "location function must be a plain function of the row, not a coroutine "
                "function: it is called once per row, between queries"
            )
        if callable(location):
            self._function = location
        elif not isinstance(location, str):
            raise ConfigurationError(
                "location must be a column name, a template or a function of the row, "
                f"got {type(location).__name__}"
            )
        elif "{" in location or "}" in location:
            self._template = self._positional(location, list(names))
        elif location in names:
            self.reads = [location]
        else:
            raise ConfigurationError(
                f"location {location!r} is neither a column of the source "
                f"({', '.join(names)}) nor a template with {{column}} fields"
                f"{column_hint(location, names)}"
            )
        self._location = location
        self._key = key
        self._lastmod = lastmod
        fields = {"changefreq": changefreq, "priority": priority}
        self._constants = {name: value for name, value in fields.items() if value is not None}

    @property
    def settings(self) -> str:
        """What the entries are made with, for the version: other settings, other bytes."""
        made = self._location  # as written: a joiner alone would lose the format specs
        if callable(made):
            made = function_identity(made)
        return repr((made, sorted(self._constants.items()), self._lastmod))

    @property
    def needs_rows(self) -> bool:
        """A location function reads whole rows; templates and columns read columns."""
        return self._function is not None

    def bare_fields(self) -> list[str] | None:
        """The columns whose text a location is made of, one per field in order (a column
        used twice is named twice); None when a field has a format of its own or the
        location is a function: then only Python can tell how long a location is."""
        if self._function is not None:
            return None
        if self._template is None:
            return list(self.reads)
        if any(form != "{0}" for _, form in self._fields):
            return None
        return [self.reads[place] for place, _ in self._fields]

    def sample(self, value: str, lastmod: object) -> dict[str, Any]:
        """The entry of a row whose every location column reads ``value``."""
        loc = (
            value if self._template is None else self._template.format(*[value] * len(self._fields))
        )
        entry: dict[str, Any] = {"loc": loc, **self._constants}
        if self._lastmod is not None:
            entry["lastmod"] = lastmod
        return entry

    def samples(self, fields: int) -> list[tuple[dict[str, Any], int]]:
        """:attr:`RangeStats.samples` for a location of ``fields`` plain fields: the
        entries of one-character values (and of ``/a``, a dot segment's neighbour), with
        the widest lastmod (``+05:30``), and the value bytes each holds."""
        widest = datetime(2000, 1, 1, tzinfo=timezone(timedelta(hours=5, minutes=30)))
        return [(self.sample(value, widest), len(value) * fields) for value in ("a", "/a")]

    def _positional(self, template: str, names: list[str]) -> str:
        """``template`` as a joiner of its literal text and one ``{n}`` per field.

        Each field's own format (spec, conversion) goes to :attr:`_fields`, with the place
        of its column in :attr:`reads`: values are formatted, then percent-encoded, then
        joined.
        """
        out: list[str] = []
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError as exc:
            raise ConfigurationError(f"location template {template!r}: {exc}") from None
        for literal, field, spec, conversion in parsed:
            out.append(literal.replace("{", "{{").replace("}", "}}"))
            if field is None:
                continue
            if conversion not in (None, "r", "s", "a"):
                raise ConfigurationError(
                    f"location template {template!r}: unknown conversion !{conversion} "
                    "(use !s, !r or !a)"
                )
            if spec and ("{" in spec or "}" in spec):
                raise ConfigurationError(
                    f"location template {template!r}: a format spec cannot name columns"
                )
            if field not in names:
                raise ConfigurationError(
                    f"location template {template!r} names {field!r}, which is not a "
                    f"column of the source ({', '.join(names)}){column_hint(field, names)}"
                )
            if field not in self.reads:
                self.reads.append(field)
            form = "{0" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            out.append("{" + str(len(self._fields)) + "}")
            self._fields.append((self.reads.index(field), form + "}"))
        return "".join(out)

    def _filled(self, reads: list[list[Any]]) -> list[str]:
        """Each row's location from a batch's read columns: formatted, encoded, joined."""
        texts: list[list[str]] = []
        for place, form in self._fields:
            column = list(map(form.format, reads[place]))
            if _UNSAFE.search("".join(column)):  # one scan of the batch at C speed
                column = [quote(text, safe=_SAFE) for text in column]
            texts.append(column)
        return list(map(self._template.format, *texts))  # type: ignore[union-attr]

    def entries(self, columns: Mapping[str, list[Any]], rows: Sequence[Any] = ()) -> list[Any]:
        """One plain dict per row, or the :class:`InvalidEntryError` in its place.

        ``columns`` maps the names read (the key, :attr:`reads`, the lastmod) to their values;
        ``rows`` are the rows themselves, for a location function.
        """
        reads = [columns[name] for name in self.reads]
        per_row = self._function is not None or any(None in column for column in reads)
        locs: list[Any]
        if self._function is not None:
            locs = list(map(self._call, rows))
        elif per_row:
            locs = list(map(self._read, columns[self._key], *reads))
        elif self._template is not None:
            try:
                locs = self._filled(reads)
            except Exception:  # a value its format spec refuses: found row by row
                per_row = True
                locs = list(map(self._read, columns[self._key], *reads))
        else:
            locs = reads[0]
        fields = self._constants
        if self._lastmod is None:
            entries: list[Any] = [{"loc": loc, **fields} for loc in locs]
        else:
            entries = [
                {"loc": loc, "lastmod": lastmod, **fields}
                for loc, lastmod in zip(locs, columns[self._lastmod], strict=True)
            ]
        if per_row and not _LEFT_OUT.isdisjoint(map(type, locs)):
            entries = [
                (SKIP if loc is None else loc) if type(loc) in _LEFT_OUT else entry
                for loc, entry in zip(locs, entries, strict=True)
            ]
        return entries

    def _read(self, key: Any, *values: Any) -> Any:
        """One row's location from its read columns, when the batch's could not all be."""
        read = dict(zip(self.reads, values, strict=True))
        nulls = [name for name, value in read.items() if value is None]
        if nulls:
            problem = f"column {nulls[0]!r} is NULL"
        elif self._template is None:
            return values[0]
        else:
            try:
                return self._filled([[value] for value in values])[0]
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
        return InvalidEntryError("location", {self._key: key, **read}, problem)

    def _call(self, row: Any) -> Any:  # (None or SKIP: the row is left out, quietly)
        """One row's location from the location function; what it raises costs the row."""
        try:
            return self._function(row)  # type: ignore[misc]
        except Exception as exc:
            return InvalidEntryError("location", tuple(row), f"{type(exc).__name__}: {exc}")
