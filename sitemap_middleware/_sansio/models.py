"""Sitemap entries: immutable, validated and normalised once, on creation."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from .._exceptions import InvalidEntryError
from .extensions import Alternate, Image, NewsArticle, Video
from .limits import MAX_IMAGES_PER_URL, MAX_URL_LENGTH
from .skip import SKIP
from .types import CHANGEFREQS, ChangeFreq
from .urls import canonical_url_match, normalize_loc
from .values import check_number, date_value_and_text
from .xml import CHANGEFREQ_ELEMENT, PRIORITY_ELEMENT, lastmod_element, priority_element

__all__ = [
    "Admitted",
    "Mapped",
    "SitemapEntry",
    "coerce_entry",
    "entry_parts",
    "map_each",
    "resolve_mapped",
    "simple_fields",
]

_T = TypeVar("_T")
_CHANGEFREQ_CHOICES = ", ".join(sorted(CHANGEFREQS))
PLAIN_KEYS = frozenset(("loc", "lastmod", "changefreq", "priority"))

SimpleFields = tuple[str, "date | datetime | None", "ChangeFreq | None", "float | None", str]


def simple_fields(
    loc: object, lastmod: object = None, changefreq: object = None, priority: object = None
) -> SimpleFields:
    """Validate and normalise the four protocol fields of a ``<url>``.

    Returns ``(loc, lastmod, changefreq, priority, tail)`` where ``tail`` is the
    pre-rendered ``<lastmod>``/``<changefreq>``/``<priority>`` children. Raises
    :class:`InvalidEntryError` naming the field and the value.
    """
    # A canonical absolute URL (what nearly every provider yields) is recognised inline:
    # here a function call costs as much as the check. Anything else takes normalize_loc.
    if not (
        type(loc) is str
        and "%" not in loc
        and canonical_url_match(loc)
        and len(loc) <= MAX_URL_LENGTH
    ):
        loc = normalize_loc(loc)
    tail = ""
    if lastmod is not None:
        lastmod, text = date_value_and_text("lastmod", lastmod)
        tail = lastmod_element(text)
    if changefreq is not None:
        element = CHANGEFREQ_ELEMENT.get(changefreq) if type(changefreq) is str else None
        if element is None:
            word = changefreq.lower() if isinstance(changefreq, str) else None
            if word not in CHANGEFREQS:
                raise InvalidEntryError(
                    "changefreq", changefreq, f"must be one of {_CHANGEFREQ_CHOICES}"
                )
            changefreq, element = word, CHANGEFREQ_ELEMENT[word]
        tail += element
    if priority is not None:
        element = PRIORITY_ELEMENT.get(priority) if type(priority) is float else None
        if element is None:
            priority = check_number("priority", priority, 0.0, 1.0) + 0.0  # -0 is 0
            element = priority_element(priority)
        tail += element
    return loc, lastmod, changefreq, priority, tail  # type: ignore[return-value]


@dataclass(frozen=True, init=False)
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

    # Slots by hand rather than slots=True: the two derived ones stay out of fields(),
    # asdict(), repr and comparisons. Derived once (entries are immutable and served
    # many times): _tail, the pre-rendered lastmod/changefreq/priority children, and
    # _extended, whether any extension is set.
    __slots__ = (
        "loc",
        "lastmod",
        "changefreq",
        "priority",
        "images",
        "videos",
        "news",
        "alternates",
        "_tail",
        "_extended",
    )
    if TYPE_CHECKING:  # typed for mypy, but not dataclass fields at runtime
        _tail: str
        _extended: bool

    loc: str
    lastmod: date | datetime | None
    changefreq: ChangeFreq | None
    priority: float | None
    images: tuple[Image, ...]
    videos: tuple[Video, ...]
    news: NewsArticle | None
    alternates: tuple[Alternate, ...]

    def __init__(
        self,
        loc: str,
        lastmod: date | datetime | str | None = None,
        changefreq: ChangeFreq | str | None = None,
        priority: float | None = None,
        images: Sequence[Image | Mapping[str, Any] | str] = (),
        videos: Sequence[Video | Mapping[str, Any]] = (),
        news: NewsArticle | Mapping[str, Any] | None = None,
        alternates: Sequence[Alternate | Mapping[str, Any]] = (),
    ) -> None:
        # Written by hand rather than generated: every slot is set once, which makes
        # building an entry about a third cheaper than __post_init__ re-setting fields.
        set_ = object.__setattr__
        loc, lastmod, changefreq, priority, tail = simple_fields(loc, lastmod, changefreq, priority)
        set_(self, "loc", loc)
        set_(self, "lastmod", lastmod)
        set_(self, "changefreq", changefreq)
        set_(self, "priority", priority)
        set_(self, "_tail", tail)
        extended = bool(images or videos or alternates or news is not None)
        set_(self, "_extended", extended)
        if not extended:
            set_(self, "images", ())
            set_(self, "videos", ())
            set_(self, "news", None)
            set_(self, "alternates", ())
            return
        checked = _tuple_of("images", images, Image, lambda v: Image(**v))
        if len(checked) > MAX_IMAGES_PER_URL:
            raise InvalidEntryError(
                "images", len(checked), f"at most {MAX_IMAGES_PER_URL} images per URL"
            )
        set_(self, "images", checked)
        set_(self, "videos", _tuple_of("videos", videos, Video, lambda v: Video(**v)))
        set_(
            self,
            "alternates",
            _tuple_of("alternates", alternates, Alternate, lambda v: Alternate(**v)),
        )
        if isinstance(news, Mapping):
            news = NewsArticle(**news)
        elif news is not None and not isinstance(news, NewsArticle):
            raise InvalidEntryError("news", news, "must be a NewsArticle")
        set_(self, "news", news)

    def __reduce__(self) -> tuple[type[SitemapEntry], tuple[Any, ...]]:
        # Rebuilt through __init__: frozen slots cannot be restored by setattr (pickle, copy).
        return type(self), tuple(getattr(self, f.name) for f in fields(self))


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
    """Turn what a provider yields (entry, URL string, mapping, or a row with its
    mapping) into an entry."""
    if type(item) is Mapped:
        item = item.resolve()
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


class Mapped:
    """A raw item (a row, a file) and the function that turns it into an entry.

    Providers yield these instead of calling the mapping themselves, so that a mapping
    that raises costs its own row only: :func:`entry_parts` calls it and reports any
    exception as an :class:`InvalidEntryError` naming the mapping and the row.
    """

    __slots__ = ("function", "item", "name")

    def __init__(self, function: Callable[[Any], Any], item: object, name: str = "map") -> None:
        self.function = function
        self.item = item
        self.name = name

    def __repr__(self) -> str:
        return f"Mapped({self.name}, {self.item!r})"

    def resolve(self) -> object:
        """The entry, or :data:`SKIP` (the mapping returned it, or None)."""
        try:
            value = self.function(self.item)
            return SKIP if value is None else value
        except Exception as exc:
            raise self.error(exc) from (None if isinstance(exc, InvalidEntryError) else exc)

    def error(self, exc: Exception) -> InvalidEntryError:
        """What the mapping raising ``exc`` for this item is reported as."""
        if isinstance(exc, InvalidEntryError):
            return InvalidEntryError(exc.field, exc.value, f"{exc.reason} (row {self.item!r})")
        return InvalidEntryError(self.name, self.item, f"{type(exc).__name__}: {exc}")


#: One URL ready to render: its loc (absolute once admitted), its pre-rendered simple
#: children, and the entry itself when it carries extensions.
Admitted = tuple[str, str, SitemapEntry | None]


def entry_parts(item: object) -> Admitted:
    """What rendering needs of one provider item: ``(loc, tail, extended)``.

    ``loc`` may still be base-relative; ``tail`` is the pre-rendered simple children;
    ``extended`` is the entry when it carries extensions. URL strings and plain dicts
    of the four protocol fields (what most providers yield) are validated by the same
    :func:`simple_fields` as an entry, without building one that would be dropped as
    soon as its line is written.
    """
    if isinstance(item, InvalidEntryError):
        raise item  # what a wrapping provider could not build: logged and left out
    if type(item) is Mapped:
        item = item.resolve()
    if type(item) is dict:
        if "loc" in item and item.keys() <= PLAIN_KEYS:
            loc, _, _, _, tail = simple_fields(**item)
            return loc, tail, None
    elif type(item) is str:
        return normalize_loc(item), "", None
    entry = coerce_entry(item)
    return entry.loc, entry._tail, entry if entry._extended else None


def map_each(function: Callable[[Any], Any], items: list[Any], name: str) -> list[Any]:
    """What :func:`resolve_mapped` gives for ``Mapped(function, item, name)`` of each
    item, without wrapping each: a provider's ``map=`` applied a batch at a time."""
    out: list[Any] = []
    append = out.append
    for item in items:
        try:
            value = function(item)
        except Exception as exc:
            value = Mapped(function, item, name).error(exc)
        else:
            if type(value) is dict:  # a mapping may fill and return one dict each time
                value = dict(value)
            elif value is None:  # "leave this row out", quietly
                value = SKIP
        append(value)
    return out


def resolve_mapped(raw: list[Any]) -> list[Any]:
    """``raw`` with each :class:`Mapped` item resolved: the value its mapping returned
    (:data:`SKIP` for None), or the :class:`InvalidEntryError` it raised (which
    :func:`entry_parts` raises for that item alone). Each mapping is called once,
    before either path admits the batch.
    """
    if Mapped not in set(map(type, raw)):
        return raw
    out: list[Any] = []
    append = out.append
    for item in raw:
        if type(item) is Mapped:
            try:
                item = item.function(item.item)  # resolve(), inlined
            except Exception as exc:
                item = item.error(exc)
            else:
                if type(item) is dict:  # a mapping may fill and return one dict each time
                    item = dict(item)
                elif item is None:  # "leave this row out", quietly
                    item = SKIP
        append(item)
    return out


def describe_item(item: object) -> str:
    """What a log line calls a provider item: its loc when it has one, else the item."""
    loc = getattr(item, "loc", None)
    if loc is None and isinstance(item, Mapping):
        loc = item.get("loc")
    if loc is None and isinstance(item, str):
        loc = item
    shown = repr(loc if loc is not None else item)
    return shown if len(shown) <= 120 else shown[:117] + "..."
