"""Batches admitted whole: the per-entry rules of ``models.py`` a column at a time.

Most providers hand over batches of one shape (URL strings, dicts of the protocol
fields, ``SitemapEntry`` objects), each value in a usual form. Such a batch is
checked and kept by column (a few passes at C speed) instead of entry by entry, and
rendering writes it from its columns (``urlset_writer.py``). Anything unusual takes the
per-entry path, which decides as for any entry; property tests hold the two paths to
the same results (``tests/unit/sansio/test_models.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from itertools import repeat
from operator import add, attrgetter, itemgetter
from typing import Any

from .models import PLAIN_KEYS, Admitted, SitemapEntry
from .urls import BaseURL, Located
from .values import to_datetime, w3c_values
from .xml import (
    CHANGEFREQ_ELEMENT,
    PRIORITY_ELEMENT,
    escaped_loc_size,
    lastmod_element,
    tail_lastmod,
)

__all__ = ["Batch", "PlainBatch", "TailPiece", "plain_batch"]

#: A part of every entry's tail: one text per entry, or one text for all of them.
TailPiece = list[str] | str


@dataclass(frozen=True, slots=True)
class PlainBatch:
    """A batch admitted whole: absolute locs (and their escaped size), and their simple
    fields by column.

    ``lastmod_texts`` (W3C texts of one length), ``changefreqs`` (the words, each one of
    the seven) and ``priorities`` (the numbers, each one of the eleven usual ones) are
    None when the items carry no such field; ``newest`` is the newest lastmod (aware; a
    date is its midnight UTC). ``given_tails`` are the tails of entries that carry them
    (``SitemapEntry`` objects render theirs when built). The elements are built only
    when asked for: a planning pass needs their sizes alone.

    It is also the sequence of its entries as the per-entry path admits them, so any
    writer can take it; ``UrlsetWriter`` writes it from its columns.
    """

    locs: list[str]
    #: ``len()`` of all the locs as written (XML-escaped), together.
    loc_size: int
    lastmod_texts: list[str] | None = None
    newest: datetime | None = None
    changefreqs: list[str] | None = None
    priorities: list[float] | None = None
    given_tails: list[str] | None = None

    def __len__(self) -> int:
        return len(self.locs)

    def __iter__(self) -> Iterator[Admitted]:
        return zip(self.locs, self.tails, repeat(None))

    def select(self, kept: list[int]) -> PlainBatch:
        """The batch of the rows at ``kept`` (in order) alone: what a section's
        exclusions leave of it (``_engine/stream.py``)."""
        locs = [self.locs[i] for i in kept]
        joined = "".join(locs)
        size = escaped_loc_size(len(joined), joined.count("&"), joined.count("'"))
        lastmods = _take(self.lastmod_texts, kept)
        tails = _take(self.given_tails, kept)
        if lastmods is not None:
            texts = lastmods
        elif tails is not None:
            texts = [text for t in tails if (text := tail_lastmod(t)) is not None]
        else:
            texts = []
        newest = max(map(to_datetime, texts)) if texts else None
        changefreqs, priorities = _take(self.changefreqs, kept), _take(self.priorities, kept)
        return PlainBatch(locs, size, lastmods, newest, changefreqs, priorities, tails)

    def tail_pieces(self) -> list[TailPiece]:
        """Each entry's tail in parts: ``"".join`` of an entry's parts is its tail."""
        if self.given_tails is not None:
            return [self.given_tails]
        pieces: list[TailPiece] = []
        if self.lastmod_texts is not None:
            pieces += ["<lastmod>", self.lastmod_texts, "</lastmod>"]
        for column, elements in (
            (self.changefreqs, CHANGEFREQ_ELEMENT),
            (self.priorities, PRIORITY_ELEMENT),
        ):
            if column is not None:
                values: list[Any] = column
                if values.count(values[0]) == len(values):  # the usual case: one for all
                    pieces.append(elements[values[0]])
                else:
                    pieces.append(list(map(elements.__getitem__, values)))
        return pieces

    @property
    def tails(self) -> list[str]:
        """Each entry's pre-rendered ``<lastmod>``/``<changefreq>``/``<priority>``."""
        count = len(self.locs)
        columns = [[piece] * count if type(piece) is str else piece for piece in self.tail_pieces()]
        if not columns:
            return [""] * count
        if len(columns) == 1:
            return list(columns[0])
        return list(map("".join, zip(*columns, strict=False)))

    def admitted(self) -> list[Admitted]:
        """The batch as rendering takes it: ``(loc, tail, None)`` per entry."""
        return list(self)

    def tail_sizes(self) -> list[int]:
        """``len()`` of each of :attr:`tails`, without building them."""
        if self.given_tails is not None:
            return list(map(len, self.given_tails))
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
        if self.given_tails is not None:
            return sum(map(len, self.given_tails))
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
#: What an entry stream hands the writers: a batch admitted whole, or each valid entry.
Batch = list[Admitted] | PlainBatch

_CHANGEFREQ_SIZE = {word: len(element) for word, element in CHANGEFREQ_ELEMENT.items()}
_CHANGEFREQ_TAGS = len(CHANGEFREQ_ELEMENT["daily"]) - len("daily")
_PRIORITY_SIZE = {number: len(element) for number, element in PRIORITY_ELEMENT.items()}
_COLUMN = {key: itemgetter(key) for key in PLAIN_KEYS}
_ENTRY_LOC, _ENTRY_TAIL = attrgetter("loc"), attrgetter("_tail")
_ENTRY_LASTMOD, _ENTRY_EXTENDED = attrgetter("lastmod"), attrgetter("_extended")


