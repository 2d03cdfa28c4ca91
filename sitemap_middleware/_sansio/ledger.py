"""The content ledger: each URL's content digest and when it was first seen, per section.

No I/O: the engine (``_engine/ledger.py``) loads and saves a fleet's records; this book
answers the admission step (``_engine/stream.py``) at once, a batch at a time, and
names what a version must (:meth:`LedgerBook.token`: an order-independent digest of a
section's records, so plans and ETags move exactly when a written time does).

A record is one int per URL, keyed by an 8-byte BLAKE2b of the URL (an int):
``digest << 40 | seconds << 2 | is_date << 1 | told`` (``digest``: 8 bytes of BLAKE2b of
the content; ``seconds``: the first-seen time, UTC; ``is_date``: written as a date;
``told``: its lastmod is held: it moved while the content did not, reported).

The rule, per admitted entry with content digest ``d`` and lastmod ``L`` (or none):

- no record: the first-seen time is ``L`` (the provider's word) or now;
- a record of ``d``: its time is written (``L`` itself when it says the same second);
  an ``L`` later than it moved without the content: held, and reported when it starts
  (the record's ``told`` bit says it is held; :meth:`LedgerBook.held` counts them). An
  ``L`` earlier than it is a lastmod that did not move when the content did: no report;
- a record of another digest (the content changed): ``L`` when it is newer than the
  record, else now (at least a second after the record's time): the written lastmod
  always moves.
"""

from __future__ import annotations

import calendar
import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .._exceptions import ConfigurationError
from .._ledger_settings import Ledger
from .batches import PlainBatch
from .guard import GuardBook
from .ledger_pass import Carried, Reading
from .models import Admitted, SitemapEntry

__all__ = ["HELD_EXAMPLES", "Carried", "LedgerBook", "Reading", "url_key"]

_MASK64 = (1 << 64) - 1
_STAMP = (1 << 40) - 1
_TOLD = 1
#: URLs whose lastmod is held kept per section to name (``check`` shows them).
HELD_EXAMPLES = 5
_DATE = 2
#: The last second a record may hold (9999-12-31T23:59:59Z: a year of four digits).
_LAST = 253_402_300_799


def url_key(loc: str) -> int:
    """A record's key: 8 bytes of BLAKE2b of the URL, as an int."""
    raw = hashlib.blake2b(loc.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "big")


