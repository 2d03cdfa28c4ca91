"""The parameterless URL patterns of a Django URLconf, as a provider.

This module alone decides which patterns of a URLconf are pages a sitemap lists and
what their paths are. It mirrors ``StarletteRoutesProvider``/``FlaskRoutesProvider``
(glob ``include``/``exclude`` on paths, sorted, a version hashed from what is listed)
for Django:

* every ``path()``/``re_path()`` reached through ``include()`` (namespaced or not) whose
  route, and every prefix above it, takes no argument (no converter, no regex group);
* its path is the one ``reverse()`` builds for that very pattern (the concatenated
  regex through ``django.utils.regex_helper.normalize``, quoted as ``reverse()`` quotes),
  relative to the URLconf's root: the script prefix is the base URL's business;
* under ``i18n_patterns`` one path per language of ``settings.LANGUAGES`` (or
  ``languages=``), each computed under ``translation.override(code)`` so translated
  routes and ``prefix_default_language=False`` come out as Django serves them, with the
  reciprocal hreflang alternates (plus ``x-default``, the path without the language
  prefix, when asked);
* left out: the admin (the ``admin`` namespace, ``django.contrib.admin*`` views),
  Django's sitemap, static-file and i18n views, ``RedirectView`` subclasses and
  class-based views without ``get``.

URL resolution touches no database, so it runs in place (no worker thread), and the
result is kept while the resolver (``clear_url_caches()`` makes a new one), the
languages and ``LANGUAGE_CODE`` stay the same.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .._exceptions import ConfigurationError, InvalidEntryError
from .._logs import logger
from .._providers.base import ProviderVersion
from .._sansio.extensions import Alternate
from .._sansio.models import simple_fields

__all__ = ["DjangoRoutesProvider"]

#: Views that are no pages: the sitemap itself, static files, translation catalogues.
_SKIPPED_MODULES = (
    "django.contrib.admin",
    "django.contrib.sitemaps",
    "django.views.static",
    "django.views.i18n",
)
_FIELDS = ("lastmod", "changefreq", "priority")


@dataclass(frozen=True, slots=True)
class _Route:
    """One parameterless pattern: its patterns from the root down, its qualified name."""

    patterns: tuple[Any, ...]
    name: str | None
    localized: bool


class DjangoRoutesProvider:
    """The URL patterns without parameters of a Django project (``include()``s walked).

    :param urlconf: the URLconf module (or its dotted path); default ``ROOT_URLCONF``.
    :param include: glob patterns of paths to list (default: all).
    :param exclude: glob patterns of paths to leave out (e.g. ``"/accounts/*"``).
    :param metadata: URL name (``"shop:about"`` with its namespaces) to a mapping of
        ``lastmod``, ``changefreq`` and ``priority`` for that pattern's URLs (every
        language of it); checked at construction.
    :param languages: the codes ``i18n_patterns`` are listed in (default: the codes of
        ``settings.LANGUAGES``, in that order).
    :param alternates: give each language version of an ``i18n_patterns`` pattern its
        reciprocal ``<xhtml:link>`` alternates (the listed versions, itself included).
    :param x_default: add an ``x-default`` alternate: the path without the language
        prefix, as Django's ``Sitemap.x_default`` does.
    """

    def __init__(
        self,
        urlconf: str | ModuleType | None = None,
        *,
        include: Sequence[str] = ("*",),
        exclude: Sequence[str] = (),
        metadata: Mapping[str, Mapping[str, Any]] | None = None,
        languages: Sequence[str] | None = None,
        alternates: bool = True,
        x_default: bool = False,
    ) -> None:
        self.urlconf = urlconf
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.metadata = _checked_metadata(metadata or {})
        if isinstance(languages, str):
            raise ConfigurationError("languages must be a sequence of codes, not a string")
        self.languages = None if languages is None else tuple(languages)
        for code in self.languages or ():
            try:
                Alternate(code, "/")
            except InvalidEntryError as exc:
                raise ConfigurationError(f"DjangoRoutesProvider languages: {exc}") from None
        self.alternates = alternates
        self.x_default = x_default
        self._cached: tuple[tuple[Any, ...], list[Any]] | None = None
        self._warned = False

    def __repr__(self) -> str:
        return f"DjangoRoutesProvider({self.urlconf or 'ROOT_URLCONF'})"

    def listing(self) -> list[Any]:
        """The entries: a path, or a mapping when metadata or alternates apply; sorted."""
        from django.conf import settings
        from django.urls import get_resolver

        resolver = get_resolver(self.urlconf)
        codes = self.languages or tuple(code for code, _ in settings.LANGUAGES)
        key = (resolver, codes, settings.LANGUAGE_CODE)
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, self._build(resolver, codes, settings.LANGUAGE_CODE))
        return self._cached[1]

    def paths(self) -> list[str]:
        """The listed paths, sorted (every language version of a localized pattern)."""
        return [entry if isinstance(entry, str) else entry["loc"] for entry in self.listing()]

    async def entries(self) -> AsyncIterator[Any]:
        for entry in self.listing():
            yield entry

    async def count(self) -> int:
        return len(self.listing())

    async def version(self) -> ProviderVersion:
        return ProviderVersion(token=hashlib.sha256(repr(self.listing()).encode()).hexdigest()[:32])

    def _chosen(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, p) for p in self.include) and not any(
            fnmatch.fnmatchcase(path, p) for p in self.exclude
        )

    def _build(self, resolver: Any, codes: tuple[str, ...], default: str) -> list[Any]:
        from django.utils import translation

        found: dict[str, Any] = {}
        names: set[str] = set()
        for route in _routes(resolver.url_patterns, (), "", False):
            if route.name:
                names.add(route.name)
            fields = self.metadata.get(route.name or "", {})
            if not route.localized:
                with translation.override(default):
                    path = _path(route.patterns)
                if path is not None and path not in found and self._chosen(path):
                    found[path] = {"loc": path, **fields} if fields else path
                continue
            versions: dict[str, str] = {}
            for code in codes:
                with translation.override(code):
                    path = _path(route.patterns)
                if path is not None and path not in found and self._chosen(path):
                    versions.setdefault(code, path)
            links = [{"hreflang": code, "href": path} for code, path in versions.items()]
            if self.x_default and links:
                with translation.override(default):
                    neutral = _path(route.patterns, neutral=True)
                if neutral is not None:
                    links.append({"hreflang": "x-default", "href": neutral})
            for path in versions.values():
                entry: dict[str, Any] = {"loc": path, **fields}
                if self.alternates:
                    entry["alternates"] = links
                found[path] = entry if len(entry) > 1 else path
        unknown = sorted(set(self.metadata) - names)
        if unknown and not self._warned:
            self._warned = True
            logger.warning(
                "DjangoRoutesProvider: metadata names no parameterless URL pattern: %s",
                ", ".join(unknown),
            )
        return [found[path] for path in sorted(found)]


def _checked_metadata(metadata: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``metadata`` as plain dicts, every value valid (a bad one would cost every URL)."""
    if not isinstance(metadata, Mapping):
        raise ConfigurationError(f"metadata must map URL names to fields, got {metadata!r}")
    checked = {}
    for name, fields in metadata.items():
        if not isinstance(name, str):
            raise ConfigurationError(f"metadata keys must be URL names (str), got {name!r}")
        if not isinstance(fields, Mapping) or set(fields) - set(_FIELDS):
            raise ConfigurationError(
                f"metadata[{name!r}] must be a mapping of {', '.join(_FIELDS)}, got {fields!r}"
            )
        try:
            simple_fields("/", **dict(fields))
        except InvalidEntryError as exc:
            raise ConfigurationError(f"metadata[{name!r}]: {exc}") from None
        checked[name] = {field: fields[field] for field in _FIELDS if field in fields}
    return checked


