"""The push queue shared by the ORM hooks (Django's ``notify_on_change``, SQLAlchemy's
``notify_on_commit``): URLs in, IndexNow POSTs out, on a daemon thread.

A :class:`Batcher` keeps a bounded, de-duplicated queue; its thread (started by the
first URL, so each worker of a pre-fork server starts its own) waits ``delay`` seconds
to coalesce a burst, then POSTs up to the notifier's ``batch_size`` URLs at a time on its
own event loop. Nothing is raised into the code that queues: a full queue and an
endpoint failure are logged. Pending URLs are flushed at interpreter exit (at most
``EXIT_TIMEOUT`` seconds); a forked child starts with an empty queue.
"""

from __future__ import annotations

import atexit
import itertools
import math
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anyio

from .._exceptions import ConfigurationError, InvalidEntryError
from .._logs import logger
from .._sansio.urls import BaseURL, normalize_loc, quote_unsafe
from .indexnow import IndexNowNotifier

__all__ = ["EXIT_TIMEOUT", "Batcher", "PushHook", "push_base"]

#: How long, in all, the interpreter's exit waits for pending pushes.
EXIT_TIMEOUT = 5.0
_batchers: weakref.WeakSet[Batcher] = weakref.WeakSet()


class Batcher:
    """URLs in, POSTs out: a bounded, de-duplicated queue and the thread that drains it."""

    def __init__(self, notifier: IndexNowNotifier, delay: float, limit: int, name: str) -> None:
        self._notifier, self._delay, self._limit, self._name = notifier, delay, limit, name
        self.dropped = 0
        self._reset()
        _batchers.add(self)

    def _reset(self) -> None:
        """A fresh state (also in a forked child: the parent's thread is not there)."""
        self._cond = threading.Condition()
        self._pending: dict[str, None] = {}
        self._accepted = 0  # URLs taken in, each counted once
        self._done = 0  # URLs whose POST has ended, sent or not
        self._hurry = self._closed = self._full = False
        self._thread: threading.Thread | None = None

    def put(self, url: str) -> None:
        with self._cond:
            if self._closed or url in self._pending:
                return
            if len(self._pending) >= self._limit:
                self.dropped += 1
                if not self._full:  # once per episode: a flood must not flood the log
                    self._full = True
                    logger.warning(
                        "IndexNow push for %s: the queue is full (%d URLs); dropping %s and "
                        "others until it drains",
                        self._name,
                        self._limit,
                        url,
                    )
                return
            if self._thread is None:
                thread = threading.Thread(
                    target=self._run, name=f"sitemap-indexnow-{self._name}", daemon=True
                )
                try:  # refused at interpreter shutdown, or by a process out of threads
                    thread.start()
                except RuntimeError as exc:
                    self.dropped += 1
                    logger.warning("IndexNow push for %s: %s not sent: %s", self._name, url, exc)
                    return
                self._thread = thread
            self._pending[url] = None
            self._accepted += 1
            self._cond.notify_all()

    def _take(self) -> list[str] | None:
        """The next batch, once ``delay`` has passed, the batch is full, or a flush hurries."""
        size = self._notifier.batch_size
        with self._cond:
            while not self._pending and not self._closed:
                self._cond.wait()
            if not self._pending:
                return None  # closed and drained
            deadline = time.monotonic() + self._delay
            while len(self._pending) < size and not (self._hurry or self._closed):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            batch = list(itertools.islice(self._pending, size))
            for url in batch:
                del self._pending[url]
            if not self._pending:
                self._hurry = self._full = False
            return batch

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            try:
                result = anyio.run(self._notifier.notify, batch)
                if result.ok:
                    logger.debug("IndexNow push for %s: %d URLs sent", self._name, len(batch))
            except Exception:  # notify() reports endpoint failures; this is anything else
                logger.exception("IndexNow push for %s: %d URLs not sent", self._name, len(batch))
            finally:
                with self._cond:
                    self._done += len(batch)
                    if self._done >= self._accepted:  # a flush is over: bursts wait again
                        self._hurry = False
                    self._cond.notify_all()

    def flush(self, timeout: float | None) -> bool:
        """Send what is queued now; True once every URL queued before the call is done."""
        with self._cond:
            target = self._accepted
            if self._done < target:
                self._hurry = True
                self._cond.notify_all()
            return self._cond.wait_for(lambda: self._done >= target, timeout)

    def close(self, timeout: float | None) -> bool:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()


