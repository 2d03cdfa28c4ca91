"""Push on publish: a model's saves and deletes sent to IndexNow, batched, in the background.

:func:`notify_on_change` connects ``post_save`` and ``post_delete``. The receiver works
out the object's URL at once (after a delete the row is gone) and hands it over with
``transaction.on_commit``, so a rolled-back save sends nothing. A batcher (one daemon
thread per connection, started by the first URL, so each worker of a pre-fork server
starts its own) waits ``delay`` seconds to coalesce a burst, then POSTs up to the
notifier's ``batch_size`` URLs at a time on its own event loop (``_ops/push_queue.py``,
shared with SQLAlchemy's ``notify_on_commit``). The saving thread never
touches the network and nothing is raised into it: a URL that cannot be made, a full
queue, an endpoint failure are logged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._exceptions import ConfigurationError, InvalidEntryError
from .._logs import logger
from .._ops.indexnow import IndexNowNotifier
from .._ops.push_queue import PushHook, push_base
from .._providers.columns import RowEntries
from .._sansio.urls import BaseURL
from .sitemaps import written_location

__all__ = ["IndexNowPush", "notify_on_change"]


class IndexNowPush(PushHook):
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
        url_of = _location_function(model, location)
        super().__init__(model, notifier, model._meta.label, url_of, base, delay, max_pending)
        from django.db.models.signals import post_delete, post_save

        uid = f"sitemap_middleware.push.{id(self)}"
        post_save.connect(self._saved, sender=model, weak=False, dispatch_uid=uid)
        post_delete.connect(self._deleted, sender=model, weak=False, dispatch_uid=uid)
        self._uid = uid

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

    def _written(self, value: Any) -> object:
        return written_location(value)  # a str as Django writes it; anything else refused

    def disconnect(self) -> None:
        """Stop listening to the model's saves and deletes (what is queued is still sent)."""
        from django.db.models.signals import post_delete, post_save

        post_save.disconnect(sender=self.model, dispatch_uid=self._uid)
        post_delete.disconnect(sender=self.model, dispatch_uid=self._uid)


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
    :param notifier: an :class:`~sitemap_middleware.ops.IndexNowNotifier`, usually
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
    base = push_base(notifier, base_url, delay, max_pending)
    return IndexNowPush(model, notifier, location, base, delay, max_pending)
