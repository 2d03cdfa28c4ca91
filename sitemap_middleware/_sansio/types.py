"""Type aliases shared across the package."""

from __future__ import annotations

from typing import Literal

__all__ = ["CHANGEFREQS", "ChangeFreq", "Encoding"]

ChangeFreq = Literal["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]

#: The seven values sitemaps.org 0.9 allows for ``<changefreq>``.
CHANGEFREQS: frozenset[str] = frozenset(
    ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
)

#: Content codings we produce; negotiation picks one per request.
Encoding = Literal["gzip", "identity"]
