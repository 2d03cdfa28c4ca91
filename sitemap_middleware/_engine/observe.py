"""Observing what is served: one :class:`ServedDocument` per reply, to the log and to hooks.

This module alone decides what a served-document record holds and when it is emitted:
once per reply, when its body ends (fully sent, aborted or closed because the client
left) or at once for replies without a body (304, HEAD, errors). With no observer
configured and INFO disabled on the ``sitemap_middleware`` logger, replies pass through
untouched: observing costs nothing unless someone listens.
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Literal, Protocol, runtime_checkable

from .._logs import logger
from .._sansio.routing import Kind, Target

__all__ = ["CacheStatus", "DocumentObserver", "Observers", "ServedDocument", "tell_observers"]

#: How the render store answered; ``None`` when no stored render was involved.
CacheStatus = Literal["hit", "miss", "stale", "coalesced"]
LOG_SERVED = "served %s %d: %d urls, %d bytes, %.1f ms, cache=%s"
LOG_OBSERVER_FAILED = "sitemap observer %r failed: %s: %s"
#: Each written entry opens with exactly one of these (``<`` inside text is escaped as
#: ``&lt;``), so counting them counts entries without touching the writers. An HTML
#: view's rows open with the last (its header row's cells are ``scope="col"``).
_MARKERS = (b"<url>", b"<sitemap>", b'<tr><th scope="row"')


@dataclass(frozen=True, slots=True)
class ServedDocument:
    """One document served: what, how it went, how much, how long.

    :param status: HTTP status sent.
    :param method: ``GET`` or ``HEAD`` (anything else got a 405).
    :param document: the file name requested (``sitemap-products-2.xml.gz``, ``robots.txt``).
    :param kind: ``root``, ``index``, ``page``, ``robots``, ``stylesheet``, ``indexnow_key``,
        or ``html_index`` and ``html_page`` for the HTML views.
    :param section: the section of a page, else ``None``.
    :param page: the page number of a page, else ``None``.
    :param urls: ``<url>`` (or ``<sitemap>``, text lines, an HTML view's rows) written; 0
        without a body.
    :param bytes: body bytes sent, after content-coding.
    :param duration: seconds from the request to the last byte (the render time).
    :param cache: render-store outcome, ``None`` when no stored render was involved.
    :param encoding: ``gzip`` or ``identity``.
    :param completed: ``False`` when the body was aborted or the client went away.
    """

    status: int
    method: str
    document: str
    kind: str
    section: str | None
    page: int | None
    urls: int = 0
    bytes: int = 0
    duration: float = 0.0
    cache: CacheStatus | None = None
    encoding: str = "identity"
    completed: bool = True


@runtime_checkable
class DocumentObserver(Protocol):
    """A hook called once per served document (metrics exporters implement it).

    Called from whichever thread finishes the reply: the serving loop, the WSGI portal's,
    or (a stored page answered at once) a WSGI request thread; keep it quick,
    non-blocking and thread-safe (as ``prometheus_client`` metrics and ``logging`` are).
    Exceptions are logged and never reach the request.

    An observer may also define ``entries_excluded(section, reason, count)``: items a
    section left out on purpose (``"provider"``: SKIP; ``"pattern"``; ``"robots"``;
    ``"guard"``), called once per content by the planning pass;
    and ``urls_probed(section, outcome, count)``: the guard's verdicts (``"quarantined"``,
    ``"indexable"``, ``"unanswered"``, ``"shared"``), from its background task.
    """

    def document_served(self, event: ServedDocument) -> None: ...


class Observers:
    """The configured observers plus the INFO log record; wraps replies to report them."""

    def __init__(self, observers: Sequence[DocumentObserver]) -> None:
        self._observers = tuple(observers)

    @property
    def active(self) -> bool:
        return bool(self._observers) or logger.isEnabledFor(logging.INFO)

    def start(self) -> float:
        return time.perf_counter()

    def watch(
        self,
        target: Target,
        method: str,
        path: str,
        status: int,
        headers: Sequence[tuple[str, str]],
        body: AsyncIterator[bytes] | None,
        started: float,
        cache: CacheStatus | None = None,
    ) -> AsyncIterator[bytes] | None:
        """Report this reply now (no body) or when its body ends; returns the body to send."""
        if not self.active:
            return body
        names = {name.lower(): value for name, value in headers}
        encoding = names.get("content-encoding", "identity")
        event = ServedDocument(
            status=status,
            method=method,
            document=path.rsplit("/", 1)[-1],
            kind=("html_" if target.format == "html" else "") + target.kind.value.replace("-", "_"),
            section=target.section if target.kind is Kind.PAGE else None,
            page=target.page if target.kind is Kind.PAGE else None,
            cache=cache,
            encoding=encoding,
        )
        if body is None:
            self._emit(replace(event, duration=time.perf_counter() - started))
            return None
        counted = status == 200 and target.is_sitemap
        gzipped = encoding == "gzip" or target.gzip_file
        return self._watched(body, event, started, counted, target.format == "txt", gzipped)

    async def _watched(
        self,
        body: AsyncIterator[bytes],
        event: ServedDocument,
        started: float,
        counted: bool,
        text: bool,
        gzipped: bool,
    ) -> AsyncIterator[bytes]:
        counter = _EntryCounter(text, gzipped) if counted else None
        size = 0
        completed = False
        try:
            async for chunk in body:
                size += len(chunk)
                if counter is not None:
                    counter.feed(chunk)
                yield chunk
            completed = True
        finally:
            await body.aclose()  # type: ignore[attr-defined]
            self._emit(
                replace(
                    event,
                    urls=counter.count if counter is not None else 0,
                    bytes=size,
                    duration=time.perf_counter() - started,
                    completed=completed,
                )
            )

    def _emit(self, event: ServedDocument) -> None:
        # A body cut short is a client hanging up (normal: DEBUG, issue #12) or an abort
        # a provider failure has already logged at ERROR; a complete one is INFO.
        logger.log(
            logging.INFO if event.completed else logging.DEBUG,
            LOG_SERVED,
            event.document,
            event.status,
            event.urls,
            event.bytes,
            event.duration * 1000,
            event.cache or "-",
            extra={"sitemap": asdict(event)},
        )
        tell_observers(self._observers, "document_served", event)


def tell_observers(observers: Iterable[object], hook: str, *args: object) -> None:
    """Call ``hook`` of each observer that has it; one that raises is logged (WARNING)
    and the rest are still told: a metrics bug must never break serving."""
    for observer in observers:
        method = getattr(observer, hook, None)
        if method is None:
            continue
        try:
            method(*args)
        except Exception as exc:
            logger.warning(LOG_OBSERVER_FAILED, observer, type(exc).__name__, exc)


class _EntryCounter:
    """Counts entries in a rendered body as it streams (decompressing gzip when needed)."""

    def __init__(self, text: bool, gzipped: bool) -> None:
        self.count = 0
        self._text = text
        self._inflate = zlib.decompressobj(47) if gzipped else None  # 47: gzip or zlib
        self._tails = dict.fromkeys(_MARKERS, b"")

    def feed(self, chunk: bytes) -> None:
        if self._inflate is not None:
            chunk = self._inflate.decompress(chunk)
        if self._text:
            self.count += chunk.count(b"\n")
            return
        for marker, tail in self._tails.items():
            # A marker split across chunks stays countable, and none counts twice: the
            # kept tail is one byte shorter than the marker, so it cannot hold a whole one.
            data = tail + chunk
            self.count += data.count(marker)
            self._tails[marker] = data[1 - len(marker) :]
