"""Exceptions raised by sitemap_middleware.

Hierarchy::

    SitemapError
    ├── ConfigurationError      (also ValueError) bad settings, raised at setup
    ├── ExportPathError         (also ValueError) ``export`` cannot write a document there
    ├── InvalidEntryError       (also ValueError) an entry field failed validation
    ├── ProviderError           a provider raised; wraps the original as __cause__
    │   └── ProviderTimeoutError  a provider call took longer than provider_timeout
    ├── SitemapParseError       (also ValueError) ``parse_sitemap`` cannot read a document
    └── SitemapLimitError       a page would break the 50,000-URL / 50 MiB protocol limits

Public from ``sitemap_middleware``, except ``ExportPathError`` and ``SitemapParseError``
(``sitemap_middleware.ops``, beside what raises them).
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "ExportPathError",
    "InvalidEntryError",
    "ProviderError",
    "ProviderTimeoutError",
    "SitemapError",
    "SitemapLimitError",
    "SitemapParseError",
]


class SitemapError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigurationError(SitemapError, ValueError):
    """A setting passed to the package is invalid; the message names it and its value."""


class ExportPathError(SitemapError, ValueError):
    """A path ``export`` would write or delete is not a file strictly inside its directory.

    Raised before anything is written: a document at ``/``, a path with ``..`` or through
    a symbolic link out of the directory, one that is an existing directory, or one whose
    parent is an existing file. (A manifest naming such a path is ignored with a warning.)
    """


class InvalidEntryError(SitemapError, ValueError):
    """An entry field is invalid.

    ``field`` names the offending field (``"loc"``, ``"priority"``, ``"video.duration"``...)
    and ``value`` holds what was given.
    """

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        shown = repr(value)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        super().__init__(f"invalid {field} {shown}: {reason}")


class ProviderError(SitemapError):
    """A provider failed while the middleware asked it for entries or metadata."""

    def __init__(self, section: str, message: str) -> None:
        self.section = section
        super().__init__(f"section {section!r}: {message}")


class ProviderTimeoutError(ProviderError):
    """A provider call did not finish within ``SitemapConfig.provider_timeout`` seconds."""


class SitemapLimitError(SitemapError):
    """Writing a page would exceed the protocol's per-file limits."""


class SitemapParseError(SitemapError, ValueError):
    """A sitemap given to ``parse_sitemap`` cannot be read.

    Not well-formed XML, a DTD or entity declaration (refused outright: no expansion, no
    external entity), an unknown root element, broken gzip, a text sitemap that is not
    UTF-8, or (``strict=True``) an invalid record. ``line`` is where, when known.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.line = line
        super().__init__(message)
