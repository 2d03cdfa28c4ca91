"""Coalescing: concurrent requests for one document share one provider pass.

This module alone owns sharing a body between requests. A :class:`Flight` is one render
of one document; every request that asks for it while it runs reads the same chunks:

- whichever reader needs a chunk not produced yet pulls it from the source (under a lock,
  shielded from that reader's cancellation; readers needing it meanwhile wait for that
  chunk together), so there is no leader to lose: a request that disconnects, first or
  not, only stops reading, and the others drive on;
- chunks are kept while the body is at most ``max_bytes`` (so latecomers can join from
  the first byte, and the complete body can be stored); past that the flight closes to
  new readers and drops chunks every reader has passed. A reader that falls more than
  ``max_bytes`` behind the one producing is cut loose (its body raises
  :class:`LaggingReaderError`, so its response is aborted and the client may ask again):
  one client that stops reading (a zero TCP window) must never stall the others, and
  memory stays bounded;
- the source is closed when its last reader leaves early; a failure after the first
  byte reaches every reader (each aborts its own response);
- ``on_complete`` receives the whole body (its chunks as sent) only when the source ended
  normally and the body was kept whole: nothing incomplete is ever handed on for storing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from .._exceptions import SitemapError
from .._logs import logger
from .answer import HTTPError

__all__ = ["Flight", "Flights", "LaggingReaderError"]

LOG_STORE_FAILED = "sitemap %s: could not hand the finished render on: %s: %s"
LOG_CUT_LOOSE = (
    "sitemap %s: %d reader(s) fell more than %d bytes behind a shared render: "
    "their responses are aborted so the others go on"
)


class LaggingReaderError(SitemapError):
    """A reader fell ``max_bytes`` behind the others of a shared render: its response is
    aborted (the client may ask again) so that it never holds the others up."""


Opener = Callable[[], Awaitable[AsyncIterator[bytes]]]
OnComplete = Callable[[list[bytes]], Awaitable[None]]
OnEnd = Callable[[], Awaitable[None]]


class Flight:
    """One render of one document, read by every request that joins it."""

    def __init__(
        self,
        label: str,
        opener: Opener,
        *,
        max_bytes: int,
        on_complete: OnComplete | None = None,
        on_end: OnEnd | None = None,
    ) -> None:
        self.label = label
        self._opener = opener
        self._max_bytes = max_bytes
        self._on_complete = on_complete
        self._on_end = on_end
        self._lock = anyio.Lock()
        self._source: AsyncIterator[bytes] | None = None
        self._opened = False
        self._open_error: HTTPError | None = None
        self._chunks: list[bytes] = []
        self._first = 0  # index of _chunks[0] in the whole body
        self._held = 0  # bytes in _chunks
        self._whole = True  # no chunk dropped yet
        self._done = False
        self._failure: BaseException | None = None
        self._readers: dict[int, int] = {}  # reader id -> next chunk index
        self._next_reader = 0
        self._cut: set[int] = set()  # readers cut loose for lagging
        self._produced = anyio.Event()  # set (and replaced) whenever a pull ends
        #: The chunk under way: the reader pulling it, and the scope it is pulled in.
        self._pulling: tuple[int, anyio.CancelScope] | None = None
        self._ended = False
        #: Provider passes this flight made (0 or 1; 2 if restarted): for tests and benchmarks.
        self.passes = 0

    @property
    def joinable(self) -> bool:
        """Whether a new request can still read this flight from its first byte."""
        return self._whole and not self._ended and self._failure is None

    async def open(self) -> AsyncIterator[bytes]:
        """Join: the body for one request. Raises the render's HTTPError (404, 503...)."""
        reader = self._next_reader
        self._next_reader += 1
        self._readers[reader] = 0
        if self._pulling is not None:  # a lone reader's chunk: now another's too
            self._pulling[1].shield = True
        try:
            if not self._opened:
                async with self._lock:
                    if not self._opened:
                        await self._open_source()
            if self._open_error is not None:
                error = self._open_error
                raise HTTPError(error.status, error.message, error.headers)
            if self._failure is not None:
                raise self._failure
        except BaseException:
            await self.leave(reader)
            raise
        return _Reader(self, reader)

    async def _open_source(self) -> None:
        # Shielded: the requests waiting on this render must not lose it because the
        # one that happened to start it went away.
        with anyio.CancelScope(shield=True):
            try:
                self.passes += 1
                self._source = await self._opener()
            except HTTPError as exc:
                self._open_error = exc
                await self._end()
            except Exception as exc:  # every reader gets it; the render lock is released
                self._failure = exc
                await self._end()
            finally:
                self._opened = True

    async def _next(self, reader: int) -> bytes:
        """The next chunk for ``reader``; StopAsyncIteration at the end."""
        while True:
            index = self._readers.get(reader)
            if index is None:
                if reader in self._cut:
                    raise LaggingReaderError(
                        f"{self.label}: this reader fell more than {self._max_bytes} bytes "
                        "behind the others of a shared render"
                    )
                raise StopAsyncIteration  # closed
            if index < self._first + len(self._chunks):
                self._readers[reader] = index + 1
                return self._chunks[index - self._first]
            if self._failure is not None:
                raise self._failure
            if self._done:
                raise StopAsyncIteration
            if self._lock.locked():
                # Another reader is producing: wait for its chunk, not in line for the
                # lock (one wake-up for every waiting reader, not one hand-off each).
                await self._produced.wait()
                continue
            await self._pull(reader, index)

    async def _pull(self, reader: int, index: int) -> None:
        async with self._lock:
            try:
                await self._produce(reader, index)
            finally:
                self._produced.set()
                self._produced = anyio.Event()

    async def _produce(self, reader: int, index: int) -> None:
        if index < self._first + len(self._chunks) or self._done or self._failure:
            return  # another reader produced it meanwhile
        while not self._whole and self._held > self._max_bytes:
            self._trim()
            if self._held <= self._max_bytes:
                break
            self._cut_slowest()  # never wait for a reader that may never read again
        if not self._opened:  # restarted (see _stopped)
            await self._open_source()
            if self._open_error is not None:
                self._failure = self._open_error
            if self._failure is not None:
                return  # (every reader gets it: see _next)
        source = self._source
        if source is None:  # ended under a reader: never pass a cut body off as whole
            raise RuntimeError(f"{self.label}: the shared render ended early")
        # Shielded only while another reader shares the render: a lone reader that hangs
        # up stops the provider at its next await (one batch), not at the end of the chunk.
        scope = anyio.CancelScope(shield=len(self._readers) > 1)
        self._pulling = (reader, scope)
        try:
            with scope:
                try:
                    chunk = await anext(source)
                except StopAsyncIteration:
                    with anyio.CancelScope(shield=True):
                        self._done = True
                        await self._complete()
                    return
                except anyio.get_cancelled_exc_class():
                    await self._stopped(reader, source)
                    raise
                except BaseException as exc:
                    with anyio.CancelScope(shield=True):
                        self._failure = exc
                        await self._end()
                    return
        finally:
            self._pulling = None
        self._chunks.append(chunk)
        self._held += len(chunk)
        if self._whole and self._held > self._max_bytes:
            self._whole = False  # too big to store or to join from the start
        if not self._whole:
            self._trim()

    async def _stopped(self, puller: int, source: AsyncIterator[bytes]) -> None:
        """The lone reader was cancelled mid-chunk: the source is unusable from here on.

        A request may have joined after that cancellation was delivered (shielding then
        comes too late): if no other reader has a byte yet, the render starts again."""
        with anyio.CancelScope(shield=True):
            self._source = None
            others = [index for reader, index in self._readers.items() if reader != puller]
            if others and self._whole and not any(others):  # opened again by the next pull
                self._opened, self._chunks, self._held = False, [], 0
            else:
                self._failure = RuntimeError(
                    f"{self.label}: the render stopped with its only reader"
                )
            await source.aclose()  # type: ignore[attr-defined]
            if self._failure is not None:
                await self._end()

    def _cut_slowest(self) -> None:
        slowest = min(self._readers.values())
        lagging = [reader for reader, index in self._readers.items() if index == slowest]
        for reader in lagging:
            del self._readers[reader]
            self._cut.add(reader)
        logger.warning(LOG_CUT_LOOSE, self.label, len(lagging), self._max_bytes)

    def _trim(self) -> None:
        slowest = min(self._readers.values(), default=self._first + len(self._chunks))
        while self._chunks and self._first < slowest:
            self._held -= len(self._chunks.pop(0))
            self._first += 1

    async def _complete(self) -> None:
        # Stored before the flight leaves the registry: a request arriving meanwhile
        # joins this flight (its chunks are all here) rather than rendering again.
        if self._whole and self._on_complete is not None:
            try:
                await self._on_complete(list(self._chunks))
            except Exception as exc:  # storing is a bonus; the readers have their bytes
                logger.warning(LOG_STORE_FAILED, self.label, type(exc).__name__, exc)
        await self._end()

    async def leave(self, reader: int) -> None:
        """A reader is done (finished, closed or disconnected)."""
        self._readers.pop(reader, None)
        self._cut.discard(reader)
        if self._pulling is not None and self._readers.keys() == {self._pulling[0]}:
            self._pulling[1].shield = False  # the chunk is the lone puller's again
        if self._readers or self._done or self._ended:
            return
        # The last reader left early: nobody wants the rest of this render.
        self._ended = True
        source, self._source = self._source, None
        with anyio.CancelScope(shield=True):
            if source is not None:
                await source.aclose()  # type: ignore[attr-defined]
            await self._end()

    async def _end(self) -> None:
        """Run ``on_end`` once: the flight leaves the registry, locks are released."""
        on_end, self._on_end = self._on_end, None
        self._ended = True
        if on_end is not None:
            await on_end()


