"""Sitemap entries: immutable, validated and normalised once, on creation."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import date, datetime
from decimal import Decimal
from itertools import repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any, TypeVar

from .._exceptions import InvalidEntryError
from .extensions import Alternate, Image, NewsArticle, Video
from .limits import MAX_IMAGES_PER_URL, MAX_URL_LENGTH
from .types import CHANGEFREQS, ChangeFreq
from .urls import BaseURL, Located, canonical_url_match, normalize_loc
from .values import check_number, date_value_and_text, w3c_values
from .xml import (
    CHANGEFREQ_ELEMENT,
    PRIORITY_ELEMENT,
    escaped_loc_size,
    lastmod_element,
    priority_element,
)

__all__ = [
    "Admitted",
    "Mapped",
    "PlainBatch",
    "SitemapEntry",
    "coerce_entry",
    "entry_parts",
    "plain_batch",
    "resolve_mapped",
    "simple_fields",
]

_T = TypeVar("_T")
_CHANGEFREQ_CHOICES = ", ".join(sorted(CHANGEFREQS))
_PLAIN_KEYS = frozenset(("loc", "lastmod", "changefreq", "priority"))

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
        try:
            return self.function(self.item)
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
        if "loc" in item and item.keys() <= _PLAIN_KEYS:
            loc, _, _, _, tail = simple_fields(**item)
            return loc, tail, None
    elif type(item) is str:
        return normalize_loc(item), "", None
    entry = coerce_entry(item)
    return entry.loc, entry._tail, entry if entry._extended else None


@dataclass(frozen=True, slots=True)
class PlainBatch:
    """A batch admitted whole: absolute locs (and their escaped size), and their simple
    fields by column.

    ``lastmod_texts`` (W3C texts of one length), ``changefreqs`` (the words, each one of
    the seven) and ``priorities`` (the numbers, each one of the eleven usual ones) are
    None when the items carry no such field; ``newest`` is the newest lastmod (aware; a
    date is its midnight UTC). The elements are built only when :attr:`tails` is read:
    a planning pass needs their sizes alone.
    """

    locs: list[str]
    #: ``len()`` of all the locs as written (XML-escaped), together.
    loc_size: int
    lastmod_texts: list[str] | None = None
    newest: datetime | None = None
    changefreqs: list[str] | None = None
    priorities: list[float] | None = None

    @property
    def tails(self) -> list[str]:
        """Each entry's pre-rendered ``<lastmod>``/``<changefreq>``/``<priority>``."""
        parts: list[list[str]] = []
        if self.lastmod_texts is not None:
            # The texts hold no line break (W3C texts): split the joined elements apart.
            joined = "</lastmod>\n<lastmod>".join(self.lastmod_texts)
            parts.append(f"<lastmod>{joined}</lastmod>".split("\n"))
        if self.changefreqs is not None:
            parts.append(list(map(CHANGEFREQ_ELEMENT.__getitem__, self.changefreqs)))
        if self.priorities is not None:
            parts.append(list(map(PRIORITY_ELEMENT.__getitem__, self.priorities)))
        if not parts:
            return [""] * len(self.locs)
        if len(parts) == 1:
            return parts[0]
        return list(map("".join, zip(*parts, strict=False)))

    def admitted(self) -> list[Admitted]:
        """The batch as rendering takes it: ``(loc, tail, None)`` per entry."""
        return list(zip(self.locs, self.tails, repeat(None)))

    def tail_sizes(self) -> list[int]:
        """``len()`` of each of :attr:`tails`, without building them."""
        fixed = 0
        if self.lastmod_texts is not None:
            fixed = len(lastmod_element(self.lastmod_texts[0]))  # one length in a batch
        sizes: list[int] = [fixed] * len(self.locs)
        if self.changefreqs is not None:
            sizes = list(map(add, sizes, map(_CHANGEFREQ_SIZE.__getitem__, self.changefreqs)))
        if self.priorities is not None:
            sizes = list(map(add, sizes, map(_PRIORITY_SIZE.__getitem__, self.priorities)))
        return sizes

    def tails_size(self) -> int:
        """``sum()`` of :meth:`tail_sizes`, from a few counts."""
        count = len(self.locs)
        size = 0
        if self.lastmod_texts is not None:
            size = len(lastmod_element(self.lastmod_texts[0])) * count
        if self.changefreqs is not None:  # the words' letters, and the tags around each
            size += len("".join(self.changefreqs)) + _CHANGEFREQ_TAGS * count
        if self.priorities is not None:  # a few distinct numbers: counted, not mapped
            numbers = self.priorities
            size += sum(_PRIORITY_SIZE[p] * numbers.count(p) for p in set(numbers))
        return size


