"""URLs: this module alone owns the location rule and URL normalisation.

sitemaps.org requires every ``<loc>`` to be an absolute URI (non-ASCII hosts in IDNA,
non-ASCII path and query percent-encoded as UTF-8) of at most 2,048 characters, on the
sitemap's own scheme, host and port, under the sitemap file's directory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, cast
from urllib.parse import quote, urlsplit

import idna

from .._exceptions import InvalidEntryError
from .limits import MAX_URL_LENGTH

__all__ = [
    "BaseURL",
    "Located",
    "canonical_url_match",
    "mount_directory",
    "normalize_loc",
    "quote_unsafe",
    "remove_dot_segments",
]


_DEFAULT_PORTS = {"http": 80, "https": 443}
# A URL already in canonical form: lower-case http(s) origin without a port, a path,
# then only characters RFC 3986 allows unescaped and well-formed %-escapes. Most
# provider URLs take this path, which skips urlsplit/quote entirely.
# At most one "#": it starts the fragment (a second one is no URI's; normalize_loc writes
# it %23).
_CANONICAL = re.compile(
    r"https?://[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?/"
    r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*(?:#[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*)?"
)
#: Matches an absolute URL that normalize_loc keeps as is, if it has no "%" (escapes need
#: the _BARE_PERCENT check too). A bound method, so the hot path calls C directly.
canonical_url_match = _CANONICAL.fullmatch
_CANONICAL_PATH = re.compile(
    r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*"
    r"(?:#(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?"
)
_BARE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Characters RFC 3986 allows as-is in a path / a query or fragment ("#" in neither: the
# first one ends the path or query, and a later one is the character, %23).
_PATH_SAFE = "/%!$&'()*+,;=:@-._~"
_QUERY_SAFE = _PATH_SAFE + "?"
_AUTHORITY = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^/?#]*)")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_HOST_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?|[a-z0-9]")


def _quote(part: str, safe: str, field: str, value: str) -> str:
    # Anything outside RFC 3986 (spaces, controls, non-ASCII) is percent-encoded: that
    # loses nothing. Lone surrogates U+DC80-U+DCFF are how Python decodes bytes that
    # are not UTF-8 (file names, surrogateescape): they become those very bytes again.
    try:
        return quote(_BARE_PERCENT.sub("%25", part), safe=safe, errors="surrogateescape")
    except UnicodeEncodeError:
        # Other lone surrogates stand for no byte at all: nothing to percent-encode.
        reason = "contains characters that are not valid Unicode"
        raise InvalidEntryError(field, value, reason) from None


def _quote_rest(rest: str, field: str, value: str) -> str:
    """A path with its query and fragment (``/p?q#f``), each percent-encoded as it must be.

    The first ``#`` starts the fragment, wherever it stands (after the query, or before
    any ``?``), as in every URL; it is kept, since two entries may differ by their
    fragment alone. No URI holds a second one: every later ``#`` is the character
    itself, written ``%23`` (the sitemap XSD's ``xs:anyURI`` refuses the URL otherwise).
    """
    rest, hashed, fragment = rest.partition("#")
    path, asked, query = rest.partition("?")
    out = _quote(path, _PATH_SAFE, field, value)
    if asked:
        out += "?" + _quote(query, _QUERY_SAFE, field, value)
    if hashed:
        out += "#" + _quote(fragment, _QUERY_SAFE, field, value)
    return out


def _idna_host(host: str, field: str, value: str) -> str:
    if host.isascii():
        host = host.lower()
    else:
        # UTS 46 / IDNA 2008, as browsers and WHATWG URL do: "faß.de" is xn--fa-hia.de.
        # Python's own "idna" codec is IDNA 2003 and maps it to fass.de, another domain.
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            reason = f"host is not a valid IDNA 2008 name ({exc})"
            raise InvalidEntryError(field, value, reason) from None
    labels = host.rstrip(".").split(".")
    if not host or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        raise InvalidEntryError(field, value, "host is not a valid DNS name")
    return host


def _split_absolute(value: str, field: str) -> tuple[str, str, int | None, str]:
    """Split an absolute http(s) URL into (scheme, host, port, rest) with checks.

    Whitespace and control characters are refused in the scheme and authority, and
    percent-encoded in the path, query and fragment (urlsplit would silently drop tabs
    and newlines there).
    """
    found = _AUTHORITY.match(value)
    head, rest = (found.group(1), value[found.end(1) :]) if found else (value, "")
    if _CONTROL.search(head):
        raise InvalidEntryError(field, value, "contains whitespace or control characters")
    if _CONTROL.search(rest):
        value = head + _CONTROL.sub(lambda m: quote(m.group(), safe=""), rest)
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise InvalidEntryError(field, value, f"is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if not scheme and not value.startswith("/") and field != "base_url":
        raise InvalidEntryError(
            field,
            value,
            "must be an absolute http or https URL, or a path that starts with '/' "
            f"(relative to base_url): write {'/' + value!r}",
        )
    if scheme not in _DEFAULT_PORTS:
        raise InvalidEntryError(field, value, "must be an absolute http or https URL")
    if parts.username is not None or parts.password is not None:
        raise InvalidEntryError(field, value, "must not contain credentials")
    host = _idna_host(parts.hostname or "", field, value)
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    # What follows the authority, split here rather than by urlsplit, which drops an
    # empty query or fragment ("/p?", "/p#") that a canonical URL keeps.
    rest = value[found.end(1) :] if found else parts.path
    rest = _quote_rest(rest if rest[:1] == "/" else "/" + rest, field, value)
    return scheme, host, port, rest


#: A last base_url segment that names a document (sitemap.xml, index.html), not a prefix.
_FILE_NAME = re.compile(r"[^/]+\.(?:xml|xsl|html?|php|aspx?|jsp|txt|gz|json)", re.IGNORECASE)
_DOT_ESCAPE = re.compile("%2[eE]")


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4: resolve ``.`` and ``..`` segments of an absolute path."""
    output: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments[1:], 1):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if output:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/" + "/".join(output)