def plain_batch(raw: list[Any], base: BaseURL) -> PlainBatch | None:
    """:func:`entry_parts` and :meth:`BaseURL.locate` of a whole batch, when it is plain.

    Plain: every item is a URL string; or every item a dict with the same protocol keys
    (``loc`` and any of ``lastmod``, ``changefreq``, ``priority``), each value in the
    form the per-item path keeps as it is (a canonical URL under ``base``, a W3C text,
    one of the seven words, one of the eleven usual priorities), or every item a
    ``Mapping`` of one other type that would be such a dict (``row._mapping`` of
    SQLAlchemy rows: read by key, as ``SitemapEntry(**item)`` reads it); or every item a
    ``SitemapEntry`` without extensions (validated when built). Then the results are
    those of the per-item path, computed column by column at C speed. Anything else (one
    unusual value is enough) returns None, and each item takes the per-item path, which
    validates, normalises, reports and leaves out as for any item.
    """
    if not raw:
        return None
    kinds = set(map(type, raw))
    if kinds == {str}:
        located = base.all_located(raw)
        return _plain(located) if located is not None else None
    if kinds == {SitemapEntry}:
        return _entries(raw, base)
    if kinds != {dict}:
        (kind,) = kinds if len(kinds) == 1 else (object,)
        if not issubclass(kind, Mapping):
            return None
        if issubclass(kind, dict):  # read as dict() reads it (a defaultdict adds no key)
            raw = list(map(dict, raw))
    try:
        keys = raw[0].keys()
        if "loc" not in keys or not PLAIN_KEYS.issuperset(keys):
            return None
        if set(map(len, raw)) != {len(keys)}:
            return None
        # The same number of keys and every key of the first: the same keys, for a dict
        # and for any Mapping that answers the keys it lists and no other (the Mapping
        # contract; listing each row's keys would cost more than the rest of the batch).
        columns = {key: list(map(_COLUMN[key], raw)) for key in keys}  # as **item reads
    except Exception:  # a key missing, or a mapping that cannot be read: each item decides
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
        set(map(type, words)) == {str} and CHANGEFREQ_ELEMENT.keys() >= _distinct(words)
    ):
        return None  # an unusual word: the per-item path decides
    numbers = columns.get("priority")
    if numbers is not None:
        numbers = _usual_priorities(numbers)
        if numbers is None:
            return None  # an unusual number (NaN is none of the keys): the per-item path decides
    return _plain(located, dated[1], dated[0], words, numbers)


def _take(column: list[Any] | None, kept: list[int]) -> Any:
    return None if column is None else [column[i] for i in kept]


def _distinct(values: list[Any]) -> set[Any]:
    """``set(values)``; of a column of one value (the usual case), from one count."""
    first = values[0]
    return {first} if values.count(first) == len(values) else set(values)


def _entries(entries: list[SitemapEntry], base: BaseURL) -> PlainBatch | None:
    """A batch of entries without extensions: their locs located, their tails as built."""
    if any(map(_ENTRY_EXTENDED, entries)):
        return None
    located = base.all_located(list(map(_ENTRY_LOC, entries)))
    if located is None:
        return None
    return _plain(
        located,
        newest=_newest(list(map(_ENTRY_LASTMOD, entries))),
        tails=list(map(_ENTRY_TAIL, entries)),
    )


def _newest(lastmods: list[Any]) -> datetime | None:
    """The newest of entries' lastmods as they write them (whole seconds), or None.

    Entries hold aware datetimes (naive ones are made UTC when built) or dates.
    """
    kinds = set(map(type, lastmods))
    if kinds == {datetime} or kinds == {date}:
        newest = to_datetime(max(lastmods))
    else:
        values = [to_datetime(value) for value in lastmods if value is not None]
        if not values:
            return None
        newest = max(values)
    return newest.replace(microsecond=0)


#: Priority types read as :func:`check_number` reads them (``float()``); bool is not one.
_NUMBER_TYPES = frozenset((float, int, str, Decimal))


def _usual_priorities(numbers: list[Any]) -> list[float] | None:
    """The numbers as floats when each is one of the eleven usual priorities, whatever
    its type (an int, a numeric text, a ``Decimal`` from a NUMERIC column), else None."""
    kinds = set(map(type, numbers))
    if not _NUMBER_TYPES.issuperset(kinds):
        return None
    # One value for all (and of one type: equal values of one type read alike): one check.
    count, first = len(numbers), numbers[0]
    checked = [first] if len(kinds) == 1 and numbers.count(first) == count else numbers
    try:
        values = checked if kinds == {float} else list(map(float, checked))
    except (ValueError, OverflowError):  # no number (or a huge int): each item decides
        return None
    if not PRIORITY_ELEMENT.keys() >= set(values):
        return None
    return values if checked is numbers else values * count


def _plain(
    located: Located,
    lastmod_texts: list[str] | None = None,
    newest: datetime | None = None,
    changefreqs: list[str] | None = None,
    priorities: list[float] | None = None,
    tails: list[str] | None = None,
) -> PlainBatch:
    urls, length, ampersands, apostrophes = located
    size = escaped_loc_size(length, ampersands, apostrophes)
    return PlainBatch(urls, size, lastmod_texts, newest, changefreqs, priorities, tails)
