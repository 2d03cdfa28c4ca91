"""Small helpers of ``_config.py``: what of a setting shapes output, page-like names."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Protocol

from ._exceptions import ConfigurationError
from ._feed_settings import DocumentNames
from ._providers.i18n import Languages
from ._sansio.routing import Routes, match
from ._sansio.urls import BaseURL

__all__ = [
    "INDEXNOW_KEY",
    "Names",
    "check_explain_path",
    "check_names",
    "languages_key",
    "page_like",
]

_FILE_NAME = re.compile(r"[A-Za-z0-9_.-]+")
#: IndexNow keys: 8 to 128 characters of a-z, A-Z, 0-9 and '-' (indexnow.org).
INDEXNOW_KEY = re.compile(r"[A-Za-z0-9-]{8,128}")


def languages_key(languages: Languages | None) -> tuple[object, ...] | None:
    """What of a section's Languages shapes output, stable across processes."""
    if languages is None:
        return None
    url = languages.url
    pattern = url if isinstance(url, str) or url is None else f"{url.__module__}.{url.__qualname__}"
    sites = tuple(base.prefix for base in languages.bases.values())
    return (languages.codes, pattern, languages.x_default, *((sites,) if sites else ()))


def page_like(prefix: str, name: str) -> bool:
    """Whether a file name would also match the page pattern ``<prefix><section>-<n>.xml``."""
    if not name.startswith(prefix):
        return False
    stem = name[len(prefix) : -len(".xml")]
    section, _, number = stem.rpartition("-")
    return bool(section) and number.isascii() and number.isdigit()


class Names(DocumentNames, Protocol):
    """What :func:`check_names` reads of a ``SitemapConfig`` (the config imports this
    module, never the other way round)."""

    @property
    def observers(self) -> Sequence[object]: ...
    @property
    def base(self) -> BaseURL: ...


def check_names(self: Names) -> None:
    """File names, the IndexNow key, observers and the base path, checked."""
    for name in ("sitemap_name", "index_name"):
        value = getattr(self, name)
        if not (isinstance(value, str) and _FILE_NAME.fullmatch(value) and value.endswith(".xml")):
            raise ConfigurationError(
                f"SitemapConfig.{name} must be a file name ending in .xml, got {value!r}"
            )
    if not (isinstance(self.page_prefix, str) and _FILE_NAME.fullmatch(self.page_prefix)):
        raise ConfigurationError(
            f"SitemapConfig.page_prefix must be a file-name prefix, got {self.page_prefix!r}"
        )
    if self.sitemap_name == self.index_name:
        raise ConfigurationError(
            f"SitemapConfig.sitemap_name and index_name must differ, both are {self.sitemap_name!r}"
        )
    for name in ("sitemap_name", "index_name"):
        value = getattr(self, name)
        if page_like(self.page_prefix, value):
            raise ConfigurationError(
                f"SitemapConfig.{name} {value!r} has the form of a page name "
                f"({self.page_prefix}<section>-<n>.xml); choose another name or page_prefix"
            )
    if self.indexnow_key is not None and not (
        isinstance(self.indexnow_key, str) and INDEXNOW_KEY.fullmatch(self.indexnow_key)
    ):
        raise ConfigurationError(
            "indexnow_key must be 8 to 128 characters of a-z, A-Z, 0-9 and '-', "
            f"got {self.indexnow_key!r}"
        )
    if isinstance(self.observers, str) or not all(
        callable(getattr(observer, "document_served", None)) for observer in self.observers
    ):
        raise ConfigurationError(
            "observers must be a sequence of objects with a document_served(event) "
            f"method, got {self.observers!r}"
        )
    if not self.base.directory.isascii():
        raise ConfigurationError(  # pragma: no cover - BaseURL percent-encodes paths
            f"base_url path must be ASCII once encoded, got {self.base.directory!r}"
        )


def check_explain_path(path: str | None, routes: Routes) -> None:
    """The explain endpoint's path: absolute, printable ASCII without a query, and the
    path of no other document (``routes``: the config's)."""
    if path is None:
        return
    if not (
        isinstance(path, str)
        and path.startswith("/")
        and path.isascii()
        and path.isprintable()
        and not any(c in path for c in " ?#")
    ):
        raise ConfigurationError(
            f"SitemapConfig.explain_path must be an absolute ASCII path (no query), got {path!r}"
        )
    taken = match(path, dataclasses.replace(routes, explain_path=None))
    if taken is not None:
        raise ConfigurationError(
            f"SitemapConfig.explain_path {path!r} is the path of another document "
            f"({taken.kind.value}); choose another"
        )
