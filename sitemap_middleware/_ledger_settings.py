"""The content ledger's settings (:class:`Ledger`); the book is ``_sansio/ledger.py``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ._exceptions import ConfigurationError
from ._sansio.models import SitemapEntry
from ._settings import check_int

__all__ = ["Ledger"]

#: An entry's own fields: not a digest key (it would be taken out of every item).
_ENTRY_FIELDS = frozenset(f.name for f in fields(SitemapEntry))


@dataclass(frozen=True, slots=True)
class Ledger:
    """Honest per-URL ``<lastmod>``: each URL's content digest and the first time it was seen.

    ``<lastmod>`` then moves exactly when a URL's content does: an entry without a
    lastmod is written with the time its content was first seen; an entry whose lastmod
    moved while its content did not is written with the ledger's (older) time, and
    counted (observers' ``lastmods_held``, an INFO line once per content). Records live
    in ``Renders.store`` when it is shared (Redis: one hash per section), else in
    process.

    :param source: ``"fields"``: the digest of what the sitemap writes about the URL
        besides its loc and lastmod (changefreq, priority, images, videos, news,
        alternates); ``"digest"``: a digest the provider gives with each item (see
        ``digest``); ``"guard"``: the page itself, as the guard fetches it (needs
        ``SitemapConfig(guard=Guard(...))``): the bytes of its body when it answers 200,
        read whole (up to 16 MiB) once per ``Guard.ttl``. Until a URL's page has been
        fetched it is written as its provider gives it; its first body starts its
        record at the provider's lastmod, or the time it was fetched.
    :param digest: with ``source="digest"``: the key of a mapping item (taken out of it
        before the item is admitted) or the attribute of any other item, or a function
        of the item; a ``str``, ``bytes`` or ``int`` (``None``: the item is written as
        given, outside the ledger).
    :param max_urls: records kept in process at most; URLs beyond are written as given.
    :param sections: the sections whose URLs the ledger dates (``None``: every section);
        the others are written as their providers give them, at no cost.
    """

    source: str = "fields"
    digest: str | Callable[[Any], object] = "digest"
    max_urls: int = 1_000_000
    sections: Sequence[str] | None = None

    def __post_init__(self) -> None:
        if self.source not in ("fields", "digest", "guard"):
            raise ConfigurationError(
                f"Ledger.source must be 'fields', 'digest' or 'guard', got {self.source!r}"
            )
        if not (callable(self.digest) or (isinstance(self.digest, str) and self.digest)):
            raise ConfigurationError(
                f"Ledger.digest must be a key name or a function, got {self.digest!r}"
            )
        if self.digest in _ENTRY_FIELDS:
            raise ConfigurationError(
                f"Ledger.digest {self.digest!r} is an entry field: it would be taken out of"
                " each item (name a key of its own, or pass a function)"
            )
        check_int("Ledger", "max_urls", self.max_urls, 1, 100_000_000)
        names = self.sections
        if names is not None:
            if isinstance(names, str) or not all(isinstance(n, str) for n in names):
                raise ConfigurationError(f"Ledger.sections must be section names, got {names!r}")
            object.__setattr__(self, "sections", tuple(names))
