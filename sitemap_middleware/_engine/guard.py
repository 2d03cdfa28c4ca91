"""The guard's background probes: URLs without a fresh verdict, probed off the request path.

The exclusion step notes every admitted URL (``GuardBook.note``); when some have no fresh
verdict, one background task (asyncio) takes them in batches: the verdicts a fleet
already keeps in a shared store (``ValueStore``) are adopted, the rest are probed
through the wrapped app (the adapter's ``probe``: an in-process GET, no redirect
followed), ``concurrency`` at a time and at most ``max_probes_per_minute``, read by
``_sansio/indexable.py`` (what ``check --app`` reads) and saved for ``Guard.ttl``. A
section whose quarantine changed gets a new token (``GuardBook.token``), so its next
plan and ETag differ. No response waits for any of it.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import anyio

from .._caches.store import RenderStore, ValueStore
from .._guard_settings import Guard
from .._logs import logger
from .._sansio.guard import GuardBook, Verdict
from .._sansio.indexable import HEAD_BYTES, url_problems
from .background import BackgroundTask
from .store_calls import StoreCalls

if TYPE_CHECKING:
    from .._config import SitemapConfig

__all__ = [
    "PROBE_AGENT",
    "PROBE_TIMEOUT",
    "BodyDigest",
    "GuardRunner",
    "Probe",
    "ProbeAnswer",
    "guard_runner",
]

#: URLs taken from the book at a time: one store read, one store write.
BATCH = 100
#: The User-Agent of a probe (the app may tell probes from visitors).
PROBE_AGENT = "sitemap-middleware-guard"
#: Seconds an adapter's sub-request may last: ``Guard.timeout`` bounds each probe first.
PROBE_TIMEOUT = 3600.0
#: Prefix of the guard's keys in a ValueStore.
KEY = "guard|"
LOG_QUARANTINED = "sitemap guard: section %r: %s %s: %s"
LOG_CLEARED = "sitemap guard: section %r: %s is an indexable page again"


#: A probe digests a page's whole body up to this size (the content ledger's content);
#: a longer one gets no digest (its URL keeps the last it had, or is written as given).
BODY_BYTES = 16 * 1024 * 1024


class BodyDigest:
    """BLAKE2b (8 bytes, as an int) of a whole body as it streams, up to BODY_BYTES."""

    __slots__ = ("_hash", "size")

    def __init__(self) -> None:
        self._hash = hashlib.blake2b(digest_size=8)
        self.size = 0

    def update(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size <= BODY_BYTES:
            self._hash.update(chunk)

    @property
    def full(self) -> bool:
        """Past BODY_BYTES: no digest (reading on would be for nothing)."""
        return self.size > BODY_BYTES

    def value(self) -> int | None:
        return None if self.full else int.from_bytes(self._hash.digest(), "big")


@dataclass(frozen=True, slots=True)
class ProbeAnswer:
    """A probe's answer: status (``None``: none, ``problem`` says why), headers, the
    first bytes of the body, and the adapter's digest of the whole body (``None``: none
    taken, :func:`judge` digests ``body`` if that is whole; or the body was too long)."""

    status: int | None
    headers: Sequence[tuple[str, str]] = ()
    body: bytes = b""
    problem: str = ""
    digest: int | None = None

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)


#: How an adapter asks its wrapped app for one URL.
Probe = Callable[[str], Awaitable[ProbeAnswer]]


def judge(url: str, answer: ProbeAnswer, now: float, guard: Guard) -> Verdict:
    """The verdict on ``url`` from its answer (read as ``check --app`` reads it)."""
    if answer.status is None:
        return Verdict(f"got no answer ({answer.problem})", now, now + guard.retry, True)
    problems = url_problems(url, answer.status, answer.header, answer.body)
    # The page's content as served (a 200's bytes): what the ledger's guard source dates.
    digest = answer.digest if answer.status == 200 else None
    if answer.status == 200 and digest is None and len(answer.body) <= HEAD_BYTES:
        whole = BodyDigest()
        whole.update(answer.body)
        digest = whole.value()
    if not problems:
        return Verdict("", now, now + guard.ttl, digest=digest)
    said = "; ".join(p.said for p in problems)
    if any(p.transient for p in problems):
        return Verdict(said, now, now + guard.retry, True)
    return Verdict(said, now, now + guard.ttl, digest=digest)


class GuardRunner:
    """One instance's prober: a background task while URLs wait (asyncio only)."""

    def __init__(
        self,
        guard: Guard,
        book: GuardBook,
        store: RenderStore,
        calls: StoreCalls,
        observers: Sequence[object],
    ) -> None:
        self.guard = guard
        self.book = book
        self._values = store if store.shared and isinstance(store, ValueStore) else None
        self._calls = calls
        self._observers = observers
        #: Set by the adapter: how to ask the wrapped app (None: nothing is probed).
        self.probe: Probe | None = None
        #: Probes made by this instance (what tests count).
        self.probes = 0
        self._background = BackgroundTask(self._run)
        self._next_start = 0.0
        book.wake = self.wake

    def wake(self) -> None:
        """Start the background task unless it runs (called as URLs start waiting)."""
        if self.probe is not None:
            self._background.wake()

    def sweep(self) -> None:
        """Probe again, in the background, URLs whose verdict expired (see GuardBook)."""
        if self.probe is not None:
            self.book.sweep(time.time())

    def pace_at(self, per_minute: int | None) -> None:
        """Start probes at most ``per_minute`` a minute from now on (``None``: unpaced),
        whatever ``Guard.max_probes_per_minute`` says (``check --app``'s own pace)."""
        self.guard = replace(self.guard, max_probes_per_minute=per_minute)
        self._next_start = 0.0

    async def settled(self) -> None:
        """Wait until no URL waits for a probe (tests, ``explain``)."""
        await self._background.settled()

    async def recall(self, urls: Sequence[str]) -> None:
        """Read the fleet's stored verdicts on ``urls`` (what ``explain`` tells), probing none."""
        if self._values is None or not urls:
            return
        found = await self._calls.guard(
            "reading guard verdicts", self._values.values([KEY + url for url in urls])
        )
        for url, raw in zip(urls, found or (), strict=False):
            verdict = self._stored(raw, time.time())
            if verdict is not None:
                self.book.recall(url, verdict)

    def _stored(self, raw: bytes | None, now: float) -> Verdict | None:
        """A verdict read from the shared store, held ``ttl`` from now at most (one saved
        by an instance whose clock runs ahead would otherwise hold for as long)."""
        verdict = Verdict.from_bytes(raw) if raw is not None else None
        if verdict is None:
            return None
        return verdict._replace(until=min(verdict.until, now + self.guard.ttl))

    async def aclose(self) -> None:
        await self._background.stop(cancel=True)

    async def _run(self) -> None:
        await asyncio.sleep(0)  # the response that noted these URLs goes first
        try:
            while batch := self.book.take(BATCH):
                try:
                    await self._settle(batch)
                finally:
                    self.book.landed([url for url, _ in batch])
        except Exception:
            logger.exception("sitemap guard: probing failed")

    async def _settle(self, batch: list[tuple[str, str]]) -> None:
        now = time.time()
        verdicts: dict[str, Verdict] = {}
        if self._values is not None:
            keys = [KEY + url for url, _ in batch]
            found = await self._calls.guard("reading guard verdicts", self._values.values(keys))
            for (url, _), raw in zip(batch, found or (), strict=False):
                verdict = self._stored(raw, now)
                if verdict is not None and verdict.until > now:
                    verdicts[url] = verdict
        shared = set(verdicts)
        limiter = anyio.CapacityLimiter(self.guard.concurrency)
        async with anyio.create_task_group() as group:
            for url, _ in batch:
                if url not in verdicts:
                    group.start_soon(self._probe_one, url, limiter, verdicts)
        kept = {
            KEY + url: v.to_bytes()
            for url, v in verdicts.items()
            if url not in shared and not v.transient
        }
        if self._values is not None and kept:
            await self._calls.guard(
                "saving guard verdicts", self._values.save_values(kept, self.guard.ttl)
            )
        outcomes: Counter[tuple[str, str]] = Counter()
        for url, section in batch:
            verdict = verdicts[url]
            outcome = "quarantined" if verdict.quarantined else "indexable"
            outcome = "unanswered" if verdict.transient else outcome
            outcomes[section, "shared" if url in shared else outcome] += 1
            if self.book.settle(url, section, verdict):
                self._log(section, url, verdict)
        self._count(outcomes)

    async def _probe_one(
        self, url: str, limiter: anyio.CapacityLimiter, verdicts: dict[str, Verdict]
    ) -> None:
        async with limiter:
            await self._pace()
            probe = self.probe
            assert probe is not None
            answer = ProbeAnswer(None, problem=f"none within {self.guard.timeout:g} s")
            with anyio.move_on_after(self.guard.timeout):
                try:
                    answer = await probe(url)
                except Exception as exc:  # the app's failure is the probe's answer
                    answer = ProbeAnswer(None, problem=f"{type(exc).__name__}: {exc}")
            self.probes += 1
            verdicts[url] = judge(url, answer, time.time(), self.guard)

    async def _pace(self) -> None:
        """Start probes at most ``max_probes_per_minute`` a minute (evenly spaced)."""
        per_minute = self.guard.max_probes_per_minute
        if per_minute is None:
            return
        now = anyio.current_time()
        start = max(now, self._next_start)
        self._next_start = start + 60.0 / per_minute
        if start > now:
            await anyio.sleep(start - now)

    def _log(self, section: str, url: str, verdict: Verdict) -> None:
        if verdict.quarantined:
            done = "left out" if self.book.excludes else "reported"
            logger.warning(LOG_QUARANTINED, section, done, url, verdict.words())
        else:
            logger.info(LOG_CLEARED, section, url)

    def _count(self, outcomes: Counter[tuple[str, str]]) -> None:
        for observer in self._observers:
            hook: Any = getattr(observer, "urls_probed", None)
            if hook is None:
                continue
            for (section, outcome), number in outcomes.items():
                try:
                    hook(section, outcome, number)
                except Exception:
                    logger.exception("sitemap observer %r failed", observer)


def guard_runner(
    config: SitemapConfig, store: RenderStore, calls: StoreCalls
) -> GuardRunner | None:
    """The configuration's guard runner, or None without ``SitemapConfig(guard=...)``."""
    if config.guard is None or config.guard_book is None:
        return None
    return GuardRunner(config.guard, config.guard_book, store, calls, config.observers)