def _without_dot_segments(url: str) -> str:
    """An absolute URL with its path's dot segments (``%2e`` spelled too) resolved."""
    start = url.find("/", url.find("//") + 2)
    if start < 0:
        return url
    ends = [i for i in (url.find("?", start), url.find("#", start)) if i >= 0]
    end = min(ends) if ends else len(url)
    # %2E is an unreserved character spelled as an escape: the same URI (RFC 3986 §6.2.2.2).
    path = _DOT_ESCAPE.sub(".", url[start:end])
    if "/." not in path:
        return url
    return url[:start] + remove_dot_segments(path) + url[end:]


def mount_directory(directory: str, root_path: str) -> str:
    """Where requests arrive for an app mounted at ``root_path`` under ``directory``.

    ``directory`` ends in ``/``; ``root_path`` is ``""`` or ``/prefix``. A base URL that
    already names the prefix is not given it twice, so configurations written before
    mounts were read keep working.
    """
    root = root_path.rstrip("/")
    if not root or directory.endswith(root + "/"):
        return directory
    return directory[:-1] + root + "/"


def _has_dot_segment(url: str) -> bool:
    return "/." in url or "%2e" in url or "%2E" in url


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
            value = _quote_rest(value, field, value)
    elif not _CANONICAL.fullmatch(value) or ("%" in value and _BARE_PERCENT.search(value)):
        scheme, host, port, rest = _split_absolute(value, field)
        value = _origin(scheme, host, port) + rest
    if "%" in value:
        value = _ESCAPE.sub(_normal_escape, value)
    if value[0] != "/" and _has_dot_segment(value):
        value = _without_dot_segments(value)
    if len(value) > MAX_URL_LENGTH:
        raise InvalidEntryError(field, value, f"is longer than {MAX_URL_LENGTH} characters")
    return value


