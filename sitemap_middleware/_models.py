"""Sitemap entries: immutable, validated and normalised once, on creation."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any, TypeVar

from ._exceptions import InvalidEntryError
from ._types import CHANGEFREQS, ChangeFreq
from ._urls import normalize_loc
from ._values import check_number, check_text, date_value_and_text, to_date_value

__all__ = [
    "Alternate",
    "Image",
    "NewsArticle",
    "SitemapEntry",
    "Video",
    "coerce_entry",
    "news_cutoff",
]

#: Google: up to 1,000 images per page.
MAX_IMAGES = 1000
#: Google video limits: title ≤ 100, description ≤ 2048, duration 1..28,800 s, 32 tags.
MAX_VIDEO_TAGS = 32
_HREFLANG = re.compile(r"x-default|[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|\d{3}))?")
_NEWS_LANGUAGE = re.compile(r"zh-cn|zh-tw|[a-z]{2,3}")
_COUNTRIES = re.compile(r"[A-Z]{2}(?: [A-Z]{2})*")
_PLATFORMS = frozenset(("web", "mobile", "tv"))
_T = TypeVar("_T")


def _set(obj: object, name: str, value: object) -> None:
    # Frozen dataclasses normalise in __post_init__ through object.__setattr__.
    object.__setattr__(obj, name, value)


def _optional_date(owner: object, name: str, label: str) -> None:
    value = getattr(owner, name)
    if value is not None:
        _set(owner, name, to_date_value(label, value))


def _yes_no(label: str, value: object) -> None:
    if value is not None and not isinstance(value, bool):
        raise InvalidEntryError(label, value, "must be True, False or None")


@dataclass(frozen=True, slots=True)
class Image:
    """One ``<image:image>``: the image's URL (Google's image extension).

    Google deprecated caption, title, geo_location and license in 2022, so only ``loc``
    is modelled. Like page URLs, ``loc`` may be relative to the base URL; unlike them it
    may live on another host (a CDN).
    """

    loc: str

    def __post_init__(self) -> None:
        _set(self, "loc", normalize_loc(self.loc, "image.loc"))


@dataclass(frozen=True, slots=True)
class Alternate:
    """One ``<xhtml:link rel="alternate" hreflang=... href=...>`` language version."""

    hreflang: str
    href: str

    def __post_init__(self) -> None:
        if not isinstance(self.hreflang, str) or not _HREFLANG.fullmatch(self.hreflang):
            raise InvalidEntryError(
                "alternate.hreflang",
                self.hreflang,
                "must be a language code such as 'de', 'en-GB', 'zh-Hant' or 'x-default'",
            )
        _set(self, "href", normalize_loc(self.href, "alternate.href"))


@dataclass(frozen=True, slots=True, kw_only=True)
class NewsArticle:
    """``<news:news>`` for a Google News article.

    Google takes only articles published in the last two days; :func:`news_cutoff`
    gives the moment to filter on. At most 1,000 news URLs go in one file.
    """

    publication_name: str
    language: str
    publication_date: date | datetime | str
    title: str

    def __post_init__(self) -> None:
        check_text("news.publication_name", self.publication_name, max_length=256)
        if not isinstance(self.language, str) or not _NEWS_LANGUAGE.fullmatch(self.language):
            raise InvalidEntryError(
                "news.language", self.language, "must be an ISO 639 code such as 'en' or 'zh-cn'"
            )
        check_text("news.title", self.title, max_length=2048)
        _set(
            self, "publication_date", to_date_value("news.publication_date", self.publication_date)
        )


def news_cutoff(now: datetime | None = None, days: int = 2) -> datetime:
    """The oldest publication time Google News still accepts (two days before ``now``)."""
    return (now or datetime.now(timezone.utc)) - timedelta(days=days)


@dataclass(frozen=True, slots=True, kw_only=True)
class Video:
    """``<video:video>``: Google's video extension, validated against its limits.

    Required: ``thumbnail_loc``, ``title`` (≤ 100 characters), ``description``
    (≤ 2,048) and at least one of ``content_loc`` / ``player_loc``.
    ``restriction`` and ``platform`` are ``(relationship, values)`` pairs, e.g.
    ``("allow", ("DE", "FR"))`` or ``("deny", ("tv",))``.
    """

    thumbnail_loc: str
    title: str
    description: str
    content_loc: str | None = None
    player_loc: str | None = None
    duration: int | None = None
    expiration_date: date | datetime | str | None = None
    rating: float | None = None
    view_count: int | None = None
    publication_date: date | datetime | str | None = None
    tags: Sequence[str] = ()
    family_friendly: bool | None = None
    restriction: tuple[str, Sequence[str]] | None = None
    requires_subscription: bool | None = None
    uploader: str | None = None
    uploader_info: str | None = None
    platform: tuple[str, Sequence[str]] | None = None
    live: bool | None = None

    def __post_init__(self) -> None:
        _set(self, "thumbnail_loc", normalize_loc(self.thumbnail_loc, "video.thumbnail_loc"))
        check_text("video.title", self.title, max_length=100)
        check_text("video.description", self.description, max_length=2048)
        if self.content_loc is None and self.player_loc is None:
            raise InvalidEntryError(
                "video.content_loc", None, "a video needs content_loc or player_loc"
            )
        for name in ("content_loc", "player_loc", "uploader_info"):
            value = getattr(self, name)
            if value is not None:
                _set(self, name, normalize_loc(value, f"video.{name}"))
        if self.duration is not None:
            _set(
                self,
                "duration",
                int(check_number("video.duration", self.duration, 1, 28800, integer=True)),
            )
        if self.rating is not None:
            _set(self, "rating", check_number("video.rating", self.rating, 0, 5))
        if self.view_count is not None:
            count = check_number("video.view_count", self.view_count, 0, 1e18, integer=True)
            _set(self, "view_count", int(count))
        _optional_date(self, "expiration_date", "video.expiration_date")
        _optional_date(self, "publication_date", "video.publication_date")
        tags = tuple(check_text("video.tags", t, max_length=256) for t in self.tags)
        if len(tags) > MAX_VIDEO_TAGS:
            raise InvalidEntryError("video.tags", self.tags, f"at most {MAX_VIDEO_TAGS} tags")
        _set(self, "tags", tags)
        for name in ("family_friendly", "requires_subscription", "live"):
            _yes_no(f"video.{name}", getattr(self, name))
        if self.uploader is not None:
            check_text("video.uploader", self.uploader, max_length=255)
        if self.restriction is not None:
            _set(self, "restriction", _relationship("video.restriction", self.restriction, None))
        if self.platform is not None:
            _set(self, "platform", _relationship("video.platform", self.platform, _PLATFORMS))


def _relationship(
    label: str, value: object, allowed: frozenset[str] | None
) -> tuple[str, tuple[str, ...]]:
    if not (isinstance(value, tuple | list) and len(value) == 2):
        raise InvalidEntryError(label, value, "must be a (relationship, values) pair")
    relationship, items = value
    if relationship not in ("allow", "deny"):
        raise InvalidEntryError(label, value, "relationship must be 'allow' or 'deny'")
    if isinstance(items, str):
        items = items.split()
    items = tuple(items)
    ok = (
        all(i in allowed for i in items)
        if allowed is not None
        else bool(_COUNTRIES.fullmatch(" ".join(items)))
    )
    if not items or not ok:
        expected = "web, mobile or tv" if allowed else "ISO 3166 country codes such as 'DE'"
        raise InvalidEntryError(label, value, f"values must be {expected}")
    return relationship, items


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One ``<url>`` of a sitemap, validated and normalised on creation.

    ``loc`` is an absolute http(s) URL or a path relative to the configured base URL
    (``"/about"``); non-ASCII hosts become IDNA and non-ASCII paths percent-encoded UTF-8.
    ``lastmod`` is a ``date``, a ``datetime`` (naive means UTC) or a W3C datetime string.
    ``changefreq`` is one of the seven protocol words; ``priority`` is 0.0 to 1.0.
    Invalid values raise :class:`InvalidEntryError` naming the field and the value.

    >>> SitemapEntry("https://example.com/caf\u00e9", lastmod="2024-05-01", priority=0.8).loc
    'https://example.com/caf%C3%A9'
    """

    loc: str
    lastmod: date | datetime | str | None = None
    changefreq: ChangeFreq | None = None
    priority: float | None = None
    images: Sequence[Image] = ()
    videos: Sequence[Video] = ()
    news: NewsArticle | None = None
    alternates: Sequence[Alternate] = ()
    #: Derived once (entries are immutable and often served many times): whether loc
    #: is absolute, and the pre-rendered lastmod/changefreq/priority children.
    _absolute: bool = field(default=False, init=False, repr=False, compare=False)
    _tail: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        loc = normalize_loc(self.loc)
        if loc is not self.loc:
            setattr_(self, "loc", loc)
        setattr_(self, "_absolute", loc[0] != "/")
        tail = ""
        if self.lastmod is not None:
            value, text = date_value_and_text("lastmod", self.lastmod)
            setattr_(self, "lastmod", value)
            tail = "<lastmod>" + text + "</lastmod>"
        freq = self.changefreq
        if freq is not None:
            if freq not in CHANGEFREQS:
                freq = freq.lower() if isinstance(freq, str) else None  # type: ignore[assignment]
                if freq not in CHANGEFREQS:
                    raise InvalidEntryError(
                        "changefreq",
                        self.changefreq,
                        f"must be one of {', '.join(sorted(CHANGEFREQS))}",
                    )
                setattr_(self, "changefreq", freq)
            tail += "<changefreq>" + freq + "</changefreq>"
        if self.priority is not None:
            priority = check_number("priority", self.priority, 0.0, 1.0)
            setattr_(self, "priority", priority)
            tail += "<priority>" + f"{priority:.4g}" + "</priority>"
        setattr_(self, "_tail", tail)
        if self.images or self.videos or self.alternates or self.news is not None:
            self._check_extensions()

    def _check_extensions(self) -> None:
        images = _tuple_of("images", self.images, Image, lambda v: Image(**v))
        if len(images) > MAX_IMAGES:
            raise InvalidEntryError("images", len(images), f"at most {MAX_IMAGES} images per URL")
        _set(self, "images", images)
        _set(self, "videos", _tuple_of("videos", self.videos, Video, lambda v: Video(**v)))
        _set(
            self,
            "alternates",
            _tuple_of("alternates", self.alternates, Alternate, lambda v: Alternate(**v)),
        )
        if isinstance(self.news, Mapping):
            _set(self, "news", NewsArticle(**self.news))
        elif self.news is not None and not isinstance(self.news, NewsArticle):
            raise InvalidEntryError("news", self.news, "must be a NewsArticle")

    @property
    def is_absolute(self) -> bool:
        """True when ``loc`` is an absolute URL rather than a base-relative path."""
        return self._absolute


