"""Validation of single field values shared by entries and their extensions."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from itertools import product
from operator import attrgetter, itemgetter, methodcaller
from typing import Any, cast

from .._exceptions import InvalidEntryError

__all__ = [
    "aware",
    "check_text",
    "format_w3c",
    "parse_w3c",
    "to_datetime",
    "w3c_values",
]

# W3C Datetime profile (https://www.w3.org/TR/NOTE-datetime) as sitemaps use it: a date,
# or a date-time with hours and minutes, optional seconds and fraction, and a zone.
_W3C = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2}))?"
)
# XML 1.0 §2.2 Char production, negated: what may never appear in a document.
#: Characters no document may carry: what XML 1.0 forbids (C0 controls, surrogates) and
#: Unicode's noncharacters (U+FDD0..U+FDEF, the last two of every plane), which are for a
#: program's internal use and which HTML parsers reject.
_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17)
)
_XML_FORBIDDEN = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff{_NONCHARACTERS}]")


def parse_w3c(field: str, value: str) -> date | datetime:
    """Parse a W3C datetime string; a time must carry a zone (the protocol requires one)."""
    if not _W3C.fullmatch(value):
        raise InvalidEntryError(
            field, value, "must be a W3C datetime: YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss]+hh:mm"
        )
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidEntryError(field, value, str(exc)) from None


#: The W3C forms we write ourselves (YYYY-MM-DD, or with hh:mm:ss and Z or ±hh:mm), by
#: length: the position of each separator and the characters allowed there. A text of one
#: of these shapes whose other characters fromisoformat accepts as digits in range is kept
#: verbatim; checking it so costs a third of a regex, on a path taken once a URL.
_W3C_SEPARATORS: dict[int, tuple[tuple[int, str], ...]] = {
    10: ((4, "-"), (7, "-")),
    20: ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "Z")),
    25: ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "+-"), (22, ":")),
}
#: The same as (length, characters at positions 4, 7, 10, ...), one entry per shape.
_W3C_SHAPES = frozenset(
    (length, "".join(chars))
    for length, separators in _W3C_SEPARATORS.items()
    for chars in product(*(allowed for _, allowed in separators))
)


#: XML Schema (which the sitemap XSDs use) allows zone offsets of whole minutes up to
#: ±14:00; Python allows seconds and up to ±23:59:59.
_MAX_OFFSET = timedelta(hours=14)


def _xsd_offset(offset: timedelta) -> bool:
    """Whether XML Schema can write this zone offset (whole minutes, within ±14:00)."""
    return offset.seconds % 60 == 0 and -_MAX_OFFSET <= offset <= _MAX_OFFSET


def xsd_zone(field: str, value: datetime) -> datetime:
    """``value`` in UTC when its offset is one XML Schema cannot write, else unchanged."""
    offset = value.utcoffset()
    if offset is None or _xsd_offset(offset):
        return value
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:
        raise InvalidEntryError(field, value, "is out of range once moved to UTC") from None


def date_value_and_text(field: str, value: object) -> tuple[date | datetime, str]:
    """The normalised value and its W3C text, formatting only when needed."""
    if type(value) is str and (len(value), value[4::3]) in _W3C_SHAPES:
        try:
            if len(value) == 10:
                return date.fromisoformat(value), value
            if value[-1] == "Z":  # Python < 3.11 does not read "Z"
                return datetime.fromisoformat(value[:-1] + "+00:00"), value
            parsed = datetime.fromisoformat(value)
        except ValueError as exc:  # shaped right, but e.g. month 13
            raise InvalidEntryError(field, value, str(exc)) from None
        # Verbatim only if XML Schema reads the zone too: Python also takes "+05:99".
        if value[23:] < "60" and (value[20:22] < "14" or value[20:] == "14:00"):
            return parsed, value
        parsed = xsd_zone(field, parsed)
        return parsed, parsed.isoformat(timespec="seconds")
    if type(value) is datetime:  # what ORMs hand over; naive means UTC (see to_date_value)
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        else:
            value = xsd_zone(field, value)
        return value, value.isoformat(timespec="seconds")
    normalised = to_date_value(field, value)
    return normalised, format_w3c(normalised)


#: The hours and minutes of a W3C text's zone offset (see ``_W3C_SEPARATORS``).
_OFFSET_HOURS = itemgetter(slice(20, 22))
_OFFSET_MINUTES = itemgetter(slice(23, 25))
#: Parsers of the texts kept verbatim, by length (Python < 3.11 does not read "Z").
_W3C_PARSERS: dict[int, Any] = {10: date.fromisoformat, 25: datetime.fromisoformat}
if sys.version_info >= (3, 11):  # pragma: no branch
    _W3C_PARSERS[20] = datetime.fromisoformat


def w3c_values(values: Sequence[object]) -> tuple[datetime, list[str]] | None:
    """:func:`date_value_and_text` of a batch of lastmods, when each is a plain case.

    Plain: all W3C texts of one shape that it keeps verbatim, or all datetimes that are
    naive or in UTC (what ORMs hand over). Returns the newest value (as
    :func:`to_datetime` gives it) and the texts, or None:
    then each goes through :func:`date_value_and_text`, with the same outcome as here.
    The same tests as there (a text's length and separators, a parse, the offset), a
    column at a time at C speed.
    """
    if not values:
        return None
    kinds = set(map(type, values))
    if kinds == {datetime}:
        datetimes = cast("Sequence[datetime]", values)
        return _utc_values(datetimes) or _zoned_values(datetimes)
    if kinds == {date}:  # a DateField, a SQL DATE: written as they are
        dates = cast("Sequence[date]", values)
        return to_datetime(max(dates)), list(map(date.isoformat, dates))
    if kinds != {str}:
        return None
    strings = cast("list[str]", values)
    return _verbatim_texts(strings) or _other_texts(strings)


def _verbatim_texts(strings: list[str]) -> tuple[datetime, list[str]] | None:
    """W3C texts of one of the shapes kept verbatim (see :data:`_W3C_SEPARATORS`)."""
    count, length = len(strings), len(strings[0])
    parse = _W3C_PARSERS.get(length)
    if parse is None:
        return None
    # One text of fixed-width lines: each text's character at a position is the column
    # text[position::step]; a line break at every step, and nowhere else, makes every
    # text ``length`` long.
    text, step = "\n".join(strings), length + 1
    if (
        len(text) != count * step - 1
        or text.count("\n") != count - 1
        or text[length::step] != "\n" * (count - 1)
    ):
        return None
    for position, allowed in _W3C_SEPARATORS[length]:
        column = text[position::step]
        if sum(map(column.count, allowed)) != count:
            return None
    # An offset from 14:00 on, or with 60 minutes or more, may be past what XML Schema
    # writes: normalised, one by one. (Tens of hours all 0 and of minutes all below 6,
    # the usual offsets, need no look at each pair.)
    if length == 25 and (
        (text[20::step].strip("0") and max(map(_OFFSET_HOURS, strings)) >= "14")
        or (text[23::step].strip("012345") and max(map(_OFFSET_MINUTES, strings)) >= "60")
    ):
        return None
    try:
        return to_datetime(max(map(parse, strings))), strings
    except ValueError:  # shaped right, but e.g. month 13: each is reported on its own
        return None


_SECONDS = methodcaller("isoformat", timespec="seconds")
_ZONE = attrgetter("tzinfo")
_OFFSET = methodcaller("utcoffset")
#: The date-time forms of :data:`_W3C` (a zone is required).
_W3C_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})"
)


def _other_texts(strings: list[str]) -> tuple[datetime, list[str]] | None:
    """W3C date-times of the other allowed forms (minutes only, a fraction: what
    JavaScript's ``toISOString`` writes), each written as :func:`format_w3c` writes it."""
    if sys.version_info < (3, 11) or not all(map(_W3C_TIME.fullmatch, strings)):
        return None  # (before 3.11 fromisoformat reads neither "Z" nor every fraction)
    if 20 in set(map(len, strings)):
        return None  # "...:ssZ" among them, kept verbatim by each text's own path
    try:
        return _zoned_values(list(map(datetime.fromisoformat, strings)))
    except ValueError:  # shaped right, but e.g. hour 25: each is reported on its own
        return None


def _zoned_values(values: Sequence[datetime]) -> tuple[datetime, list[str]] | None:
    """Aware datetimes in zones XML Schema can write (any, a whole minute within
    ±14:00 of UTC, as :func:`xsd_zone` leaves them): newest and texts."""
    offsets = set(map(_OFFSET, values))
    if None in offsets or not all(map(_xsd_offset, cast("set[timedelta]", offsets))):
        return None  # naive among aware, or an offset moved to UTC: one by one
    return max(values).replace(microsecond=0), list(map(_SECONDS, values))


def _utc_values(values: Sequence[datetime]) -> tuple[datetime, list[str]] | None:
    """Datetimes all naive (UTC, see :func:`aware`) or all in UTC: newest and texts."""
    zones = set(map(_ZONE, values))
    # The newest as written: whole seconds, as the per-entry path reads it back.
    if zones == {timezone.utc}:
        return max(values).replace(microsecond=0), list(map(_SECONDS, values))
    if zones != {None}:
        return None  # other zones: checked one by one (xsd_zone)
    # A naive value's text is its UTC text without the zone: added to all at once.
    texts = f"{_UTC_ZONE}\n".join(map(_SECONDS, values)) + _UTC_ZONE
    return max(values).replace(tzinfo=timezone.utc, microsecond=0), texts.split("\n")


_UTC_ZONE = "+00:00"


def aware(value: datetime) -> datetime:
    """``value`` with a zone: naive datetimes mean UTC, everywhere in this package.

    Databases without zone support (SQLite) and ``datetime.utcnow()`` produce naive
    values; guessing the server's zone would make output differ between machines, and
    comparing naive with aware values raises.
    """
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


def to_date_value(field: str, value: object) -> date | datetime:
    """Normalise a date-like value; naive datetimes are taken to be UTC."""
    if isinstance(value, datetime):
        return xsd_zone(field, aware(value))
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        parsed = parse_w3c(field, value.strip())
        return xsd_zone(field, parsed) if isinstance(parsed, datetime) else parsed
    raise InvalidEntryError(field, value, "must be a date, a datetime or a W3C datetime string")


def format_w3c(value: date | datetime | str) -> str:
    """Format as W3C datetime, whole seconds, ``+00:00`` style zone."""
    if isinstance(value, str):  # only unvalidated input is still a string
        value = to_date_value("lastmod", value)
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    return value.isoformat()


def to_datetime(value: date | datetime | str) -> datetime:
    """An aware datetime for comparisons; a plain date is midnight UTC."""
    if isinstance(value, str):  # only unvalidated input is still a string
        value = to_date_value("lastmod", value)
    if isinstance(value, datetime):
        return aware(value)
    return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)


def check_text(field: str, value: object, *, max_length: int | None = None) -> str:
    """A non-empty string, at most ``max_length`` long, without characters XML forbids.

    Those characters (C0 controls other than tab and line breaks, lone surrogates,
    Unicode noncharacters such as U+FFFE) can never be written, escaped or not: they
    are stripped, which loses nothing a reader could see.
    """
    if not isinstance(value, str):
        raise InvalidEntryError(field, value, "must be a string")
    if _XML_FORBIDDEN.search(value):
        value = _XML_FORBIDDEN.sub("", value)
    if not value.strip():
        raise InvalidEntryError(field, value, "must not be empty")
    if max_length is not None and len(value) > max_length:
        raise InvalidEntryError(field, value, f"is longer than {max_length} characters")
    return value


def check_number(
    field: str, value: object, low: float, high: float, *, integer: bool = False
) -> float:
    """A finite number (or numeric string) within [low, high]."""
    number: float
    kind = type(value)
    if kind is float:  # the common case, checked without ABCs
        number = value  # type: ignore[assignment]
    elif isinstance(value, bool):
        raise InvalidEntryError(field, value, "must be a number, not a bool")
    elif isinstance(value, int | float | Decimal):
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float: out of any range asked here
            number = math.inf
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise InvalidEntryError(field, value, "must be a number") from None
    else:
        raise InvalidEntryError(field, value, "must be a number")
    if not math.isfinite(number) or not low <= number <= high:
        raise InvalidEntryError(field, value, f"must be between {low:g} and {high:g}")
    if integer and not number.is_integer():
        raise InvalidEntryError(field, value, "must be a whole number")
    return number
