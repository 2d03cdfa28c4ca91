"""What a naive datetime from Django means: its zone.

Under ``USE_TZ=False`` Django stores and reads datetimes as wall-clock times in
``TIME_ZONE``, so a naive value is made aware in that zone (taken as UTC it was written
hours off, and east of UTC in the future). Under ``USE_TZ=True`` the database gives aware
values, and a naive one (from user code) is UTC, as Django's own ``Last-Modified`` takes it.
"""

from __future__ import annotations

from datetime import date, datetime, timezone, tzinfo
from typing import Any

__all__ = ["aware_datetime", "naive_zone", "zoned"]


def naive_zone() -> tzinfo:
    """The zone naive datetimes from Django are in now (settings can change in tests)."""
    from django.conf import settings

    if settings.USE_TZ:
        return timezone.utc
    from django.utils.timezone import get_default_timezone

    zone: tzinfo = get_default_timezone()
    return zone


def zoned(value: Any, zone: tzinfo) -> Any:
    """``value`` with ``zone`` if it is a naive datetime; anything else as it is."""
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=zone)  # zoneinfo zones: replace() is right
    return value


def aware_datetime(value: object) -> datetime | None:
    """A date or datetime as an aware datetime (a date is its midnight UTC, as Django's
    ``Last-Modified`` takes it); anything else None."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=naive_zone())
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    return None
