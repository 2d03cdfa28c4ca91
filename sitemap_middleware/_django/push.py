"""Push on publish: a model's saves and deletes sent to IndexNow, batched, in the background.

:func:`notify_on_change` connects ``post_save`` and ``post_delete``. The receiver works
out the object's URL at once (after a delete the row is gone) and hands it over with
``transaction.on_commit``, so a rolled-back save sends nothing. A batcher (one daemon
thread per connection, started by the first URL, so each worker of a pre-fork server
starts its own) waits ``delay`` seconds to coalesce a burst, then POSTs up to the
notifier's ``batch_size`` URLs at a time on its own event loop. The saving thread never
touches the network and nothing is raised into it: a URL that cannot be made, a full
queue, an endpoint failure are logged.
"""

from __future__ import annotations

import atexit
import itertools
import logging
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
from .._ops.indexnow import IndexNowNotifier
from .._providers.columns import RowEntries
from .._sansio.urls import BaseURL, normalize_loc
from .sitemaps import written_location

__all__ = ["IndexNowPush", "notify_on_change"]

logger = logging.getLogger("sitemap_middleware")

#: How long, in all, the interpreter's exit waits for pending pushes.
EXIT_TIMEOUT = 5.0
_batchers: weakref.WeakSet[_Batcher] = weakref.WeakSet()


class _Batcher:
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


class IndexNowPush:
    """A model connected to IndexNow by :func:`notify_on_change`; keep it to disconnect."""

    def __init__(
        self,
        model: type[Any],
        notifier: IndexNowNotifier,
        location: Callable[[Any], str | None] | str | None,
        base: BaseURL,
        delay: float,
        max_pending: int,
    ) -> None:
        self.model, self.notifier = model, notifier
        self._base = base
        self._name = model._meta.label
        self._url_of = _location_function(model, location)
        self._batcher = _Batcher(notifier, delay, max_pending, self._name)
        from django.db.models.signals import post_delete, post_save

        uid = f"sitemap_middleware.push.{id(self)}"
        post_save.connect(self._saved, sender=model, weak=False, dispatch_uid=uid)
        post_delete.connect(self._deleted, sender=model, weak=False, dispatch_uid=uid)
        self._uid = uid

    @property
    def dropped(self) -> int:
        """URLs left out because the queue was full."""
        return self._batcher.dropped

    def _saved(self, sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
        if not raw:  # loaddata: fixtures are not publications
            self._changed(instance, kwargs.get("using"))

    def _deleted(self, sender: Any, instance: Any, **kwargs: Any) -> None:
        self._changed(instance, kwargs.get("using"))

    def _changed(self, instance: Any, using: str | None) -> None:
        try:
            url = self._url(instance)
            if url is not None:
                from django.db import transaction

                transaction.on_commit(lambda: self._queue(url), using=using)
        except Exception:  # never into the saving code
            logger.exception("IndexNow push for %s: %r not queued", self._name, instance)

    def _queue(self, url: str) -> None:
        """The commit hook: it runs in the committing code, so nothing may escape it."""
        try:
            self._batcher.put(url)
        except Exception:
            logger.exception("IndexNow push for %s: %s not queued", self._name, url)

    def _url(self, instance: Any) -> str | None:
        try:
            value = self._url_of(instance)
            if value is None:
                return None
            url = self._base.locate(normalize_loc(written_location(value)))
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
        """Stop listening to the model's saves and deletes (what is queued is still sent)."""
        from django.db.models.signals import post_delete, post_save

        post_save.disconnect(sender=self.model, dispatch_uid=self._uid)
        post_delete.disconnect(sender=self.model, dispatch_uid=self._uid)

    def close(self, timeout: float | None = None) -> bool:
        """Disconnect, send what is queued and stop the thread; ``False`` on a timeout."""
        self.disconnect()
        return self._batcher.close(timeout)


def _location_function(
    model: type[Any], location: Callable[[Any], str | None] | str | None
) -> Callable[[Any], Any]:
    if callable(location):
        return location
    if location is None:
        if not callable(getattr(model, "get_absolute_url", None)):
            raise ConfigurationError(
                f"{model._meta.label} has no get_absolute_url(): pass location= (a template "
                "of field names such as '/tags/{code}/', or a function of the object)"
            )
        return lambda instance: instance.get_absolute_url()
    if not isinstance(location, str) or "{" not in location:
        raise ConfigurationError(
            f"location template {location!r} names no field: write '/tags/{{slug}}/' "
            "(or pass a function of the object)"
        )
    # Parsed, formatted and encoded by the sitemap's own template code (a NULL costs the URL).
    import string

    fields = list(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(location) if f))
    rows = RowEntries(fields, location, key=fields[0], lastmod=None, changefreq=None, priority=None)
    from django.core.exceptions import FieldDoesNotExist

    for name in fields:
        head, *rest = name.split("__")
        try:
            model._meta.get_field(head)
        except FieldDoesNotExist:
            if rest or not hasattr(model, head):
                raise ConfigurationError(
                    f"location template {location!r}: {model._meta.label} has no field {head!r}"
                ) from None

    def read(instance: Any, name: str) -> Any:
        for part in name.split("__"):
            if instance is None:
                return None
            instance = getattr(instance, part)
        return instance

    def url(instance: Any) -> Any:
        (entry,) = rows.entries({name: [read(instance, name)] for name in fields})
        if isinstance(entry, InvalidEntryError):
            raise entry
        return entry["loc"]

    return url


def notify_on_change(
    model: type[Any],
    notifier: IndexNowNotifier,
    *,
    location: Callable[[Any], str | None] | str | None = None,
    base_url: str | None = None,
    delay: float = 1.0,
    max_pending: int = 10_000,
) -> IndexNowPush:
    """Push ``model``'s URL to IndexNow whenever an object is saved or deleted.

    :param model: a Django model class.
    :param notifier: an :class:`~sitemap_middleware.IndexNowNotifier`, usually
        ``IndexNowNotifier.for_config(config)``; its ``batch_size`` caps each POST. The
        POSTs run on the batcher thread's own event loop: leave its ``client`` unset.
    :param location: the object's URL: a function of the object (returning ``None`` skips
        it), a template of field names (``"/tags/{code}/"``, lookups such as
        ``{category__slug}``, encoded as the sitemap's templates), or by default
        ``get_absolute_url()``. Paths are joined to ``base_url`` as the sitemap joins them.
    :param base_url: the site's base URL; by default the directory of the notifier's key
        file (``for_config`` puts it at the sitemap's base), else ``https://<host>/``.
    :param delay: seconds to collect a burst before sending it.
    :param max_pending: URLs queued at most; past it new ones are dropped and logged.

    Returns an :class:`IndexNowPush`: ``flush()``, ``disconnect()``, ``close()``. Connect
    once per process (in ``AppConfig.ready()`` or ``wsgi.py``/``asgi.py``).
    """
    from django.db.models import Model

    if not (isinstance(model, type) and issubclass(model, Model)):
        raise ConfigurationError(f"model must be a Django model class, got {model!r}")
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
    return IndexNowPush(model, notifier, location, base, delay, max_pending)