class _Reader:
    """One request's body: an async iterator whose ``aclose`` always leaves the flight.

    (A plain async generator that was never started skips its ``finally`` on
    ``aclose``, and a HEAD request opens bodies it never reads.)
    """

    __slots__ = ("_flight", "_reader")

    def __init__(self, flight: Flight, reader: int) -> None:
        self._flight = flight
        self._reader = reader

    def __aiter__(self) -> _Reader:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._flight._next(self._reader)
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        await self._flight.leave(self._reader)


class Flights:
    """The flights running in this process, by document key."""

    def __init__(self) -> None:
        self._running: dict[str, Flight] = {}

    def get(self, key: str) -> Flight | None:
        """The running flight ``key`` names, if a new reader can still join it."""
        flight = self._running.get(key)
        return flight if flight is not None and flight.joinable else None

    def start(
        self,
        key: str,
        label: str,
        opener: Opener,
        *,
        max_bytes: int,
        on_complete: OnComplete | None = None,
        on_end: OnEnd | None = None,
    ) -> Flight:
        """Register a new flight for ``key`` (replacing one that can no longer be joined)."""

        async def ended() -> None:
            if self._running.get(key) is flight:
                del self._running[key]
            if on_end is not None:
                await on_end()

        flight = Flight(label, opener, max_bytes=max_bytes, on_complete=on_complete, on_end=ended)
        self._running[key] = flight
        return flight

    def join(self, key: str, label: str, opener: Opener, **kwargs: Any) -> Flight:
        """The joinable flight for ``key``, or a new one."""
        return self.get(key) or self.start(key, label, opener, **kwargs)

    def __len__(self) -> int:
        return len(self._running)
