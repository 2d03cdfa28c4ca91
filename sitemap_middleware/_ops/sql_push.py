"""Push on commit: a SQLAlchemy model's inserts, updates and deletes sent to IndexNow.

:func:`notify_on_commit` listens to ORM session events: ``after_flush`` works out the URL
of every new, changed or deleted instance of the model (before a delete's row is gone)
and keeps it in the session's ``info``, under the transaction it was written in (a
savepoint's own); ``after_commit`` hands what the transaction collected to the push queue
(``_ops/push_queue.py``, shared with Django's ``notify_on_change``); a rollback drops what
the transaction (or savepoint) rolled back collected, and a transaction that ends without
a commit (a ``close()``) drops the rest. The queue's daemon thread batches and
POSTs, so the committing code never touches the network and nothing is raised into it.
An ``AsyncSession`` runs its ORM work on a sync ``Session``, whose events fire: pass the
``AsyncSession`` or its ``async_sessionmaker`` and the sync side is listened to.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

from .._exceptions import ConfigurationError, InvalidEntryError
from .._logs import logger
from .._providers.columns import RowEntries
from .._sansio.urls import BaseURL
from .indexnow import IndexNowNotifier
from .push_queue import PushHook, push_base

__all__ = ["SQLAlchemyPush", "notify_on_commit"]

Location = Callable[[Any], str | None] | str


class SQLAlchemyPush(PushHook):
    """A model connected to IndexNow by :func:`notify_on_commit`; keep it to disconnect."""

    def __init__(
        self,
        target: Any,
        model: type[Any],
        notifier: IndexNowNotifier,
        location: Location,
        base: BaseURL,
        delay: float,
        max_pending: int,
    ) -> None:
        from sqlalchemy import event

        url_of = _location_function(model, location)
        super().__init__(model, notifier, model.__name__, url_of, base, delay, max_pending)
        self.target = target
        self._key = f"sitemap_middleware.push.{id(self)}"
        self._hooks: list[tuple[str, Callable[..., None]]] = [
            ("after_flush", self._flushed),
            ("after_commit", self._committed),
            ("after_soft_rollback", self._rolled_back),
            ("after_transaction_end", self._ended),
        ]
        for name, hook in self._hooks:
            event.listen(target, name, hook)

    def _flushed(self, session: Any, flush_context: Any) -> None:
        # after_flush: new, dirty and deleted still hold what this flush wrote.
        try:
            changed = [*session.new, *session.dirty, *session.deleted]
            urls = [
                url
                for instance in changed
                if isinstance(instance, self.model) and (url := self._url(instance)) is not None
            ]
            if urls:
                # Under the savepoint written in, if any: rolling it back drops them only.
                transaction = session.get_nested_transaction() or session.get_transaction()
                collected = session.info.setdefault(self._key, {})
                collected.setdefault(transaction, {}).update(dict.fromkeys(urls))
        except Exception:  # never into the flushing code
            logger.exception("IndexNow push for %s: a flush's URLs not collected", self._name)

    def _committed(self, session: Any) -> None:
        if session.in_nested_transaction():
            return  # a savepoint released (after_commit fires): the outer one may roll back
        try:
            for urls in session.info.pop(self._key, {}).values():
                for url in urls:
                    self._batcher.put(url)
        except Exception:
            logger.exception("IndexNow push for %s: a commit's URLs not queued", self._name)

    def _rolled_back(self, session: Any, previous_transaction: Any) -> None:
        # Fires for a savepoint's rollback too (as after_rollback does): drop what that
        # transaction and the savepoints inside it collected, not the enclosing ones'.
        collected = session.info.get(self._key)
        for transaction in list(collected or ()):
            ancestor = transaction
            while ancestor is not None and ancestor is not previous_transaction:
                ancestor = ancestor.parent
            if ancestor is not None:
                del collected[transaction]

    def _ended(self, session: Any, transaction: Any) -> None:
        if transaction.parent is None:  # the outermost, without a commit (a close())
            session.info.pop(self._key, None)

    def disconnect(self) -> None:
        """Stop listening to the sessions (what is queued is still sent)."""
        from sqlalchemy import event

        for name, hook in self._hooks:
            if event.contains(self.target, name, hook):
                event.remove(self.target, name, hook)


def _location_function(model: type[Any], location: object) -> Callable[[Any], Any]:
    if callable(location):
        return location
    if not isinstance(location, str) or "{" not in location:
        raise ConfigurationError(
            f"location {location!r} names no attribute: write '/posts/{{slug}}/' "
            "(or pass a function of the instance)"
        )
    # Parsed, formatted and encoded by the sitemap's own template code (None costs the URL).
    fields = list(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(location) if f))
    for name in fields:
        if not hasattr(model, name):
            raise ConfigurationError(
                f"location template {location!r}: {model.__name__} has no attribute {name!r}"
            )
    rows = RowEntries(fields, location, key=fields[0], lastmod=None, changefreq=None, priority=None)

    def url(instance: Any) -> Any:
        (entry,) = rows.entries({name: [getattr(instance, name)] for name in fields})
        if isinstance(entry, InvalidEntryError):
            raise entry
        return entry["loc"]

    return url


def _listened(target: Any) -> Any:
    """What to listen to: an AsyncSession's sync session, an async_sessionmaker's class."""
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
    from sqlalchemy.orm import Session, scoped_session, sessionmaker

    if isinstance(target, AsyncSession):
        return target.sync_session
    if isinstance(target, async_sessionmaker):
        # Its sessions share one sync class: a subclass of its own keeps others unheard.
        sync_class = target.kw.get("sync_session_class") or Session
        own = type(f"Pushed{sync_class.__name__}", (sync_class,), {})
        target.configure(sync_session_class=own)
        return own
    if isinstance(target, Session | sessionmaker | scoped_session) or (
        isinstance(target, type) and issubclass(target, Session)
    ):
        return target
    raise ConfigurationError(
        "notify_on_commit() takes a Session, a sessionmaker, a Session subclass, an "
        f"AsyncSession or an async_sessionmaker, got {target!r}"
    )


def notify_on_commit(
    target: Any,
    notifier: IndexNowNotifier,
    *,
    model: type[Any],
    location: Location,
    base_url: str | None = None,
    delay: float = 1.0,
    max_pending: int = 10_000,
) -> SQLAlchemyPush:
    """Push ``model``'s URLs to IndexNow when a transaction that wrote them commits.

    :param target: what to listen to: a ``Session`` (that session only), a
        ``sessionmaker`` or ``Session`` subclass (every session it makes), an
        ``AsyncSession`` or an ``async_sessionmaker`` (their sync sessions).
    :param notifier: an :class:`~sitemap_middleware.ops.IndexNowNotifier`, usually
        ``IndexNowNotifier.for_config(config)``; its ``batch_size`` caps each POST. The
        POSTs run on the queue thread's own event loop: leave its ``client`` unset.
    :param model: a mapped class: its inserted, updated and deleted instances are pushed.
    :param location: the instance's URL: a function of the instance (``None`` skips it)
        or a template of attribute names (``"/posts/{slug}/"``, encoded as the sitemap's
        templates). Paths are joined to ``base_url`` as the sitemap joins them.
    :param base_url: the site's base URL; by default the directory of the notifier's key
        file, else ``https://<host>/``.
    :param delay: seconds to collect a burst before sending it.
    :param max_pending: URLs queued at most; past it new ones are dropped and logged.

    Returns a :class:`SQLAlchemyPush`: ``flush()``, ``disconnect()``, ``close()``.
    """
    if not isinstance(model, type):
        raise ConfigurationError(f"model must be a mapped class, got {model!r}")
    base = push_base(notifier, base_url, delay, max_pending)
    return SQLAlchemyPush(
        _listened(target), model, notifier, location, base, float(delay), max_pending
    )
