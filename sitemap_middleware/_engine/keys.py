"""The one key recipe of the render store: what makes two requests the same document.

A key holds everything that shapes a document's bytes and is not in its request path:

- the configuration's fingerprint (settings that shape output, the package version);
- each section's provider identity (:func:`provider_identity`), hashed, so two
  deployments sharing a Redis with the same base URL and section names but other
  providers never share renders (the fingerprint holds no provider);
- the base URL the request was answered under (hosts, mounts);
- the target (kind, format, section, page, key range);
- an HTML view's own settings (title, file names): they shape the view's bytes but are
  not in the fingerprint (switching the views on changes no XML ETag), so deployments
  with other view settings never answer with each other's view.

Stored renders, their stamps and render locks are all keyed here; so are the names a site
keeps of its own (``ranges:<section>``, the stamp key-range pages share).
"""

from __future__ import annotations

import hashlib

from .._config import SitemapConfig
from .._providers.base import provider_identity
from .._sansio.routing import Target
from .._sansio.urls import BaseURL

__all__ = ["DocumentKeys"]


class DocumentKeys:
    """The store keys of one configuration's documents (its providers hashed once)."""

    def __init__(self, config: SitemapConfig) -> None:
        identities = "\x1f".join(
            f"{s.name}={provider_identity(s.provider)}" for s in config.resolved_sections
        )
        digest = hashlib.sha256(identities.encode("utf-8", "surrogatepass")).hexdigest()
        self._site = f"{config.fingerprint}|{digest}"
        view = config.html_view
        self._view = f"|html={view.fingerprint}" if view is not None else ""

    def key(self, target: Target | str, base: BaseURL) -> str:
        """The key of ``target`` served under ``base``: a document, or a name of the
        site's own (``ranges:<section>``)."""
        if isinstance(target, str):
            return f"{self._site}|{base.prefix}|{target}"
        view = self._view if target.format == "html" else ""
        return f"{self._site}|{base.prefix}|{target!r}{view}"