def _digest(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        raw = value
    else:
        raw = (value if isinstance(value, str) else repr(value)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")


def _mix(key: int, record: int) -> int:
    """A record's share of its section's token (XOR of all: order-independent)."""
    record &= ~_TOLD
    return ((key * 0x9E3779B97F4A7C15) ^ (record * 0xC2B2AE3D27D4EB4F) ^ record >> 40) & _MASK64


def _seconds(text: str) -> int:
    if len(text) == 10:
        return calendar.timegm(time.strptime(text, "%Y-%m-%d"))
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() // 1)


def _text(stamp: int) -> str:
    when = time.gmtime(stamp >> 2)
    if stamp & _DATE:
        return time.strftime("%Y-%m-%d", when)
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", when)


def _given(given: int, text: str) -> int:
    """The stamp of a provider's lastmod (``given``: its seconds; ``text``: as written)."""
    return given << 2 | (_DATE if len(text) == 10 else 0)


def _changed(record: int, given: int, text: str, now: int) -> int:
    """The stamp of new content under a record: the provider's lastmod when newer than
    the record's time, else now (at least a second after it): the written time moves."""
    held = (record & _STAMP) >> 2
    if text and given > held:
        return _given(given, text)
    return max(now, held + 1) << 2


def _givens(texts: list[str]) -> list[int]:
    """Each lastmod text's seconds (0: no lastmod; below 0: before 1970, kept as given)."""
    seconds: dict[str, int] = {}
    return [
        (seconds[x] if x in seconds else seconds.setdefault(x, _seconds(x))) if x else 0
        for x in texts
    ]


def _by_fields(
    tails: Sequence[str], cuts: list[int], extended: Sequence[SitemapEntry | None]
) -> list[int | None]:
    """``source="fields"``: each entry's digest of what is written besides its loc and
    lastmod (``cuts``: where each tail's lastmod ends; most tails share their rest)."""
    known: dict[str, int | None] = {}
    out: list[int | None] = []
    for tail, cut, e in zip(tails, cuts, extended, strict=True):
        rest = tail[cut + 10 :]
        if e is not None:
            out.append(_digest(f"{rest}|{e.images!r}|{e.videos!r}|{e.news!r}|{e.alternates!r}"))
        else:
            out.append(known[rest] if rest in known else known.setdefault(rest, _digest(rest)))
    return out


class LedgerBook:
    """Records by section, their tokens, and the records a shared store has yet to keep."""

    def __init__(self, ledger: Ledger, guard: GuardBook | None = None) -> None:
        self.ledger = ledger
        self._records: dict[str, dict[int, int]] = {}
        self._tokens: dict[str, int] = {}
        #: Up to HELD_EXAMPLES URLs per section whose lastmod is held: (loc, said, written).
        self._held: dict[str, dict[int, tuple[str, str, str]]] = {}
        #: ``source="guard"``: each URL's page digest (None: not fetched yet), and per
        #: section the URLs written as given until it is (``awaiting``), and the digests
        #: that arrived since the section's last stamp (``fresh``: a version names them).
        self.bodies: Callable[[str], int | None] | None = None
        self._awaiting: dict[str, set[int]] = {}
        self._fresh: dict[str, dict[int, int]] = {}
        if ledger.source == "guard":
            if guard is None:
                raise ConfigurationError(
                    "Ledger(source='guard') dates each URL by the page the guard fetches: "
                    "configure SitemapConfig(guard=Guard(...)) too"
                )
            self.bodies, guard.on_digest = guard.digest, self.arrived
        #: Per section, the URLs its last complete pass listed more than once, at the
        #: raw position of their first listing (see :class:`Reading`).
        self.repeated: dict[str, dict[int, int]] = {}
        self._count = 0
        #: Records to save (a shared store): per section, key -> record.
        self.pending: dict[str, dict[int, int]] = {}
        #: Set by the engine when a store is shared: saves (wake) and loads (loader).
        self.wake: Callable[[], None] | None = None
        self.loader: Callable[[str, bool], Awaitable[None]] | None = None
        #: Told of URLs whose lastmod moved without their content (once per content).
        self.told: Callable[[str, list[tuple[str, str, str]]], None] | None = None
        self.clock: Callable[[], float] = time.time

    # -- digests ---------------------------------------------------------------------

    @property
    def digest_key(self) -> str | None:
        """The key a provider's mappings carry their digest under (``source="digest"``)."""
        how = self.ledger.digest
        return how if self.ledger.source == "digest" and isinstance(how, str) else None

    def split(self, raw: list[Any]) -> tuple[list[Any], list[int | None] | None]:
        """``raw`` without the provider's digests, and those digests (``source="digest"``;
        None for ``"fields"``, whose digests come from the admitted entries)."""
        if self.ledger.source != "digest":
            return raw, None
        how = self.ledger.digest
        digests: list[int | None] = []
        if callable(how):
            return raw, [_digest(how(item)) for item in raw]
        out: list[Any] = []
        for item in raw:
            if type(item) is dict and how in item:  # the usual item: a copy, popped in C
                item = item.copy()
                digests.append(_digest(item.pop(how)))
            elif type(item) is Carried:
                digests.append(_digest(item.digest))
                item = item.entry
            elif isinstance(item, Mapping) and how in item:
                digests.append(_digest(item[how]))
                item = {k: v for k, v in item.items() if k != how}
            else:
                digests.append(_digest(getattr(item, how, None)))
            out.append(item)
        return out, digests

    # -- admission -------------------------------------------------------------------

    def stamp_plain(
        self,
        section: str,
        plain: PlainBatch,
        given: list[int | None] | None,
        positions: list[int] | None,
        reading: Reading | None = None,
    ) -> PlainBatch:
        """A plain batch with the ledger's lastmods (``given``: digests by raw position;
        ``positions``: where its rows stood in the raw batch, None: one for one)."""
        if not plain.locs:
            return plain
        digests = None
        if given is not None:
            digests = given if positions is None else [given[i] for i in positions]
        tails, newest = self.stamp(
            section, plain.locs, plain.tails, [None] * len(plain), digests, reading, positions
        )
        newest_at = None
        if newest is not None:
            newest_at = datetime.fromisoformat(newest if len(newest) > 10 else newest + "T00:00Z")
        return PlainBatch(plain.locs, plain.loc_size, None, newest_at, None, None, tails)

    def stamp_admitted(
        self,
        section: str,
        admitted: list[Admitted | None],
        given: list[int | None] | None,
        reading: Reading | None = None,
    ) -> None:
        """Each admitted entry's tail with the ledger's lastmod, in place."""
        places = [i for i, item in enumerate(admitted) if item is not None]
        items: list[Admitted] = [admitted[i] for i in places]  # type: ignore[misc]
        locs = [item[0] for item in items]
        digests = None if given is None else [given[i] for i in places]
        tails, _ = self.stamp(
            section,
            locs,
            [t for _, t, _ in items],
            [e for *_, e in items],
            digests,
            reading,
            places,
        )
        for place, (loc, _, extended), tail in zip(places, items, tails, strict=True):
            admitted[place] = (loc, tail, extended)

    # The rule per URL, inline in the batch's loop (a call per URL costs every entry);
    # what needs no record (lastmod texts, keys, digests) is read first, by batch.
    def stamp(
        self,
        section: str,
        locs: Sequence[str],
        tails: Sequence[str],
        extended: Sequence[SitemapEntry | None],
        digests: Sequence[int | None] | None,
        reading: Reading | None = None,
        positions: Sequence[int] | None = None,
    ) -> tuple[list[str], str | None]:
        """The tails to write, and the newest lastmod text among them (``reading``: the
        stream's pass, see :class:`Reading`; ``positions``: each loc's place in the raw
        batch, None: one for one)."""
        records = self._records.setdefault(section, {})
        cuts, texts, givens, keys, digests = self._read(section, locs, tails, extended, digests)
        places = range(len(locs)) if positions is None else positions
        repeated = self.repeated.get(section, {})
        examples = self._held.setdefault(section, {})
        token = self._tokens.get(section, 0)
        pending = self.pending.setdefault(section, {}) if self.wake is not None else None
        now, room = int(self.clock()), self.ledger.max_urls
        moved: list[tuple[str, str, str]] = []
        out = list(tails)
        newest, newest_text = -1, None  # (a stamp's seconds are never negative)
        for i, digest in enumerate(digests):
            given = givens[i]
            if digest is None or given < 0:  # no digest, or before 1970: as given
                continue
            key, text = keys[i], texts[i]
            record = records.get(key)
            repeat = False
            if reading is not None:
                first = reading.first(key, places[i], repeated)
                if first is not None and record is not None:
                    digest, text = record >> 40, ""  # a repeat: the first listing's record
                    repeat = True
            if record is None:
                if self._count >= room:
                    continue
                self._count += 1
                stamp = _given(given, text) if text else now << 2
            elif record >> 40 == digest:
                stamp = record & _STAMP
                if text and given > stamp >> 2:  # the lastmod moved on, the content did not
                    self._hold(section, key, locs[i], text, moved)
                elif record & _TOLD and not repeat:  # held no more
                    records[key] = record & ~_TOLD
                    examples.pop(key, None)
            else:
                stamp = _changed(record, given, text, now)
            if record is None or record >> 40 != digest:
                examples.pop(key, None)
                new = digest << 40 | stamp
                records[key] = new
                token ^= _mix(key, new) ^ (_mix(key, record) if record is not None else 0)
                if pending is not None:
                    pending[key] = new
            if text and given == stamp >> 2:
                written = text
            else:
                written = _text(stamp)
                out[i] = f"<lastmod>{written}</lastmod>{tails[i][cuts[i] + 10 :]}"
            if stamp >> 2 > newest:
                newest, newest_text = stamp >> 2, written
        self._settle(section, token, bool(pending), moved)
        return out, newest_text

    def _hold(
        self, section: str, key: int, loc: str, text: str, moved: list[tuple[str, str, str]]
    ) -> None:
        """``loc`` says ``text``, later than its record while its content is the same: the
        record's time is held, told once (``moved``), and kept as an example."""
        records, examples = self._records[section], self._held.setdefault(section, {})
        record = records[key]
        written = _text(record & _STAMP)
        if not record & _TOLD:
            records[key] = record | _TOLD
            moved.append((loc, text, written))
        if len(examples) < HELD_EXAMPLES or key in examples:
            examples[key] = (loc, text, written)

    def _read(
        self,
        section: str,
        locs: Sequence[str],
        tails: Sequence[str],
        extended: Sequence[SitemapEntry | None],
        digests: Sequence[int | None] | None,
    ) -> tuple[list[int], list[str], list[int], list[int], Sequence[int | None]]:
        """What a batch's rule needs no record for: where each tail's lastmod ends, its
        text and seconds (see :func:`_givens`), each URL's key and its digest."""
        cuts = [t.index("<", 9) if t.startswith("<lastmod>") else -10 for t in tails]
        texts = [t[9:cut] if cut > 0 else "" for t, cut in zip(tails, cuts, strict=True)]
        givens = _givens(texts)
        keys = [url_key(loc) for loc in locs]
        if self.bodies is not None:
            digests = self._fetched(section, locs, keys, givens)
        elif digests is None:
            digests = _by_fields(tails, cuts, extended)
        return cuts, texts, givens, keys, digests

    def _fetched(
        self, section: str, locs: Sequence[str], keys: list[int], givens: list[int]
    ) -> list[int | None]:
        """``source="guard"``: each URL's digest, its page's; with no 200 since, its
        record's; None: not fetched yet, written as given (and awaited)."""
        bodies = self.bodies
        assert bodies is not None  # (called only then)
        awaiting = self._awaiting.setdefault(section, set())
        fresh = self._fresh.get(section, {})
        records = self._records.get(section, {})
        out: list[int | None] = []
        for loc, key, given in zip(locs, keys, givens, strict=True):
            digest = bodies(loc)
            if given >= 0:  # (before 1970: written as given, no record)
                fresh.pop(key, None)
                if digest is not None:
                    awaiting.discard(key)
                elif (record := records.get(key)) is not None:
                    digest = record >> 40
                elif len(awaiting) < self.ledger.max_urls:
                    awaiting.add(key)
            out.append(digest)
        return out

    def _settle(
        self, section: str, token: int, saving: bool, moved: list[tuple[str, str, str]]
    ) -> None:
        """After a batch: its section's token, the store woken, moved lastmods told."""
        self._tokens[section] = token
        if saving and self.wake is not None:
            self.wake()
        if moved and self.told is not None:
            self.told(section, moved)

    # -- versions and a fleet --------------------------------------------------------

    def token(self, section: str) -> str:
        """What a section's version must name (its records, and the page digests that
        arrived since its last stamp; ``""``: none yet)."""
        token = self._tokens.get(section, 0)
        fresh = 0
        for key, digest in self._fresh.get(section, {}).items():
            fresh ^= _mix(key, digest << 40)
        named = f"ledger>{token:016x}" if token else ""
        return f"{named}+{fresh:016x}" if fresh else named

    def arrived(self, loc: str, digest: int) -> None:
        """The guard fetched ``loc`` with a new body digest: each section that writes it
        otherwise (as given, or by another digest) names it in its version until its
        next stamp."""
        key = url_key(loc)
        for section, records in self._records.items():
            record = records.get(key)
            if key in self._awaiting.get(section, ()):
                used = -1
            elif record is not None:
                used = record >> 40
            else:
                continue
            fresh = self._fresh.setdefault(section, {})
            if digest != used:
                fresh[key] = digest
            else:
                fresh.pop(key, None)  # back to what is written

    def held(self, section: str) -> tuple[int, list[tuple[str, str, str]]]:
        """How many URLs of ``section`` have a lastmod held (their provider's moved, their
        content did not, as last read), and up to HELD_EXAMPLES of them: (loc, what the
        provider said, what is written)."""
        count = sum(1 for record in self._records.get(section, {}).values() if record & _TOLD)
        return count, list(self._held.get(section, {}).values())

    async def ready(self, section: str, again: bool) -> None:
        """Read a shared store's records of ``section`` (``again``: even if read before)."""
        if self.loader is not None:
            await self.loader(section, again)

    def adopt(self, section: str, stored: Mapping[int, int]) -> None:
        """Take a fleet's records (the store's word wins), recomputing the token."""
        records = self._records.setdefault(section, {})
        for key, record in stored.items():
            if (record & _STAMP) >> 2 > _LAST:
                continue  # not a record (foreign bytes): the year would have five digits
            if key not in records:
                if self._count >= self.ledger.max_urls:
                    continue
                self._count += 1
            records[key] = record & ~_TOLD | (records.get(key, 0) & _TOLD)
        token = 0
        for key, record in records.items():
            token ^= _mix(key, record)
        self._tokens[section] = token

    def take_pending(self) -> list[tuple[str, dict[int, int]]]:
        """The records to save, by section (and forget them)."""
        taken = [(section, found) for section, found in self.pending.items() if found]
        self.pending = {}
        return taken

    def urls(self) -> int:
        """Records kept (what tests and the benchmark count)."""
        return self._count
