"""URL normalisation: IRIs to URIs, and the sitemap location rule.

sitemaps.org requires every ``<loc>`` to be an absolute URI (non-ASCII hosts in IDNA,
non-ASCII path and query percent-encoded as UTF-8) of at most 2,048 characters, on the
sitemap's own scheme, host and port, under the sitemap file's directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from .._exceptions import InvalidEntryError

__all__ = ["MAX_URL_LENGTH", "BaseURL", "canonical_url_match", "normalize_loc"]

#: sitemaps.org: "must be less than 2,048 characters".
MAX_URL_LENGTH = 2048

_DEFAULT_PORTS = {"http": 80, "https": 443}
# A URL already in canonical form: lower-case http(s) origin without a port, a path,
# then only characters RFC 3986 allows unescaped and well-formed %-escapes. Most
# provider URLs take this path, which skips urlsplit/quote entirely.
_CANONICAL = re.compile(
    r"https?://[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?/[A-Za-z0-9\-._~!$&'()*+,;=:@/?#%]*"
)
#: Matches an absolute URL that normalize_loc keeps as is, if it has no "%" (escapes need
#: the _BARE_PERCENT check too). A bound method, so the hot path calls C directly.
canonical_url_match = _CANONICAL.fullmatch
_CANONICAL_PATH = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#]|%[0-9A-Fa-f]{2})*")
_BARE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Characters RFC 3986 allows as-is in a path / a query or fragment.
_PATH_SAFE = "/%!$&'()*+,;=:@-._~"
_QUERY_SAFE = _PATH_SAFE + "?"
_HOST_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?|[a-z0-9]")


def _quote(part: str, safe: str, field: str, value: str) -> str:
    try:
        return quote(_BARE_PERCENT.sub("%25", part), safe=safe)
    except UnicodeEncodeError:
        # Lone surrogates cannot be UTF-8 encoded, so they cannot be percent-encoded.
        reason = "contains characters that are not valid Unicode"
        raise InvalidEntryError(field, value, reason) from None


def _idna_host(host: str, field: str, value: str) -> str:
    if host.isascii():
        host = host.lower()
    else:
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise InvalidEntryError(field, value, "host is not a valid IDNA name") from None
    labels = host.rstrip(".").split(".")
    if not host or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        raise InvalidEntryError(field, value, "host is not a valid DNS name")
    return host


def _split_absolute(value: str, field: str) -> tuple[str, str, int | None, str]:
    """Split an absolute http(s) URL into (scheme, host, port, rest) with checks."""
    if any(ord(ch) < 0x21 or ch == "\x7f" for ch in value):
        raise InvalidEntryError(field, value, "contains whitespace or control characters")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise InvalidEntryError(field, value, f"is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise InvalidEntryError(field, value, "must be an absolute http or https URL")
    if parts.username is not None or parts.password is not None:
        raise InvalidEntryError(field, value, "must not contain credentials")
    host = _idna_host(parts.hostname or "", field, value)
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    rest = _quote(parts.path or "/", _PATH_SAFE, field, value)
    if parts.query:
        rest += "?" + _quote(parts.query, _QUERY_SAFE, field, value)
    if parts.fragment:
        rest += "#" + _quote(parts.fragment, _QUERY_SAFE, field, value)
    return scheme, host, port, rest


def _origin(scheme: str, host: str, port: int | None) -> str:
    return f"{scheme}://{host}" if port is None else f"{scheme}://{host}:{port}"


def normalize_loc(value: object, field: str = "loc") -> str:
    """Return ``value`` as a canonical absolute URI, or a canonical path if it is relative.

    Relative values (starting with ``/``) are kept relative; the core joins them to the
    base URL. Raises :class:`InvalidEntryError` naming ``field``.
    """
    if not isinstance(value, str):
        raise InvalidEntryError(field, value, "must be a string")
    if value[:1] == "/" and value[1:2] != "/":  # base-relative path (not //host)
        if not _CANONICAL_PATH.fullmatch(value):
            if any(ord(ch) < 0x21 or ch == "\x7f" for ch in value):
                raise InvalidEntryError(field, value, "contains whitespace or control characters")
            path, sep, query = value.partition("?")
            value = _quote(path, _PATH_SAFE, field, value) + (
                sep + _quote(query, _QUERY_SAFE, field, value) if sep else ""
            )
    elif not _CANONICAL.fullmatch(value) or ("%" in value and _BARE_PERCENT.search(value)):
        scheme, host, port, rest = _split_absolute(value, field)
        value = _origin(scheme, host, port) + rest
    if len(value) > MAX_URL_LENGTH:
        raise InvalidEntryError(field, value, f"is longer than {MAX_URL_LENGTH} characters")
    return value


@dataclass(frozen=True, slots=True)
class BaseURL:
    """The public address sitemaps are served under: origin plus a directory path.

    ``directory`` always ends in ``/``; every listed URL must start with ``prefix``
    (origin + directory), which is the sitemaps.org location rule.
    """

    origin: str
    directory: str

    @classmethod
    def parse(cls, value: str) -> BaseURL:
        """Parse and normalise a configured base URL, raising ``InvalidEntryError``."""
        if not isinstance(value, str):
            raise InvalidEntryError("base_url", value, "must be a string")
        if "?" in value or "#" in value:
            raise InvalidEntryError("base_url", value, "must not have a query or fragment")
        scheme, host, port, rest = _split_absolute(value, "base_url")
        directory = rest if rest.endswith("/") else rest + "/"
        return cls(_origin(scheme, host, port), directory)

    def with_host(self, scheme: str, host: str) -> BaseURL:
        """The same directory on another origin (for an allow-listed Host)."""
        return BaseURL(f"{scheme}://{host}", self.directory)

    @property
    def prefix(self) -> str:
        return self.origin + self.directory

    def join(self, path: str) -> str:
        """Absolute URL of an app-relative path (``/about`` under ``/shop/`` is ``/shop/about``)."""
        return self.origin + self.directory[:-1] + path

    def join_if_relative(self, url: str) -> str:
        """``url`` itself if absolute, else joined to the base (for extension URLs)."""
        return self.join(url) if url.startswith("/") else url

    def file_url(self, name: str) -> str:
        """Absolute URL of a file served in the sitemap directory."""
        return self.prefix + name