def _routes(
    patterns: Sequence[Any], above: tuple[Any, ...], namespace: str, localized: bool
) -> Iterator[_Route]:
    """The parameterless patterns below ``above``, in URLconf order."""
    from django.urls import URLPattern, URLResolver
    from django.urls.resolvers import LocalePrefixPattern

    for entry in patterns:
        if _has_parameters(entry.pattern):
            continue
        if isinstance(entry, URLResolver):
            if entry.namespace == "admin" or entry.app_name == "admin":
                continue
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _routes(
                entry.url_patterns,
                (*above, entry.pattern),
                inner,
                localized or isinstance(entry.pattern, LocalePrefixPattern),
            )
        elif isinstance(entry, URLPattern) and _is_page(entry.callback):
            name = f"{namespace}{entry.name}" if entry.name else None
            yield _Route((*above, entry.pattern), name, localized)


def _has_parameters(pattern: Any) -> bool:
    from django.urls.resolvers import LocalePrefixPattern, RegexPattern, RoutePattern

    if isinstance(pattern, LocalePrefixPattern):
        return False
    if isinstance(pattern, RoutePattern):
        return bool(pattern.converters)
    if isinstance(pattern, RegexPattern):
        return bool(pattern.regex.groups)
    return True  # a pattern class of its own: its parameters are unknown


def _is_page(view: Any) -> bool:
    """Whether a view may be a page: not one of Django's utility views, not a redirect."""
    from django.views.generic import RedirectView

    module = getattr(view, "__module__", None) or ""
    if module.startswith(_SKIPPED_MODULES):
        return False
    view_class = getattr(view, "view_class", None)
    if isinstance(view_class, type):
        return not issubclass(view_class, RedirectView) and hasattr(view_class, "get")
    return True


def _path(patterns: tuple[Any, ...], neutral: bool = False) -> str | None:
    """The path ``reverse()`` gives this pattern in the active language (``None``: none).

    ``neutral``: the language prefix left out (the ``x-default`` URL).
    """
    from urllib.parse import quote

    from django.urls.resolvers import LocalePrefixPattern
    from django.utils.http import RFC3986_SUBDELIMS
    from django.utils.regex_helper import normalize

    parts = []
    for pattern in patterns:
        if isinstance(pattern, LocalePrefixPattern):
            parts.append("" if neutral else re.escape(pattern.language_prefix))
        else:
            source = pattern.regex.pattern
            parts.append(source[1:] if source.startswith("^") else source)
    regex = "".join(parts)
    for candidate, params in normalize(regex):
        if params:
            continue
        # No parameters, so no "%(name)s" in it: a literal "%" stays as it is ("100%/").
        text = candidate
        if re.search(f"^{regex}", text):
            url = quote(text, safe=RFC3986_SUBDELIMS + "/~:@")
            # reverse(): a path starting "//" would read as a host
            return "/%2F" + url[1:] if url.startswith("/") else "/" + url
    return None
