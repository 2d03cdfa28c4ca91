"""What the content ledger's book (``ledger.py``) gets from a provider and a stream: a
static list's items with their digests (:class:`Carried`), and one stream's pass over
a section (:class:`Reading`)."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from .batches import PlainBatch
from .models import Admitted, SitemapEntry

__all__ = ["Book", "Carried", "Reading"]


class Book(Protocol):
    """What a pass asks of the ledger's book (``ledger.LedgerBook``): named here, so the
    book imports its passes and never the other way round."""

    repeated: dict[str, dict[int, int]]

    def token(self, section: str) -> str: ...

    async def ready(self, section: str, again: bool) -> None: ...

    def split(self, raw: list[Any]) -> tuple[list[Any], list[int | None] | None]: ...

    def stamp_plain(
        self,
        section: str,
        plain: PlainBatch,
        given: list[int | None] | None,
        positions: list[int] | None,
        reading: Reading | None = None,
    ) -> PlainBatch: ...

    def stamp_admitted(
        self,
        section: str,
        admitted: list[Admitted | None],
        given: list[int | None] | None,
        reading: Reading | None = None,
    ) -> None: ...


class Carried(NamedTuple):
    """A static list's item and the digest its mapping carried (``StaticProvider``
    validates items up front, so the digest key is taken out there, not at admission)."""

    entry: SitemapEntry
    digest: object


class Reading:
    """One stream's pass over a section's items, from raw position ``offset``: what the
    admission step (``_engine/stream.py``) asks of the book.

    ``seen``: the URLs it dated so far, at their first listing's raw position (a URL
    listed again is written with the first listing's time and changes no record: two
    contents under one URL would else replace each other's record at every pass, a
    lastmod and a version that never stopped moving). A pass from the start keeps the
    repeated URLs in ``repeats`` (URL -> its first position), which the book hands to
    the streams of later pages once the pass is complete (:meth:`done`): a page that
    starts after a URL's first listing writes it with that listing's time.
    """

    __slots__ = (
        "book",
        "section",
        "seen",
        "repeats",
        "offset",
        "start",
        "digests",
        "span",
        "started",
    )

    def __init__(self, book: Book, section: str, offset: int) -> None:
        self.book = book
        self.section = section
        self.seen: dict[int, int] = {}
        self.repeats: dict[int, int] = {}
        self.offset = offset
        #: The raw position of the current batch's first item.
        self.start = offset
        #: The provider's digests of the current raw batch (``source="digest"``).
        self.digests: list[int | None] | None = None
        #: The section's ledger token before this stream's first batch and after its
        #: last; None once another stream moved it between two of its batches (then
        #: the records are not all this stream's word: see ``planning.restamped``).
        self.span: tuple[str, str] | None = None
        self.started = False

    async def ready(self, again: bool) -> None:
        """Before the first batch: a shared store's records (``again``: a planning pass)."""
        await self.book.ready(self.section, again)

    def split(self, raw: list[Any], pulled: int) -> list[Any]:
        """A raw batch without the provider's digests (``pulled``: raw items so far)."""
        self.start = self.offset + pulled - len(raw)
        raw, self.digests = self.book.split(raw)
        return raw

    def first(self, key: int, place: int, repeated: dict[int, int]) -> int | None:
        """Where the URL of ``key`` was first listed (-1: on an earlier page, as the
        section's last complete pass found; None: here, at ``place`` of the batch)."""
        first = self.seen.get(key)
        if first is None:
            if repeated.get(key, self.offset) < self.offset:
                return -1
            self.seen[key] = self.start + place
        elif not self.offset:
            self.repeats[key] = first
        return first

    def stamp_plain(self, plain: PlainBatch, positions: list[int] | None) -> PlainBatch:
        self._before()
        plain = self.book.stamp_plain(self.section, plain, self.digests, positions, self)
        self._after()
        return plain

    def stamp_admitted(self, admitted: list[Admitted | None]) -> None:
        self._before()
        self.book.stamp_admitted(self.section, admitted, self.digests, self)
        self._after()

    def _before(self) -> None:
        now = self.book.token(self.section)
        if not self.started:
            self.started, self.span = True, (now, now)
        elif self.span is not None and self.span[1] != now:
            self.span = None

    def _after(self) -> None:
        if self.span is not None:
            self.span = (self.span[0], self.book.token(self.section))

    def done(self) -> None:
        """The pass read every item: a pass from the start tells later pages its repeats."""
        if not self.offset:
            self.book.repeated[self.section] = self.repeats