def _exit_flush() -> None:
    deadline = time.monotonic() + EXIT_TIMEOUT
    for batcher in list(_batchers):
        if not batcher.flush(max(0.0, deadline - time.monotonic())):
            logger.warning("IndexNow push for %s: exiting with URLs not sent", batcher._name)


def _after_fork_in_child() -> None:
    for batcher in list(_batchers):  # the parent sends its own queue
        batcher._reset()


# Before the interpreter stops its thread pools (asyncio resolves host names in one):
# threading's own exit hook, which concurrent.futures uses; else plain atexit.
getattr(threading, "_register_atexit", atexit.register)(_exit_flush)
os.register_at_fork(after_in_child=_after_fork_in_child)


def push_base(
    notifier: object, base_url: str | None, delay: object, max_pending: object
) -> BaseURL:
    """Check a hook's arguments; the base URL its relative locations are joined to."""
    if not isinstance(notifier, IndexNowNotifier):
        raise ConfigurationError(f"notifier must be an IndexNowNotifier, got {notifier!r}")
    if not (isinstance(delay, int | float) and math.isfinite(delay) and delay >= 0):
        raise ConfigurationError(f"delay must be a number of seconds >= 0, got {delay!r}")
    if not (isinstance(max_pending, int) and max_pending >= 1):
        raise ConfigurationError(f"max_pending must be an integer >= 1, got {max_pending!r}")
    if base_url is None:
        key_file = notifier.key_location
        base_url = key_file.rsplit("/", 1)[0] + "/" if key_file else f"https://{notifier.host}/"
    try:
        base = BaseURL.parse(base_url)
    except InvalidEntryError as exc:
        raise ConfigurationError(f"base_url: {exc}") from None
    if urlsplit(base.origin).netloc.lower() != notifier.host.lower():
        raise ConfigurationError(
            f"base_url {base_url!r} is not on the notifier's host {notifier.host!r}"
        )
    return base


class PushHook:
    """What the ORM hooks share: a model's URLs, located as the sitemaps locate them, on a
    :class:`Batcher`. Subclasses connect to their ORM's events and say how to stop."""

    def __init__(
        self,
        model: type[Any],
        notifier: IndexNowNotifier,
        name: str,
        url_of: Callable[[Any], Any],
        base: BaseURL,
        delay: float,
        max_pending: int,
    ) -> None:
        self.model, self.notifier = model, notifier
        self._base, self._name, self._url_of = base, name, url_of
        self._batcher = Batcher(notifier, delay, max_pending, name)

    @property
    def dropped(self) -> int:
        """URLs left out because the queue was full."""
        return self._batcher.dropped

    def _written(self, value: Any) -> object:
        """A location as the sitemaps write it (percent-encoded where it must be)."""
        return quote_unsafe(value)

    def _url(self, instance: Any) -> str | None:
        try:
            value = self._url_of(instance)
            if value is None:
                return None
            url = self._base.locate(normalize_loc(self._written(value)))
            self.notifier._checked([url])  # on the notifier's host
            return url
        except (InvalidEntryError, ValueError) as exc:
            problem = str(exc)
        except Exception as exc:
            problem = f"location raised {type(exc).__name__}: {exc}"
        logger.warning(
            "IndexNow push for %s: %r has no URL to push: %s", self._name, instance, problem
        )
        return None

    def flush(self, timeout: float | None = None) -> bool:
        """Send what is queued now, without the delay; ``True`` once it is sent (or failed,
        logged), ``False`` if ``timeout`` seconds passed first. For tests and shutdown."""
        return self._batcher.flush(timeout)

    def disconnect(self) -> None:
        """Stop listening (what is queued is still sent)."""
        raise NotImplementedError

    def close(self, timeout: float | None = None) -> bool:
        """Disconnect, send what is queued and stop the thread; ``False`` on a timeout."""
        self.disconnect()
        return self._batcher.close(timeout)
