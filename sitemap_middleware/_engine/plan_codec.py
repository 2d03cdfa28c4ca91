"""Section plans as bytes a fleet can share (JSON: a store is no place for pickles).

A plan is kept with the identity of the version it was made for; one read back for
another version is no plan at all. Plans whose keys JSON cannot carry exactly (dates,
UUIDs) are not shared.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from .._providers.base import ProviderVersion
from .._sansio.paging import PagePlan
from .planning import SectionPlan

__all__ = ["decode_plan", "encode_plan"]

_FORMAT = 1
_KEYS = (int, str, type(None))


def encode_plan(identity: str, plan: SectionPlan) -> bytes | None:
    """``plan`` for ``identity`` as bytes, or None when it cannot be carried exactly."""
    pages = []
    for page in plan.pages:
        if type(page.first_key) not in _KEYS or type(page.last_key) not in _KEYS:
            return None
        lastmod = page.lastmod.isoformat() if page.lastmod else None
        pages.append(
            [page.start, page.stop, page.urls, page.size, page.news, lastmod]
            + [page.first_key, page.last_key]
        )
    version = plan.version
    data = {
        "format": _FORMAT,
        "identity": identity,
        "name": plan.name,
        "total": plan.total,
        "keyed": plan.keyed,
        "estimated": plan.estimated,
        "left_out": [plan.left_out, plan.first_left_out],
        "version": None
        if version is None
        else [version.token, version.last_modified.isoformat() if version.last_modified else None],
        "pages": pages,
    }
    try:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a key with a lone surrogate: kept in this process only
        return None


def decode_plan(data: bytes, identity: str) -> SectionPlan | None:
    """The plan ``data`` holds if it was made for ``identity``; None for anything else."""
    try:
        value: Any = json.loads(data.decode("utf-8"))
        if value.get("format") != _FORMAT or value.get("identity") != identity:
            return None
        version = value["version"]
        pages = tuple(
            PagePlan(
                _int(start),
                _int(stop),
                _int(urls),
                _int(size),
                _int(news),
                _date(lastmod),
                first_key,
                last_key,
            )
            for start, stop, urls, size, news, lastmod, first_key, last_key in value["pages"]
        )
        left_out, first_left_out = value["left_out"]
        return SectionPlan(
            str(value["name"]),
            pages,
            _int(value["total"]),
            None if version is None else ProviderVersion(version[0], _datetime(version[1])),
            _bool(value["keyed"]),
            left_out=_int(left_out),
            first_left_out=str(first_left_out),
            estimated=_bool(value.get("estimated", False)),
        )
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError):
        return None  # not ours, or damaged: plan again


def _int(value: object) -> int:
    if type(value) is not int:  # (a bool, a float, a string: damaged)
        raise TypeError(value)
    return value


def _bool(value: object) -> bool:
    if type(value) is not bool:
        raise TypeError(value)
    return value


def _date(text: str | None) -> date | None:
    """A page lastmod as encoded: a datetime, or a date (a provider's, written as one)."""
    if text is not None and len(text) == 10:
        return date.fromisoformat(text)
    return _datetime(text)


def _datetime(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)
