"""The ETag recipe: this module alone says what goes into an entity tag.

Tags are deterministic (no process or machine state), so every instance of an app
answers the same tag for the same content (RFC 9110 §8.8.3):

- a document whose providers report a version: hash of the configuration fingerprint,
  the base URL, the document name and each section's (name, count, version token,
  version time); a 304 then never touches entries;
- bytes already in hand (robots.txt, the stylesheet, a rendered document): hash of a
  kind and the bytes;
- each representation gets its own strong tag (gzip and identity bytes differ).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from .types import Encoding


class Version(Protocol):
    """What a tag reads of a provider's version (``ProviderVersion``)."""

    @property
    def token(self) -> str | None: ...

    @property
    def last_modified(self) -> datetime | None: ...


__all__ = [
    "content_etag",
    "digest_etag",
    "document_etag",
    "make_etag",
    "representation_etag",
    "version_parts",
]


def make_etag(*parts: str) -> str:
    """A deterministic opaque tag from strings."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def content_etag(kind: str, data: bytes, *context: str) -> str:
    """The tag of bytes already rendered, e.g. ``content_etag("robots", body)``."""
    return digest_etag(kind, hashlib.sha256(data).hexdigest(), *context)


def digest_etag(kind: str, sha256: str, *context: str) -> str:
    """:func:`content_etag` of bytes whose SHA-256 (hex) is ``sha256``: for bytes hashed
    as they stream (a render tagged by its bytes, ``Renders(etag="content")``)."""
    return make_etag(kind, *context, sha256)


def version_parts(version: Version | None) -> tuple[str, str] | None:
    """A provider version as tag input (token, last-modified), or None when it cannot
    vouch for the content.

    Only a token can: a time alone stays put through a rename or a deletion, so a tag
    made from it would keep answering 304, or serve a stored render, for other content.
    """
    if version is None or not version.token:
        return None
    modified = version.last_modified.isoformat() if version.last_modified else ""
    return version.token or "", modified


def document_etag(
    fingerprint: str, prefix: str, name: str, sections: Sequence[Sequence[str] | None]
) -> str | None:
    """The tag of a document built from sections; None if any section cannot vouch."""
    parts = [fingerprint, prefix, name]
    for section in sections:
        if section is None:
            return None
        parts += section
    return make_etag(*parts)


def representation_etag(tag: str, encoding: Encoding, gzip_file: bool = False) -> str:
    """A distinct strong tag per representation: gzip and identity bytes differ."""
    if gzip_file:
        return f"{tag}-gzfile"
    return tag if encoding == "identity" else f"{tag}-gzip"