_ESCAPE = re.compile("%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _normal_escape(found: re.Match[str]) -> str:
    # RFC 3986 §6.2.2: one spelling per URL (else dedupe, the guard and the ledger see
    # two URLs): hex digits in upper case, an unreserved character unescaped.
    char = chr(int(found.group()[1:], 16))
    return char if char in _UNRESERVED else found.group().upper()


#: What may follow a canonical origin in a URL kept as is, "%" aside (escapes need checks).
_CANONICAL_REST = r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?#]*"


#: The characters of ``_CANONICAL_REST`` but ".", "&", "'" and "#", as bytes
#: (bytes.translate).
_PLAIN_BYTES = bytes(
    c for c in range(128) if re.fullmatch(_CANONICAL_REST, chr(c)) and c not in b".&'#"
)
#: A line of a batch with two "#" (the second must be written %23: normalize_loc's to do).
_TWO_HASHES = re.compile("#[^\n#]*#")


@lru_cache(maxsize=64)
def _canonical_prefix(prefix: str) -> bool:
    """Whether a base's prefix is in canonical form (else each URL under it takes the
    per-URL path: a port, say)."""
    return _CANONICAL.fullmatch(prefix) is not None


class Located(NamedTuple):
    """The URLs of a batch located at once (see :meth:`BaseURL.all_located`)."""

    urls: list[str]
    #: Their characters in all, and how many of those are "&" and "'" (which XML
    #: escapes: see ``xml.escape_loc``), for their sizes.
    length: int
    ampersands: int
    apostrophes: int


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
        # The location rule resolves dot segments in every URL: the base must not hold any.
        rest = remove_dot_segments(_DOT_ESCAPE.sub(".", rest))
        last = rest.rsplit("/", 1)[-1]
        if _FILE_NAME.fullmatch(last):
            raise InvalidEntryError(
                "base_url",
                value,
                f"names a file ({last!r}), not the site: give the site's root URL, or the "
                "prefix the app is mounted at (base_url="
                f"{_origin(scheme, host, port) + rest[: -len(last)]!r})",
            )
        directory = rest if rest.endswith("/") else rest + "/"
        return cls(_origin(scheme, host, port), directory)

    def with_host(self, scheme: str, host: str) -> BaseURL:
        """The same directory on another origin (for an allow-listed Host)."""
        return BaseURL(f"{scheme}://{host}", self.directory)

    def mounted(self, root_path: str) -> BaseURL:
        """The base of an app mounted at ``root_path`` (decoded, from root_path/SCRIPT_NAME)."""
        if not root_path:
            return self
        # root_path is decoded text: every "%" in it is a character, never an escape.
        try:
            encoded = quote(root_path, safe=_PATH_SAFE.replace("%", ""))
        except UnicodeEncodeError:
            raise InvalidEntryError("root_path", root_path, "is not valid Unicode") from None
        return BaseURL(self.origin, mount_directory(self.directory, encoded))

    @property
    def prefix(self) -> str:
        return self.origin + self.directory

    def join(self, path: str) -> str:
        """Absolute URL of an app-relative path (``/about`` under ``/shop/`` is ``/shop/about``)."""
        return self.origin + self.directory[:-1] + path

    def join_if_relative(self, url: str) -> str:
        """``url`` itself if absolute, else joined to the base (for extension URLs)."""
        if not url.startswith("/"):
            return url
        joined = self.join(url)
        return _without_dot_segments(joined) if _has_dot_segment(joined) else joined

    def locate(self, loc: str, field: str = "loc") -> str:
        """The location rule: the absolute URL of ``loc``, which must lie under this base.

        A relative path is joined to the base first, then dot segments are resolved
        (RFC 3986 §5.2.4), so ``/shop/../admin`` is ``/admin``: outside a ``/shop`` base.
        Raises :class:`InvalidEntryError` naming ``field``.
        """
        url = self.join(loc) if loc[0] == "/" else loc
        if _has_dot_segment(url):
            url = _without_dot_segments(url)
        if not url.startswith(self.prefix):
            raise InvalidEntryError(
                field,
                url,
                f"is outside {self.prefix} (a sitemap lists only URLs under its own directory)",
            )
        if len(url) > MAX_URL_LENGTH:
            raise InvalidEntryError(field, url, f"is longer than {MAX_URL_LENGTH} characters")
        return url

    def all_located(self, locs: Sequence[object]) -> Located | None:
        """:meth:`locate` of ``normalize_loc(loc)`` for every loc, when each is kept as is.

        That is when all are strings in canonical form without escapes or dot segments,
        and either all absolute URLs under this base or all base-relative paths (joined
        here): what most providers yield. A check of the whole batch at once (a few
        passes over its lines at C speed); None sends each URL through
        :func:`normalize_loc` and :meth:`locate`, which then decide as for any URL.
        """
        if not locs or set(map(type, locs)) != {str}:
            return None
        strings = cast("list[str]", locs)
        count = len(strings)
        text = "\n".join(strings)
        if not text.isascii():
            return None
        # What is left once the characters of a canonical URL ("%" aside: escapes need
        # checks) are dropped: the line breaks between the URLs, their dots (for the
        # dot segment check), their "#" (one a URL at most) and the "&" and "'" they
        # hold (counted for sizes: XML escapes them). bytes.translate does it at C
        # speed, where a regex of the lines costs several times as much.
        others = text.encode("ascii").translate(None, _PLAIN_BYTES)
        breaks, dots, ampersands = others.count(b"\n"), others.count(b"."), others.count(b"&")
        hashes = others.count(b"#")
        apostrophes = len(others) - breaks - dots - ampersands - hashes
        if breaks != count - 1 or others.count(b"'") != apostrophes:
            return None
        if hashes and _TWO_HASHES.search(text):
            return None
        length = len(text) - breaks
        if text[:1] == "/":  # paths: under the base once joined, unless they climb out
            head = self.origin + self.directory[:-1]
            if (
                _has_dot_segment(head)
                or text[1:2] == "/"
                or "\n//" in text
                or text.count("\n/") != breaks  # every line a path ("/", then not "/")
                or max(map(len, strings)) + len(head) > MAX_URL_LENGTH
                or (dots and "/." in text)
            ):
                return None
            return Located(
                list(map(head.__add__, strings)),
                length + count * len(head),
                ampersands + count * head.count("&"),
                apostrophes + count * head.count("'"),
            )
        prefix = self.prefix
        if (
            not _canonical_prefix(prefix)
            or not text.startswith(prefix)
            or text.count("\n" + prefix) != breaks  # every line starts with the prefix
            or max(map(len, strings)) > MAX_URL_LENGTH
            # Dots only where the prefix has them: no "/." to look for (the prefix holds
            # no dot segment), which saves a search costing three counts.
            or (dots != count * prefix.count(".") and "/." in text)
        ):
            return None
        return Located(strings, length, ampersands, apostrophes)

    def origin_url(self, url: str) -> str:
        """``url`` itself if absolute, else a path on this origin (``/blog/sitemap.xml``)."""
        return self.origin + url if url.startswith("/") else url

    def file_url(self, name: str) -> str:
        """Absolute URL of a file served in the sitemap directory."""
        return self.prefix + name


#: Every character RFC 3986 allows unescaped somewhere in a URI (reserved + unreserved),
#: plus "%" (escapes are kept as they are; a bare "%" is normalize_loc's to encode).
_URI_CHARACTERS = "!#$%&'()*+,-./:;=?@[]_~"


def quote_unsafe(value: str) -> str:
    """``value`` with every character a URI may not hold percent-encoded (as UTF-8).

    Spaces, controls, ``<>"{}|\\^``` and non-ASCII become escapes; nothing else changes,
    so no information is lost: ``/a b?q=<1>`` is ``/a%20b?q=%3C1%3E``, the same resource
    written as RFC 3986 and the sitemap XSD (``xsd:anyURI``) want it. For values written
    as-is elsewhere (Django's sitemaps framework does not encode its locations).
    """
    try:
        return quote(value, safe=_URI_CHARACTERS, errors="surrogateescape")
    except UnicodeEncodeError:
        return value  # not text that encodes: normalize_loc says so, naming the value