def _tuple_of(
    label: str, values: object, kind: type[_T], build: Callable[[Any], _T]
) -> tuple[_T, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | tuple | list):
        raise InvalidEntryError(label, values, f"must be a sequence of {kind.__name__}")
    out: list[_T] = []
    for value in values:
        if isinstance(value, kind):
            out.append(value)
        elif isinstance(value, Mapping):
            out.append(build(value))
        elif isinstance(value, str) and kind is Image:
            out.append(build({"loc": value}))
        else:
            raise InvalidEntryError(label, value, f"must be a {kind.__name__}")
    return tuple(out)


def coerce_entry(item: object) -> SitemapEntry:
    """Turn what a provider yields (entry, URL string or mapping) into an entry."""
    kind = type(item)
    if kind is SitemapEntry:
        return item  # type: ignore[return-value]
    if kind is dict:  # plain dicts skip the (slow) Mapping ABC check
        try:
            return SitemapEntry(**item)  # type: ignore[arg-type]
        except TypeError as exc:
            raise InvalidEntryError("entry", item, str(exc)) from None
    if isinstance(item, SitemapEntry):
        return item
    if isinstance(item, str):
        return SitemapEntry(item)
    if isinstance(item, Mapping):
        try:
            return SitemapEntry(**item)
        except TypeError as exc:
            raise InvalidEntryError("entry", dict(item), str(exc)) from None
    raise InvalidEntryError(
        "entry", item, "a provider must yield SitemapEntry objects, URL strings or mappings"
    )
