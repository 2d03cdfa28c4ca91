"""SitemapConfig: what the site lists and where; validated once, immutable afterwards.

Feature settings are small values of their own (:mod:`._settings`); the config holds one
of each and derives the values the layers read (base URL, sections, fingerprint).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING
from urllib.parse import unquote

from ._config_keys import check_explain_path, check_names, languages_key, page_like
from ._exceptions import ConfigurationError, InvalidEntryError
from ._feed_settings import Changes, Feed, LlmsTxt, check_documents
from ._guard_settings import Guard
from ._html_settings import HTMLView
from ._ledger_settings import Ledger
from ._providers.base import ProviderLike, UrlProvider, as_provider
from ._providers.i18n import Languages, localized
from ._sansio.exclusion import Exclusion, check_patterns, robots_exclusion
from ._sansio.guard import GuardBook
from ._sansio.ledger import LedgerBook
from ._sansio.limits import MAX_BYTES, MAX_NEWS_PER_FILE, MAX_URLS
from ._sansio.routing import Routes
from ._sansio.urls import BaseURL, normalize_loc
from ._settings import (
    HOST_PATTERN,
    HTTPSettings,
    Renders,
    Robots,
    TrustedHosts,
    check_int,
    check_positive,
)

if TYPE_CHECKING:
    from ._engine.observe import DocumentObserver

__all__ = ["Feed", "LlmsTxt", "Section", "SitemapConfig", "Tenants"]

#: Default page budget: the protocol's older 10 MB limit, which every crawler we know
#: accepts (some libraries refuse documents over 20 MB, well under the 50 MiB maximum).
DEFAULT_BYTES = 10_485_760

_SECTION_NAME = re.compile(r"[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*")


@dataclass(frozen=True, slots=True)
class Section:
    """A provider plus per-section settings.

    ``max_urls`` caps a page below the protocol's 50,000 (use 1,000 for Google News).
    ``languages`` lists every entry once per language with reciprocal hreflang
    alternates (see :class:`Languages`). ``news=True`` makes it a Google News section:
    pages of at most 1,000 URLs unless ``max_urls`` says fewer, and articles older than
    ``SitemapConfig.news_max_age`` left out (its validators move with that window, hourly).
    ``exclude`` globs leave matching URLs out; ``dedupe=False`` keeps the section out of the
    site's ``dedupe`` (docs: *Leave URLs out*). A plain provider is a section with defaults.
    """

    provider: ProviderLike
    max_urls: int | None = None
    languages: Languages | None = None
    news: bool = False
    exclude: Sequence[str] = ()
    dedupe: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "exclude", check_patterns("Section", "exclude", self.exclude))
        if self.max_urls is not None:
            check_int("Section", "max_urls", self.max_urls, 1, MAX_URLS)
        for name in ("news", "dedupe"):
            if not isinstance(value := getattr(self, name), bool):
                raise ConfigurationError(f"Section.{name} must be True or False, got {value!r}")
        if self.languages is not None and not isinstance(self.languages, Languages):
            raise ConfigurationError(f"Section.languages must be Languages, got {self.languages!r}")


@dataclass(frozen=True, slots=True)
class _ResolvedSection:
    name: str
    provider: UrlProvider
    max_urls: int
    news: bool = False
    exclusion: Exclusion | None = None
    dedupe: bool = False


@dataclass(frozen=True, kw_only=True)
class SitemapConfig:
    """Everything the middleware needs: where it lives, what it lists, how it answers.

    :param base_url: public URL of the site (or the directory sitemaps live in, such as
        ``https://example.com/shop``). Every absolute URL written comes from it, never
        from the request's ``Host`` header (see ``hosts``).
    :param sections: section name to provider (or :class:`Section`). Names may hold
        letters, digits, ``_`` and inner ``-``; each becomes ``sitemap-<name>-<page>.xml``.
    :param max_urls_per_page: URLs per sitemap page, at most 50,000.
    :param max_bytes_per_page: uncompressed bytes per page (10 MiB by default, at most
        50 MiB). Pages are planned by count and by bytes: each holds at most
        ``max_urls_per_page`` URLs and at most this many bytes.
    :param sitemap_name: file name of the entry point (a urlset if all fits, else the index).
    :param index_name: file name of the sitemap index.
    :param page_prefix: file-name prefix of section pages.
    :param gzip_files: also serve ``.xml.gz`` files that are always gzip.
    :param text_sitemaps: also serve ``.txt`` sitemaps (one URL a line).
    :param html: ``True`` (or an :class:`HTMLView` with its own file names) serves HTML
        views for people: ``sitemap.html`` and ``sitemap-<section>-<n>.html``.
    :param stylesheet: ``True`` serves a built-in XSL view and references it from every
        XML document; a string references your own stylesheet URL instead.
    :param strict: raise on an invalid entry instead of leaving it out with a warning.
    :param provider_timeout: seconds one provider call (metadata, or one batch of
        entries) may take before the request is given up.
    :param robots: a :class:`Robots` (path, groups, generate or append), or ``None`` to
        leave robots.txt to the app.
    :param http: :class:`HTTPSettings`: gzip, Cache-Control, X-Robots-Tag, Retry-After.
    :param hosts: :class:`TrustedHosts` to answer for allow-listed request hosts (and
        trusted proxies); ``None`` (the default) reads no request header at all.
    :param external_sitemaps: sitemaps served elsewhere (another app, a CDN, a subdomain
        whose robots.txt points here), as absolute URLs or paths on this origin. They are
        listed in the index (``sitemap.xml`` is then always the index) and in robots.txt.
    :param news_max_age: in sections declared ``Section(..., news=True)``, articles
        published longer ago are left out (Google News reads only the last two days);
        ``None`` keeps them all.
    :param renders: :class:`Renders`: how rendered documents are shared between
        concurrent requests and instances, served stale (RFC 5861), and whether documents
        no provider version vouches for get an ETag from their bytes.
    :param observers: hooks told about every document served (a
        :class:`PrometheusObserver`, or anything with ``document_served(event)``).
    :param indexnow_key: your IndexNow key; the key file ``<key>.txt`` is then served in
        the sitemap directory for search engines to verify notifications.
    :param feeds: :class:`Feed` values: Atom or RSS feeds of the newest entries of some
        sections, served in the sitemap directory and listed in robots.txt.
    :param llms_txt: an :class:`LlmsTxt` to serve ``llms.txt`` from some sections.
    :param changes: a :class:`Changes` to serve a sitemap of the recently changed URLs.
    :param guard: a :class:`Guard` to probe listed URLs through the wrapped app and leave
        out (or report) those that are not indexable pages.
    :param dedupe: list each URL once (the first listing wins; docs: *Leave URLs out*).
    :param ledger: a :class:`Ledger` to write each URL's ``<lastmod>`` from its content:
        the time its content digest was first seen.
    :param explain_path: a path (``"/sitemap-explain"``) that answers ``?url=<URL>`` with
        what ``sitemap-middleware explain`` says, to requests from this machine only (see
        the README); ``None`` (the default): not served.
    """

    base_url: str
    sections: Mapping[str, ProviderLike | Section]
    max_urls_per_page: int = MAX_URLS
    max_bytes_per_page: int = DEFAULT_BYTES
    sitemap_name: str = "sitemap.xml"
    index_name: str = "sitemap_index.xml"
    page_prefix: str = "sitemap-"
    gzip_files: bool = True
    text_sitemaps: bool = False
    stylesheet: bool | str = False
    html: bool | HTMLView = False
    strict: bool = False
    provider_timeout: float = 30.0
    robots: Robots | None = Robots()
    http: HTTPSettings = HTTPSettings()
    hosts: TrustedHosts | None = None
    external_sitemaps: Sequence[str] = ()
    news_max_age: timedelta | None = timedelta(days=2)
    renders: Renders = Renders()
    observers: Sequence[DocumentObserver] = ()
    indexnow_key: str | None = None
    feeds: Sequence[Feed] = ()
    llms_txt: LlmsTxt | None = None
    changes: Changes | None = None
    guard: Guard | None = None
    dedupe: bool = False
    ledger: Ledger | None = None
    explain_path: str | None = None

    base: BaseURL = field(init=False, repr=False)
    html_view: HTMLView | None = field(init=False, repr=False)
    resolved_sections: tuple[_ResolvedSection, ...] = field(init=False, repr=False)
    guard_book: GuardBook | None = field(init=False, repr=False)
    ledger_book: LedgerBook | None = field(init=False, repr=False)
    fingerprint: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            base = BaseURL.parse(self.base_url)
        except InvalidEntryError as exc:
            raise ConfigurationError(str(exc)) from None
        object.__setattr__(self, "base", base)
        self._check_values()
        self._check_names()
        book = GuardBook(self.guard.action) if self.guard is not None else None
        object.__setattr__(self, "guard_book", book)
        ledger = LedgerBook(self.ledger, book) if self.ledger is not None else None
        object.__setattr__(self, "ledger_book", ledger)
        object.__setattr__(self, "external_sitemaps", self._check_externals())
        object.__setattr__(self, "resolved_sections", self._resolve_sections())
        object.__setattr__(self, "html_view", self._html_view())
        object.__setattr__(self, "fingerprint", self._fingerprint())
        self._check_feeds()

    def _check_feeds(self) -> None:
        """Feeds, llms.txt and the changes sitemap (``_feed_settings.check_documents``);
        the explain endpoint's path."""
        check_documents(self, page_like)
        check_explain_path(self.explain_path, self.routes())

    def _check_values(self) -> None:
        check_int("SitemapConfig", "max_urls_per_page", self.max_urls_per_page, 1, MAX_URLS)
        check_int("SitemapConfig", "max_bytes_per_page", self.max_bytes_per_page, 1024, MAX_BYTES)
        check_positive("SitemapConfig", "provider_timeout", self.provider_timeout, 86_400)
        for name, kind in (
            ("robots", Robots),
            ("http", HTTPSettings),
            ("hosts", TrustedHosts),
            ("renders", Renders),
            ("guard", Guard),
            ("ledger", Ledger),
        ):
            value = getattr(self, name)
            if not (isinstance(value, kind) or (value is None and name not in ("http", "renders"))):
                raise ConfigurationError(
                    f"SitemapConfig.{name} must be a {kind.__name__}, got {value!r}"
                )
        age = self.news_max_age
        if age is not None and not (isinstance(age, timedelta) and age > timedelta(0)):
            raise ConfigurationError(
                f"SitemapConfig.news_max_age must be a positive timedelta or None, got {age!r}"
            )
        stylesheet = self.stylesheet
        if not isinstance(stylesheet, bool):
            try:
                if isinstance(stylesheet, str) and any(
                    ord(c) < 0x21 or c == "\x7f" for c in stylesheet
                ):
                    # Entries get such characters percent-encoded; a setting is a typo.
                    raise InvalidEntryError(
                        "stylesheet", stylesheet, "contains whitespace or controls"
                    )
                normalize_loc(stylesheet, "stylesheet")
            except InvalidEntryError as exc:
                raise ConfigurationError(
                    f"SitemapConfig.stylesheet must be True, False or a URL: {exc}"
                ) from None
        for name in ("gzip_files", "text_sitemaps", "strict", "dedupe"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigurationError(
                    f"SitemapConfig.{name} must be True or False, got {getattr(self, name)!r}"
                )

    def _check_names(self) -> None:
        check_names(self)

    def _check_externals(self) -> tuple[str, ...]:
        values = self.external_sitemaps
        if isinstance(values, str) or not isinstance(values, Sequence):
            raise ConfigurationError(
                f"SitemapConfig.external_sitemaps must be a sequence of URLs, got {values!r}"
            )
        checked: list[str] = []
        ours = {self.base.file_url(self.sitemap_name), self.base.file_url(self.index_name)}
        for value in values:
            try:
                loc = normalize_loc(value, "external_sitemaps")
            except InvalidEntryError as exc:
                raise ConfigurationError(f"SitemapConfig.external_sitemaps: {exc}") from None
            if self.base.origin_url(loc) in ours:
                raise ConfigurationError(
                    f"SitemapConfig.external_sitemaps must not name our own {value!r}: the "
                    "index would list itself"
                )
            if loc in checked:
                raise ConfigurationError(f"SitemapConfig.external_sitemaps lists {value!r} twice")
            checked.append(loc)
        return tuple(checked)

    def _resolve_sections(self) -> tuple[_ResolvedSection, ...]:
        if not isinstance(self.sections, Mapping) or not self.sections:
            raise ConfigurationError(f"sections must be a non-empty mapping, got {self.sections!r}")
        resolved = []
        robots = robots_exclusion(self.robots)
        for name, value in self.sections.items():
            if not isinstance(name, str) or not _SECTION_NAME.fullmatch(name):
                raise ConfigurationError(
                    f"section name {name!r} must hold only ASCII letters, digits, '_' and inner '-'"
                )
            section = value if isinstance(value, Section) else Section(value)
            default = self.max_urls_per_page
            if section.news:
                default = min(default, MAX_NEWS_PER_FILE)
            max_urls = section.max_urls if section.max_urls is not None else default
            if max_urls > self.max_urls_per_page:
                raise ConfigurationError(
                    f"section {name!r}: max_urls must be from 1 to "
                    f"{self.max_urls_per_page} (max_urls_per_page), got {max_urls!r}"
                )
            ledger = self.ledger_book
            if self.ledger is not None and self.ledger.sections is not None:
                ledger = ledger if name in self.ledger.sections else None
            key = ledger.digest_key if ledger is not None else None
            try:
                provider = as_provider(section.provider, key)
            except TypeError as exc:
                raise ConfigurationError(f"section {name!r}: {exc}") from None
            if section.languages is not None:
                if not section.languages.listed_by(self.base):
                    raise ConfigurationError(
                        f"section {name!r}: Languages.sites names no language under "
                        f"{self.base.prefix}; this site would list nothing"
                    )
                provider = localized(provider, section.languages, self.base)
            kept: Exclusion | None = Exclusion(
                section.exclude, robots, self.guard_book, name, ledger
            )
            kept = kept if robots is not None else kept or None  # (append: rules come later)
            dedupe = self.dedupe and section.dedupe
            resolved.append(_ResolvedSection(name, provider, max_urls, section.news, kept, dedupe))
        return tuple(resolved)

    def _html_view(self) -> HTMLView | None:
        # Not part of the fingerprint: the XML documents (and their ETags) do not change
        # when the HTML views are switched on; the views' ETags add HTMLView.fingerprint.
        if isinstance(self.html, HTMLView):
            view = self.html
        elif self.html is True:
            view = HTMLView()
        elif self.html is False:
            return None
        else:
            raise ConfigurationError(f"html must be True, False or an HTMLView, got {self.html!r}")
        prefix = self.page_prefix if view.page_prefix is None else view.page_prefix
        for section in self.resolved_sections:
            if re.fullmatch(re.escape(prefix + section.name) + r"-\d+\.html", view.index_name):
                raise ConfigurationError(
                    f"HTMLView.index_name {view.index_name!r} is the name of a page view of "
                    f"section {section.name!r}; choose another name"
                )
        return view

    def _fingerprint(self) -> str:
        """Hash of every setting that shapes output, for ETags stable across processes."""
        from . import __version__

        robots = self.robots
        parts = [
            __version__,
            self.base.prefix,
            self.sitemap_name,
            self.index_name,
            self.page_prefix,
            str(self.max_bytes_per_page),
            repr(self.stylesheet),
            str(self.text_sitemaps),
            str(self.strict),
            repr([(s.name, s.max_urls, s.news) for s in self.resolved_sections]),
            *[
                f"{n}:{v.exclude}"
                for n, v in self.sections.items()
                if isinstance(v, Section) and v.exclude
            ],
            repr(None if robots is None else (robots.path, robots.mode, robots.groups)),
            str(self.gzip_files),
            repr(self.ledger and (self.ledger.source, self.ledger.digest)),
            str(self.http.gzip_level),
            repr(self.external_sitemaps),
            repr(self.news_max_age),
            repr(
                [
                    languages_key(v.languages if isinstance(v, Section) else None)
                    for v in self.sections.values()
                ]
            ),
            str(self.indexnow_key),
        ]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    def section(self, name: str) -> _ResolvedSection | None:
        for section in self.resolved_sections:
            if section.name == name:
                return section
        return None

    def routes(self) -> Routes:
        """The paths this site answers (each request is matched against them)."""
        view = self.html_view
        return Routes.make(
            directory=unquote(self.base.directory),
            robots_path=self.robots.path if self.robots is not None else None,
            sitemap_name=self.sitemap_name,
            index_name=self.index_name,
            page_prefix=self.page_prefix,
            sections=frozenset(s.name for s in self.resolved_sections),
            text_sitemaps=self.text_sitemaps,
            stylesheet=self.stylesheet is True,
            gzip_files=self.gzip_files,
            html_index=view.index_name if view is not None else None,
            html_prefix=None
            if view is None
            else (self.page_prefix if view.page_prefix is None else view.page_prefix),
            indexnow_file=f"{self.indexnow_key}.txt" if self.indexnow_key else None,
            feeds=frozenset(feed.name for feed in self.feeds),
            llms_txt=self.llms_txt.name if self.llms_txt is not None else None,
            changes=self.changes.name if self.changes is not None else None,
            explain_path=self.explain_path,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Tenants:
    """Several sites behind one middleware, each host with its own :class:`SitemapConfig`.

    ``sites`` maps a request host (lower-case ``host`` or ``host:port``; IDNA names as
    ``xn--``) to that site's configuration: its base URL, sections, robots rules. For
    many or changing sites, ``resolve(host)`` returns a configuration (or ``None`` for an
    unknown host); its answers are kept for the ``cache_size`` most recent hosts, so it
    must be cheap and may be called again later. Providers receive their tenant the
    way ``resolve`` builds them (a closure or an argument)::

        Tenants(resolve=lambda host: site_config(host) if host in SHOPS else None)

    Only the ``Host`` header picks the site (exact ``host:port`` first, then the host
    without its port); a host no site claims gets a 400 on sitemap and robots.txt paths.
    Each site's validators, render-store keys and Redis keys hold its own base URL, so
    sites never share a render.
    """

    sites: Mapping[str, SitemapConfig] = field(default_factory=dict)
    resolve: Callable[[str], SitemapConfig | None] | None = None
    cache_size: int = 256

    def __post_init__(self) -> None:
        if not isinstance(self.sites, Mapping):
            raise ConfigurationError(f"Tenants.sites must be a mapping, got {self.sites!r}")
        for host, config in self.sites.items():
            if not (isinstance(host, str) and HOST_PATTERN.fullmatch(host)):
                raise ConfigurationError(
                    f"Tenants.sites keys must be lower-case ASCII host[:port], got {host!r}"
                )
            if not isinstance(config, SitemapConfig):
                raise ConfigurationError(
                    f"Tenants.sites[{host!r}] must be a SitemapConfig, got {config!r}"
                )
        if self.resolve is not None and not callable(self.resolve):
            raise ConfigurationError(f"Tenants.resolve must be callable, got {self.resolve!r}")
        if not self.sites and self.resolve is None:
            raise ConfigurationError("Tenants needs sites, resolve, or both")
        check_int("Tenants", "cache_size", self.cache_size, 1, 1_000_000)