#: Sizes of the elements, by word and by number (the sizes :func:`plain_batch` admits).
_CHANGEFREQ_SIZE = {word: len(element) for word, element in CHANGEFREQ_ELEMENT.items()}
_CHANGEFREQ_TAGS = len(CHANGEFREQ_ELEMENT["daily"]) - len("daily")
_PRIORITY_SIZE = {number: len(element) for number, element in PRIORITY_ELEMENT.items()}


def resolve_mapped(raw: list[Any]) -> list[Any]:
    """``raw`` with each :class:`Mapped` item resolved: the value its mapping returned,
    or the :class:`InvalidEntryError` it raised (which :func:`entry_parts` raises for
    that item alone). Each mapping is called once, before either path admits the batch.
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
        append(item)
    return out


_LOC = itemgetter("loc")
_COLUMN = {key: itemgetter(key) for key in _PLAIN_KEYS}


def plain_batch(raw: list[Any], base: BaseURL) -> PlainBatch | None:
    """:func:`entry_parts` and :meth:`BaseURL.locate` of a whole batch, when it is plain.

    Plain: every item is a URL string, or every item a dict with the same protocol keys
    (``loc`` and any of ``lastmod``, ``changefreq``, ``priority``), each value in the form
    the per-item path keeps as it is (a canonical URL under ``base``, a W3C text, one of
    the seven words, one of the eleven usual priorities). Then the results are those of
    the per-item path, computed column by column at C speed. Anything else (one unusual
    value is enough) returns None, and each item takes the per-item path, which
    validates, normalises, reports and leaves out as for any item.
    """
    if not raw:
        return None
    kinds = set(map(type, raw))
    if kinds == {str}:
        located = base.all_located(raw)
        return _plain(located) if located is not None else None
    if kinds != {dict}:
        return None
    keys = raw[0].keys()
    if "loc" not in keys or not _PLAIN_KEYS.issuperset(keys) or set(map(len, raw)) != {len(keys)}:
        return None
    try:  # the same number of keys and every key of the first: the same keys
        columns = {key: list(map(_COLUMN[key], raw)) for key in keys}
    except KeyError:
        return None
    located = base.all_located(columns["loc"])
    if located is None:
        return None
    lastmods = columns.get("lastmod")
    dated = w3c_values(lastmods) if lastmods is not None else (None, None)
    if dated is None:
        return None
    words = columns.get("changefreq")
    if words is not None and not (
        set(map(type, words)) == {str} and CHANGEFREQ_ELEMENT.keys() >= set(words)
    ):
        return None  # an unusual word: the per-item path decides
    numbers = columns.get("priority")
    if numbers is not None:
        numbers = _usual_priorities(numbers)
        if numbers is None:
            return None  # an unusual number (NaN is none of the keys): the per-item path decides
    return _plain(located, dated[1], dated[0], words, numbers)


#: Priority types read as :func:`check_number` reads them (``float()``); bool is not one.
_NUMBER_TYPES = frozenset((float, int, str, Decimal))


def _usual_priorities(numbers: list[Any]) -> list[float] | None:
    """The numbers as floats when each is one of the eleven usual priorities, whatever
    its type (an int, a numeric text, a ``Decimal`` from a NUMERIC column), else None."""
    kinds = set(map(type, numbers))
    if kinds != {float}:
        if not _NUMBER_TYPES.issuperset(kinds):
            return None
        try:
            numbers = list(map(float, numbers))
        except (ValueError, OverflowError):  # no number (or a huge int): each item decides
            return None
    return numbers if PRIORITY_ELEMENT.keys() >= set(numbers) else None


def _plain(
    located: Located,
    lastmod_texts: list[str] | None = None,
    newest: datetime | None = None,
    changefreqs: list[str] | None = None,
    priorities: list[float] | None = None,
) -> PlainBatch:
    urls, length, ampersands, apostrophes = located
    size = escaped_loc_size(length, ampersands, apostrophes)
    return PlainBatch(urls, size, lastmod_texts, newest, changefreqs, priorities)
