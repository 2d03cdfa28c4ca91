"""Languages: every entry of a section in each language, with reciprocal hreflang alternates.

A section that declares :class:`Languages` has its provider yield one language-neutral
entry per page of the site (``/products/1``); each becomes one ``<url>`` per language
(``/en/products/1``, ``/de/products/1``, ...), and every one of them lists the whole set,
itself included, plus ``x-default`` when configured, as Google requires
(https://developers.google.com/search/docs/specialty/international/localized-versions).
This is what Django's ``i18n``/``alternates``/``x_default`` and next-sitemap's
``alternateRefs`` do.

The wrapper keeps the provider's capabilities: ``count()`` becomes count x languages,
``page(offset, limit)`` asks the provider only for the items that page covers, and a
keyset provider's key ranges stay key ranges (every language of a row on one page).

Languages on other hosts (``Languages(sites={"en": "https://example.com/", "de":
"https://de.example.com/"})``): each site's sitemap lists the languages whose site lies
under its own base URL (the location rule, decided once per language, not per URL), and
every URL still names the whole set across hosts. The count is items x listed languages.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .._exceptions import ConfigurationError, InvalidEntryError
from .._sansio.extensions import Alternate
from .._sansio.models import Mapped, SitemapEntry, coerce_entry
from .._sansio.skip import SKIP
from .._sansio.urls import BaseURL
from .base import (
    ProviderVersion,
    SupportsCount,
    SupportsKeyedBatches,
    SupportsKeyset,
    SupportsPageLastModified,
    SupportsPages,
    SupportsRangeVersion,
    SupportsVersion,
    UrlProvider,
)

__all__ = ["Languages", "localized"]

# BCP 47 language[-script][-region], the subset hreflang accepts.
_CODE = re.compile(r"[a-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-(?:[A-Z]{2}|[0-9]{3}))?")
_ORIGIN = re.compile(r"https?://[^/]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Languages:
    """The languages of a section and how an entry's URL maps to each.

    :param codes: hreflang codes (BCP 47: ``en``, ``de-AT``, ``zh-Hant``), in the order
        the alternates are written; with ``sites``, their keys by default.
    :param url: a pattern with ``{path}`` (the neutral entry's path, starting with ``/``)
        and ``{lang}``, e.g. ``"/{lang}{path}"`` (the default); or a function
        ``(path, lang) -> path`` for anything else. With ``sites`` the result is a path
        under the language's site, ``{lang}`` is optional and the default is ``"{path}"``.
    :param x_default: the code whose URL is also the ``x-default`` alternate.
    :param sites: each code's base URL when languages live on their own hosts or paths
        (``{"en": "https://example.com/", "de": "https://de.example.com/", "fr":
        "https://example.fr/"}``). A site's sitemap then lists only the languages under
        its own base URL, each URL with the whole set of alternates across hosts; serve
        each host from its own :class:`Tenants` entry, the same section in each.
        ``bases`` holds them parsed (empty without ``sites``).
    """

    codes: Sequence[str] = ()
    url: str | Callable[[str, str], str] | None = None
    x_default: str | None = None
    sites: Mapping[str, str] | None = field(default=None, hash=False)
    bases: Mapping[str, BaseURL] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.codes, str):
            raise ConfigurationError("Languages.codes must be a sequence of codes, not a string")
        codes = tuple(self.codes)
        sites = self.sites
        if sites is not None:
            if not isinstance(sites, Mapping):
                raise ConfigurationError(
                    f"Languages.sites must be a mapping of code -> base URL, got {sites!r}"
                )
            codes = codes or tuple(sites)
        for code in codes:
            if not (isinstance(code, str) and _CODE.fullmatch(code)):
                raise ConfigurationError(
                    f"Languages.codes entries must be BCP 47 codes such as 'en', 'de-AT' or "
                    f"'zh-Hant', got {code!r}"
                )
        if not codes or len(set(codes)) != len(codes):
            raise ConfigurationError(f"Languages.codes must name distinct codes, got {codes!r}")
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "bases", _bases(codes, sites))
        if self.url is None:
            object.__setattr__(self, "url", "/{lang}{path}" if sites is None else "{path}")
        if isinstance(self.url, str):
            needed = ("{path}",) if sites is not None else ("{lang}", "{path}")
            if not all(part in self.url for part in needed):
                raise ConfigurationError(
                    f"Languages.url must hold {' and '.join(needed)}, got {self.url!r}"
                )
        elif not callable(self.url):
            raise ConfigurationError(
                f"Languages.url must be a pattern or a function, got {self.url!r}"
            )
        if self.x_default is not None and self.x_default not in codes:
            raise ConfigurationError(
                f"Languages.x_default must be one of {codes!r}, got {self.x_default!r}"
            )

    def path_for(self, path: str, lang: str) -> str:
        """The path of ``path``'s version in ``lang`` (under its site, with ``sites``)."""
        url = self.url
        if isinstance(url, str):
            return url.replace("{lang}", lang).replace("{path}", path)
        assert url is not None  # set by __post_init__
        return url(path, lang)

    def listed_by(self, base: BaseURL) -> tuple[str, ...]:
        """The codes a sitemap under ``base`` lists: all of them, or with ``sites`` those
        whose site lies under ``base`` (the location rule; the rest are alternates only)."""
        if not self.bases:
            return tuple(self.codes)
        return tuple(
            code
            for code, site in self.bases.items()
            if site.origin == base.origin and site.directory.startswith(base.directory)
        )

    def expand(
        self, item: Any, directory: str = "/", listed: Sequence[str] | None = None
    ) -> list[Any]:
        """One entry per language of ``listed`` (all by default), each with the full
        reciprocal set of alternates.

        ``directory`` is the base URL's directory: an absolute entry under it keeps it
        and gets its language after it, as a relative one does once joined. With
        ``sites``, an absolute entry is read as its path under the site it lies in.
        Whatever cannot be built (an invalid item, a URL too long once localized) stands
        as one :class:`InvalidEntryError` per language, which the section logs and leaves
        out: one bad item costs its own URLs and shifts no page.
        """
        codes = self.codes if listed is None else listed
        try:
            if type(item) is Mapped:
                item = item.resolve()
            if item is SKIP:
                return [SKIP] * len(codes)  # each language's URL left out, in its place
            entry = coerce_entry(item)
            urls = self._urls(entry.loc, directory)
            alternates = [Alternate(code, url) for code, url in urls.items()]
            if self.x_default is not None:
                alternates.append(Alternate("x-default", urls[self.x_default]))
            return [
                SitemapEntry(
                    urls[code],
                    lastmod=entry.lastmod,
                    changefreq=entry.changefreq,
                    priority=entry.priority,
                    images=entry.images,
                    videos=entry.videos,
                    news=entry.news,
                    alternates=alternates,
                )
                for code in codes
            ]
        except InvalidEntryError as exc:
            return [exc] * len(codes)

    def _urls(self, loc: str, directory: str) -> dict[str, str]:
        """Each code's URL of the neutral ``loc``."""
        origin_match = _ORIGIN.match(loc)
        origin = origin_match.group(0) if origin_match else ""
        path = loc[len(origin) :] or "/"
        if self.bases:
            if origin:
                path = self._site_path(loc)
            return {
                code: site.origin + site.directory[:-1] + self.path_for(path, code)
                for code, site in self.bases.items()
            }
        prefix = ""
        if origin and path.startswith(directory):
            prefix, path = directory[:-1], path[len(directory) - 1 :]
        return {code: origin + prefix + self.path_for(path, code) for code in self.codes}

    def _site_path(self, loc: str) -> str:
        """The path of an absolute neutral URL under the (deepest) site holding it."""
        prefixes = [site.prefix for site in self.bases.values() if loc.startswith(site.prefix)]
        if not prefixes:
            raise InvalidEntryError(
                "loc", loc, "is under none of Languages.sites (give a path, or a URL on one)"
            )
        return "/" + loc[len(max(prefixes, key=len)) :]


def _bases(codes: tuple[str, ...], sites: Mapping[str, str] | None) -> dict[str, BaseURL]:
    """Each code's parsed site, in the order of ``codes`` (empty without sites)."""
    if sites is None:
        return {}
    if set(sites) != set(codes):
        raise ConfigurationError(
            f"Languages.sites must give one base URL for each of the codes {codes!r}, "
            f"got {sorted(sites)!r}"
        )
    bases = {}
    for code in codes:
        try:
            bases[code] = BaseURL.parse(sites[code])
        except InvalidEntryError as exc:
            raise ConfigurationError(f"Languages.sites[{code!r}]: {exc}") from None
    return bases


class _Localized:
    """Entries of ``inner``, each expanded into every language."""

    def __init__(self, inner: UrlProvider, languages: Languages, base: BaseURL) -> None:
        self.inner = inner
        self.languages = languages
        self.directory = base.directory
        self.listed = languages.listed_by(base)
        self.factor = len(self.listed)

    async def _expanded(
        self, source: AsyncIterator[Any], skip: int, limit: int | None
    ) -> AsyncIterator[Any]:
        try:
            async for item in source:
                for entry in self.languages.expand(item, self.directory, self.listed):
                    if skip:
                        skip -= 1
                        continue
                    if limit is not None:
                        if limit == 0:
                            return
                        limit -= 1
                    yield entry
        finally:
            await _close(source)

    def entries(self) -> AsyncIterator[Any]:
        return self._expanded(aiter(self.inner.entries()), 0, None)


class _Counted(_Localized):
    async def count(self) -> int:
        assert isinstance(self.inner, SupportsCount)
        return await self.inner.count() * self.factor


class _Paged(_Counted):
    def page(self, offset: int, limit: int) -> AsyncIterator[Any]:
        """URLs ``offset`` to ``offset + limit`` from the provider's own pages.

        Providers may serve only pages aligned on their size (keyset pages): items are
        read in pages of ``limit / languages`` when that divides, else in pages of
        ``limit`` items (the URLs of one page then span at most two of them).
        """
        assert isinstance(self.inner, SupportsPages)
        factor = self.factor
        if limit % factor == 0 and offset % limit == 0:
            size = limit // factor
            return self._expanded(aiter(self.inner.page(offset // factor, size)), 0, limit)
        first, last = offset // factor, (offset + limit - 1) // factor
        pages = range(first // limit, last // limit + 1)
        skip = offset - pages[0] * limit * factor
        return self._expanded(_chained(self.inner, pages, limit), skip, limit)


async def _chained(inner: SupportsPages, pages: range, size: int) -> AsyncIterator[Any]:
    for number in pages:
        source = aiter(inner.page(number * size, size))
        try:
            async for item in source:
                yield item
        finally:
            await _close(source)


class _Versioned:
    inner: UrlProvider

    async def version(self) -> ProviderVersion:
        assert isinstance(self.inner, SupportsVersion)
        return await self.inner.version()


class _Dated:
    inner: UrlProvider
    factor: int

    async def page_last_modified(self, page_size: int) -> Sequence[datetime | None]:
        """Each page of ``page_size`` URLs covers items whose newest lastmod is known per item
        page when the sizes divide; otherwise from item pages of one (exact, dearer)."""
        assert isinstance(self.inner, SupportsPageLastModified)
        if page_size % self.factor == 0:
            return await self.inner.page_last_modified(page_size // self.factor)
        per_item = await self.inner.page_last_modified(1)
        pages: list[datetime | None] = []
        for start in range(0, len(per_item) * self.factor, page_size):
            first, last = start // self.factor, (start + page_size - 1) // self.factor
            known = [value for value in per_item[first : last + 1] if value is not None]
            pages.append(max(known) if known else None)
        return pages


class _Keyed:
    """Key ranges of the rows beneath: each row's key stays on all its languages' URLs
    (``repeats_keys``), so a page is a key range holding every language of its rows."""

    inner: UrlProvider
    languages: Languages
    directory: str
    listed: tuple[str, ...]
    factor: int
    repeats_keys = True

    async def keyed_batches(
        self, after: Any, upto: Any
    ) -> AsyncIterator[tuple[list[Any], list[Any]]]:
        expand, directory, listed = self.languages.expand, self.directory, self.listed
        factor = self.factor
        inner = self.inner
        if isinstance(inner, SupportsKeyedBatches):
            source: AsyncIterator[tuple[list[Any], list[Any]]] = aiter(
                inner.keyed_batches(after, upto)
            )
        else:
            assert isinstance(inner, SupportsKeyset)
            source = _batched(aiter(inner.keyed(after, upto)))
        try:
            async for keys, items in source:
                out_keys = [key for key in keys for _ in range(factor)]
                out = [entry for item in items for entry in expand(item, directory, listed)]
                yield out_keys, out
        finally:
            await _close(source)

    async def keyed(self, after: Any, upto: Any) -> AsyncIterator[tuple[Any, Any]]:
        async for keys, entries in self.keyed_batches(after, upto):
            for pair in zip(keys, entries, strict=True):
                yield pair


class _RangeVersioned:
    inner: UrlProvider
    factor: int

    async def range_version(self, after: Any, upto: Any) -> tuple[int, ProviderVersion]:
        assert isinstance(self.inner, SupportsRangeVersion)
        rows, version = await self.inner.range_version(after, upto)
        return rows * self.factor, version


async def _batched(
    pairs: AsyncIterator[tuple[Any, Any]],
) -> AsyncIterator[tuple[list[Any], list[Any]]]:
    keys: list[Any] = []
    items: list[Any] = []
    try:
        async for key, item in pairs:
            keys.append(key)
            items.append(item)
            if len(keys) >= _BATCH:
                yield keys, items
                keys, items = [], []
        if keys:
            yield keys, items
    finally:
        await _close(pairs)


async def _close(source: object) -> None:
    """Close an iterator of the provider's when we stop reading it (it may hold a
    cursor or a connection)."""
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        await aclose()


#: Rows handed over at a time from a provider that yields them one by one.
_BATCH = 1000

_KINDS: dict[tuple[bool, ...], type[_Localized]] = {}


def localized(provider: UrlProvider, languages: Languages, site: BaseURL) -> UrlProvider:
    """``provider`` with every entry in each language a sitemap under ``base`` lists
    (``site``, see :meth:`Languages.listed_by`), its capabilities kept."""
    counted = isinstance(provider, SupportsCount)
    paged = counted and isinstance(provider, SupportsPages)
    versioned = isinstance(provider, SupportsVersion)
    dated = counted and isinstance(provider, SupportsPageLastModified)
    keyed = isinstance(provider, SupportsKeyset)
    ranged = keyed and isinstance(provider, SupportsRangeVersion)
    key = (counted, paged, versioned, dated, keyed, ranged)
    if key not in _KINDS:
        base: type[_Localized] = _Paged if paged else _Counted if counted else _Localized
        extra = [
            kind
            for kind, wanted in (
                (_Versioned, versioned),
                (_Dated, dated),
                (_Keyed, keyed),
                (_RangeVersioned, ranged),
            )
            if wanted
        ]
        _KINDS[key] = type("LocalizedProvider", (base, *extra), {})
    return _KINDS[key](provider, languages, site)
