"""Google's sitemap extensions: image, video, news and hreflang alternates.

Each is immutable and validated on creation; errors name the field as
``<extension>.<field>`` (``video.duration``, ``alternate.hreflang``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from .._exceptions import InvalidEntryError
from .limits import (
    MAX_NEWS_PUBLICATION_NAME,
    MAX_NEWS_TITLE,
    MAX_VIDEO_DESCRIPTION,
    MAX_VIDEO_DURATION,
    MAX_VIDEO_TAG_LENGTH,
    MAX_VIDEO_TAGS,
    MAX_VIDEO_TITLE,
    MAX_VIDEO_UPLOADER,
)
from .urls import normalize_loc
from .values import check_number, check_text, to_date_value, to_datetime

__all__ = [
    "Alternate",
    "Image",
    "NewsArticle",
    "Video",
    "alternate_problem",
    "is_old_news",
    "news_cutoff",
]

_HREFLANG = re.compile(r"x-default|[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|\d{3}))?")
_NEWS_LANGUAGE = re.compile(r"zh-cn|zh-tw|[a-z]{2,3}")
_COUNTRIES = re.compile(r"[A-Z]{2}(?: [A-Z]{2})*")
_PLATFORMS = frozenset(("web", "mobile", "tv"))


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
        _set(
            self,
            "publication_name",
            check_text(
                "news.publication_name", self.publication_name, max_length=MAX_NEWS_PUBLICATION_NAME
            ),
        )
        if not isinstance(self.language, str) or not _NEWS_LANGUAGE.fullmatch(self.language):
            raise InvalidEntryError(
                "news.language", self.language, "must be an ISO 639 code such as 'en' or 'zh-cn'"
            )
        _set(self, "title", check_text("news.title", self.title, max_length=MAX_NEWS_TITLE))
        _set(
            self, "publication_date", to_date_value("news.publication_date", self.publication_date)
        )


def is_old_news(news: NewsArticle, cutoff: datetime) -> bool:
    """Whether an article was published before ``cutoff`` (Google News: two days)."""
    published = to_datetime(news.publication_date)
    if published.tzinfo is None:  # naive times are UTC, as everywhere else
        published = published.replace(tzinfo=timezone.utc)
    return published < cutoff


def alternate_problem(loc: str, hrefs: Sequence[str]) -> str | None:
    """What is wrong with a URL's own alternate set, or None (Google: include yourself)."""
    if loc not in hrefs:
        return (
            f"{loc} lists hreflang alternates but not itself: every language version must "
            "list the whole set, its own URL included"
        )
    return None


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
        _set(self, "title", check_text("video.title", self.title, max_length=MAX_VIDEO_TITLE))
        _set(
            self,
            "description",
            check_text("video.description", self.description, max_length=MAX_VIDEO_DESCRIPTION),
        )
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
                int(
                    check_number(
                        "video.duration", self.duration, 1, MAX_VIDEO_DURATION, integer=True
                    )
                ),
            )
        if self.rating is not None:
            _set(self, "rating", check_number("video.rating", self.rating, 0, 5))
        if self.view_count is not None:
            count = check_number("video.view_count", self.view_count, 0, 1e18, integer=True)
            _set(self, "view_count", int(count))
        _optional_date(self, "expiration_date", "video.expiration_date")
        _optional_date(self, "publication_date", "video.publication_date")
        tags = tuple(
            check_text("video.tags", t, max_length=MAX_VIDEO_TAG_LENGTH) for t in self.tags
        )
        if len(tags) > MAX_VIDEO_TAGS:
            raise InvalidEntryError("video.tags", self.tags, f"at most {MAX_VIDEO_TAGS} tags")
        _set(self, "tags", tags)
        for name in ("family_friendly", "requires_subscription", "live"):
            _yes_no(f"video.{name}", getattr(self, name))
        if self.uploader is not None:
            _set(
                self,
                "uploader",
                check_text("video.uploader", self.uploader, max_length=MAX_VIDEO_UPLOADER),
            )
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
