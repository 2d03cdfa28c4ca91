"""Page plans: where each page of a section starts and ends, by count *and* by bytes.

This module alone owns the rule that cuts a section into pages. A page holds at most
``max_urls`` URLs, at most ``MAX_NEWS_PER_FILE`` news URLs and at most ``max_bytes``
bytes of uncompressed XML, prolog and root element included.

How the planner learns sizes, and why it measures rather than estimates:

* Rendering is pure, so the planner can compute, during its one pass over a section, the
  exact UTF-8 size of every ``<url>`` element as it will be written (with its extension
  namespaces declared on the element itself: the writer declares them on the root only
  for the first entries, which makes a written page at most as long as measured). Pages
  are then cut greedily: an entry that would take the page past a limit starts the next
  page. The sizes are exact upper bounds, so no page can exceed its budget and no entry
  is dropped or duplicated to meet it.
* An estimate (a sample, an average with a margin) cannot promise that: one entry with a
  thousand images far down a table breaks any sample, and an overflow discovered while a
  page is served cannot be fixed any more, because the index listing that page has been
  sent. The answer would be an aborted response on every request, i.e. lost URLs.
* The cost is one rendering pass per content version: plans of providers that report a
  version are kept until it changes (see ``_engine/planning.py``); providers without one are
  iterated on every request anyway. ``benchmarks/paging.py`` measures it against
  count-only planning.

A plan is a plain value (raw offsets, per-page counts, sizes, news counts, lastmods and,
for keyset providers, the key range), so it can be cached, compared and shared.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Hashable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from .limits import MAX_NEWS_PER_FILE

__all__ = ["PageCutter", "PagePlan", "decode_key_range", "encode_key_range"]


@dataclass(frozen=True, slots=True)
class PagePlan:
    """One planned page: provider positions ``[start, stop)`` and what they render to.

    ``start``/``stop`` count raw provider items (valid or not), which is what
    ``page(offset, limit)`` and skipping take. ``size`` is the bytes of its ``<url>``
    elements (the document adds a fixed prolog, root and closing tag). ``first_key`` and
    ``last_key`` are the provider keys of its first and last entry, for keyset providers.
    """

    start: int
    stop: int
    urls: int
    size: int
    news: int
    #: The newest lastmod of its entries (aware), or the date its provider gives.
    lastmod: date | None
    first_key: Any = None
    last_key: Any = None


#: Keys a page URL can carry: JSON round-trips them exactly. Other key types (dates,
#: UUIDs) page by number through the current plan instead.
_KEY_TYPES = (int, str)
#: A key range token longer than this is not worth a URL (2,048 characters at most).
MAX_KEY_RANGE = 1400


def encode_key_range(after: Any, upto: Any) -> str | None:
    """``(after, upto]`` as a URL-safe token, or None when the keys cannot be carried."""
    for key in (after, upto):
        if key is not None and (type(key) not in _KEY_TYPES):
            return None
    data = json.dumps([after, upto], separators=(",", ":"), ensure_ascii=False)
    try:
        raw = data.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no URL (and no database) holds one
        return None
    token = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    return token if len(token) <= MAX_KEY_RANGE else None


#: The 64-bit signed range: the widest integer key SQL databases store.
_MIN_KEY, _MAX_KEY = -(2**63), 2**63 - 1


def decode_key_range(token: str) -> tuple[Any, Any] | None:
    """The ``(after, upto)`` keys of a token, or None if it is not one of ours."""
    try:
        data = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        value = json.loads(data.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    if not (isinstance(value, list) and len(value) == 2):
        return None
    if not all(key is None or type(key) in _KEY_TYPES for key in value):
        return None
    after, upto = value
    if upto is None or (after is not None and type(after) is not type(upto)):
        return None
    if any(type(key) is int and not _MIN_KEY <= key <= _MAX_KEY for key in value):
        return None  # no database key holds it (and drivers would overflow on it)
    # Ints order the same everywhere; strings order by the column's collation, which
    # Python's comparison does not know ("apple" < "Banana" under NOCASE or a locale).
    if type(upto) is int and after is not None and not after < upto:
        return None
    return after, upto


class _Group:
    """The items of one key on the current page, and what the page was before them."""

    __slots__ = ("key", "key_before", "lastmod", "lastmod_before", "news", "size", "start", "urls")

    def __init__(self, start: int, key: Any, key_before: Any, lastmod_before: datetime | None):
        self.start, self.key, self.key_before = start, key, key_before
        self.lastmod_before = lastmod_before
        self.lastmod: datetime | None = None
        self.urls = self.size = self.news = 0

    def add(self, size: int, news: bool, lastmod: datetime | None) -> None:
        self.urls += 1
        self.size += size
        self.news += news
        if lastmod is not None and (self.lastmod is None or lastmod > self.lastmod):
            self.lastmod = lastmod


class PageCutter:
    """Greedy page cutting, fed one item at a time in provider order.

    Consecutive items with one key (a row in every language) stay on one page: a key
    range names a page, so a cut between them would lose or repeat some. A group that
    would outgrow the page moves whole to the next one (unless it fills a page alone).

    :param max_urls: URLs per page.
    :param room: bytes available to ``<url>`` elements (budget minus document overhead).
    """

    __slots__ = (
        "_first_key",
        "_group",
        "split_keys",
        "_last_key",
        "_lastmod",
        "_max_urls",
        "_news",
        "_room",
        "_size",
        "_start",
        "_urls",
        "pages",
    )

    def __init__(self, *, max_urls: int, room: int) -> None:
        self._max_urls = max_urls
        self._room = room
        self.pages: list[PagePlan] = []
        self._start = 0
        self._urls = 0
        self._size = 0
        self._news = 0
        self._lastmod: datetime | None = None
        self._first_key: Hashable | None = None
        self._last_key: Hashable | None = None
        #: The current key's items on this page (None after a run: not known).
        self._group: _Group | None = None
        #: Whether a cut fell between two items of one key (key ranges cannot say it).
        self.split_keys = False

    def fits_alone(self, size: int) -> bool:
        """Whether an entry of ``size`` bytes fits on a page at all."""
        return size <= self._room

    def add(
        self,
        position: int,
        size: int,
        *,
        news: bool = False,
        lastmod: datetime | None = None,
        key: Any = None,
    ) -> int:
        """Place the entry at raw ``position``; returns its page number (0-based). Pages
        before it are final; its own may still move to the next page with its key's
        next items.

        The caller checks :meth:`fits_alone` first: an entry larger than a whole page is
        invalid, not placeable.
        """
        same = bool(self._urls) and key is not None and key == self._last_key
        if self._urls and (
            self._urls >= self._max_urls
            or self._size + size > self._room
            or (news and self._news >= MAX_NEWS_PER_FILE)
        ):
            group = self._group if same else None
            if group is not None and group.urls < self._urls:
                self._move(group)
            else:
                # One key's items fill more than a page: no key range can name a part
                # of them, so such a plan pages by number (see ``split_keys``).
                self.split_keys = self.split_keys or same
                self._close(position)
                self._start = position
        if not self._urls:
            self._first_key = key
        if not same or self._group is None:
            self._group = _Group(position, key, self._last_key, self._lastmod)
        self._group.add(size, news, lastmod)
        self._urls += 1
        self._size += size
        self._news += news
        self._last_key = key
        if lastmod is not None and (self._lastmod is None or lastmod > self._lastmod):
            self._lastmod = lastmod
        return len(self.pages)

    def _move(self, group: _Group) -> None:
        """Close the page before ``group`` (the current key's items) and start the next
        page with them, so that one key's items share a page."""
        self._urls -= group.urls
        self._size -= group.size
        self._news -= group.news
        self._lastmod, self._last_key = group.lastmod_before, group.key_before
        self._close(group.start)
        self._start = group.start
        self._first_key = self._last_key = group.key
        self._urls, self._size, self._news = group.urls, group.size, group.news
        self._lastmod = group.lastmod

    def add_run(
        self,
        count: int,
        size: int,
        *,
        lastmod: datetime | None = None,
        first_key: Any = None,
        last_key: Any = None,
    ) -> bool:
        """Place ``count`` consecutive entries (no news) of ``size`` bytes in all on the
        current page, if all of them fit there.

        Returns False, placing none, when one would start a page or fits no page: then
        the caller places them one by one with :meth:`add`, which cuts as for any entry.
        ``lastmod`` is the newest of theirs, the keys those of the first and last.
        """
        if not count:
            return True
        if self._urls + count > self._max_urls or self._size + size > self._room:
            return False  # (an entry larger than a page takes the page past its room too)
        if not self._urls:
            self._first_key = first_key
        self._group = None  # where the last key's items start is not known
        self._urls += count
        self._size += size
        self._last_key = last_key
        if lastmod is not None and (self._lastmod is None or lastmod > self._lastmod):
            self._lastmod = lastmod
        return True

    def add_block(
        self,
        position: int,
        urls: int,
        size: int,
        *,
        lastmod: datetime | None = None,
        first_key: Any = None,
        last_key: Any = None,
    ) -> None:
        """Place consecutive items whole (a key range its database sized: ``urls`` of
        them listed, ``size`` bytes in all, the first at raw ``position``): on the current
        page if they fit, else starting the next. The caller checks :meth:`fits_alone`."""
        run = {"lastmod": lastmod, "first_key": first_key, "last_key": last_key}
        if not self.add_run(urls, size, **run):
            self._close(position)
            self._start = position
            self.add_run(urls, size, **run)

    @property
    def current(self) -> int:
        """Number (0-based) of the page the next entry would join if it fits."""
        return len(self.pages)

    def _close(self, stop: int) -> None:
        self.pages.append(
            PagePlan(
                self._start,
                stop,
                self._urls,
                self._size,
                self._news,
                self._lastmod,
                self._first_key,
                self._last_key,
            )
        )
        self._urls = self._size = self._news = 0
        self._lastmod = None
        self._first_key = self._last_key = None
        self._group = None

    def finish(self, total: int) -> tuple[PagePlan, ...]:
        """The plan once all ``total`` raw items were seen (trailing invalid ones included)."""
        if self._urls:
            self._close(total)
        return tuple(self.pages)
