"""One measuring pass over a section: each admitted entry sized and placed on a page.

The pass behind ``planning.py``'s ``plan_section`` (see ``_sansio/paging.py`` for why sizes
are measured, not estimated); the stream and the cutter come from there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date, datetime, timezone

from .._config import SitemapConfig
from .._sansio.batches import PlainBatch
from .._sansio.dedupe import Fingerprints
from .._sansio.models import Admitted
from .._sansio.paging import PageCutter
from .._sansio.urlset_writer import UrlsetWriter
from .stream import EntryStream

#: Why the planning pass left out an entry larger than a page (as the render logs it).
LOG_OVERSIZE = (
    "invalid loc %r: its <url> element (%d bytes) is larger than a whole page "
    "(max_bytes_per_page %d)"
)

__all__ = ["LOG_OVERSIZE", "Measuring"]


class Measuring:
    """One measuring pass over a section: each admitted entry sized and placed on a page.

    Per batch, not per entry, it calls out: a batch of the common shape (``plain``) is
    placed whole when it fits the current page, else entry by entry (``_place``).
    """

    def __init__(
        self,
        stream: EntryStream,
        measurer: UrlsetWriter,
        cutter: PageCutter,
        config: SitemapConfig,
        keyed: bool,
        keep: list[PlainBatch] | None,
    ) -> None:
        self.stream, self.measurer, self.cutter = stream, measurer, cutter
        self.max_bytes, self.keyed, self.keep = config.max_bytes_per_page, keyed, keep
        self.hashes: Fingerprints | None = None
        self.oversize = 0  # entries larger than a page (the writer leaves them out)
        self.first_oversize = ""
        self.last_tail = ""  # consecutive entries often share a lastmod: parsed once
        self.last_lastmod: datetime | None = None

    async def read(self, until_page: int | None) -> int | None:
        """Read the section; once page ``until_page`` is complete, the position of the
        next page's first entry (None: the whole section was read)."""
        stream, measurer, hashes = self.stream, self.measurer, self.hashes
        while raw := await stream.next_raw():
            start = stream.pulled - len(raw)
            plain = stream.plain(raw)
            self._keep(plain)
            if plain is not None:  # the common batch: sized at once, and most often
                # placed at once (on the current page)
                if hashes is not None:
                    hashes.add(plain.locs)
                if self._place_run(plain, start):
                    continue
                admitted: Sequence[Admitted | None] = stream.spread(plain, len(raw))
                sizes = iter(measurer.plain_sizes(plain.locs, plain.tail_sizes()))
            else:
                admitted = stream.admit_one_by_one(raw)  # plain_batch said no already
                valid = [item for item in admitted if item is not None]
                sizes = iter(measurer.sizes(valid))
                if hashes is not None:
                    hashes.add([item[0] for item in valid])
            stop = self._place(admitted, sizes, start, until_page)
            if stop is not None:
                return stop
        return None

    def _keep(self, plain: PlainBatch | None) -> None:
        """Hold the pass's batches while the section is one page of plain batches."""
        if self.keep is None:
            return
        if plain is None or self.cutter.current:
            self.keep.clear()  # not one page of plain batches: the render reads again
            self.keep = None
        else:
            self.keep.append(plain)

    def _place_run(self, plain: PlainBatch, start: int) -> bool:
        """Whether the whole batch went onto the current page at once."""
        stream, keyed = self.stream, self.keyed
        return self.cutter.add_run(
            len(plain),
            self.measurer.plain_size(len(plain.locs), plain.loc_size, plain.tails_size()),
            lastmod=plain.newest,
            first_key=stream.key_at(start) if keyed else None,
            last_key=stream.key_at(stream.pulled - 1) if keyed else None,
        )

    def _place(
        self,
        admitted: Sequence[Admitted | None],
        sizes: Iterator[int],
        start: int,
        until_page: int | None,
    ) -> int | None:
        """Place a batch's entries one by one (see :meth:`read` for what it returns)."""
        cutter, stream, keyed = self.cutter, self.stream, self.keyed
        last_tail, last_lastmod = self.last_tail, self.last_lastmod
        for offset, item in enumerate(admitted):
            if item is None:
                continue
            size = next(sizes)
            loc, tail, extended = item
            if not cutter.fits_alone(size):
                # Logged when its page is served (the writer leaves it out).
                self.oversize += 1
                if not self.first_oversize:
                    self.first_oversize = LOG_OVERSIZE % (loc, size, self.max_bytes)
                continue
            if tail != last_tail:
                last_tail, last_lastmod = tail, _lastmod(tail)
            page = cutter.add(
                start + offset,
                size,
                news=extended is not None and extended.news is not None,
                lastmod=last_lastmod,
                key=stream.key_at(start + offset) if keyed else None,
            )
            if until_page is not None and page >= until_page:
                return start + offset  # the first entry of the next page
        self.last_tail, self.last_lastmod = last_tail, last_lastmod
        return None


def _lastmod(tail: str) -> datetime | None:
    """The datetime of a pre-rendered ``<lastmod>`` child (we wrote it: W3C, zoned)."""
    if not tail.startswith("<lastmod>"):
        return None
    text = tail[9 : tail.index("<", 9)]
    if len(text) == 10:
        day = date.fromisoformat(text)
        return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text)
