"""Configuration: validated once, immutable afterwards."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ._caches.memory import RenderCache
from ._exceptions import ConfigurationError, InvalidEntryError
from ._providers.base import ProviderLike, UrlProvider, as_provider
from ._sansio.urls import BaseURL

__all__ = ["RobotsGroup", "Section", "SitemapConfig"]

#: sitemaps.org per-file limits (uncompressed).
MAX_URLS = 50_000
MAX_BYTES = 52_428_800
_SECTION_NAME = re.compile(r"[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*")
_FILE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class RobotsGroup:
    """One robots.txt group (RFC 9309): user agents and their allow/disallow rules.

    The default group lets every crawler in everywhere.
    """

    user_agents: Sequence[str] = ("*",)
    allow: Sequence[str] = ()
    disallow: Sequence[str] = ()

    def __post_init__(self) -> None:
        for name in ("user_agents", "allow", "disallow"):
            values = getattr(self, name)
            if isinstance(values, str):
                values = (values,)
            values = tuple(values)
            for value in values:
                if not isinstance(value, str) or any(c in value for c in "\r\n#"):
                    raise ConfigurationError(
                        f"RobotsGroup.{name} entries must be one-line strings, got {value!r}"
                    )
                if name != "user_agents" and value and not value.startswith(("/", "*")):
                    raise ConfigurationError(
                        f"RobotsGroup.{name} paths must start with '/' or '*', got {value!r}"
                    )
            object.__setattr__(self, name, values)
        if not self.user_agents:
            raise ConfigurationError("RobotsGroup.user_agents must name at least one agent")


@dataclass(frozen=True, slots=True)
class Section:
    """A provider plus per-section settings.

    ``max_urls`` caps a page below the protocol's 50,000 (use 1,000 for Google News).
    A plain provider in ``SitemapConfig.sections`` is a section with defaults.
    """

    provider: ProviderLike
    max_urls: int | None = None


@dataclass(frozen=True, slots=True)
class _ResolvedSection:
    name: str
    provider: UrlProvider
    max_urls: int


@dataclass(frozen=True, kw_only=True)
class SitemapConfig:
    """Everything the middleware needs: where it lives, what it lists, how it answers.

    :param base_url: public URL of the site (or the directory sitemaps live in, such as
        ``https://example.com/shop``). Every absolute URL written comes from it, never
        from the request's ``Host`` header.
    :param sections: section name to provider (or :class:`Section`). Names may hold
        letters, digits, ``_`` and inner ``-``; each becomes ``sitemap-<name>-<page>.xml``.
    :param max_urls_per_page: URLs per sitemap page, at most 50,000.
    :param max_bytes_per_page: uncompressed bytes per page, at most 50 MiB.
    :param robots_path: where robots.txt is answered (``None`` leaves it to the app).
    :param robots_groups: user-agent groups of the generated robots.txt.
    :param robots_mode: ``"generate"`` writes robots.txt; ``"append"`` serves the app's own
        robots.txt and appends our ``Sitemap:`` lines to it.
    :param gzip: negotiate gzip with clients that accept it.
    :param gzip_level: zlib level 1-9. 1 by default: on a 50,000-URL page level 6 makes
        the body 7% smaller for twice the compression time (benchmarks/results).
    :param gzip_files: also serve ``.xml.gz`` files that are always gzip.
    :param text_sitemaps: also serve ``.txt`` sitemaps (one URL a line).
    :param stylesheet: ``True`` serves a built-in XSL view and references it from every
        XML document; a string references your own stylesheet URL instead.
    :param cache_control: ``Cache-Control`` of sitemap and robots.txt responses.
    :param x_robots_tag: ``X-Robots-Tag`` of sitemap documents (``None`` to omit).
    :param strict: raise on an invalid entry instead of leaving it out with a warning.
    :param provider_timeout: seconds one provider call (metadata, or one batch of
        entries) may take before the request is given up.
    :param retry_after: ``Retry-After`` seconds on a 503 from a failing provider.
    :param fallback_validators: for providers that report neither a version nor a
        last-modified time: ``"none"`` streams without ETag; ``"render"`` renders pages up
        to ``render_cache_max_bytes`` into a bounded cache and derives the ETag from them.
    :param render_cache: where ``"render"`` keeps rendered pages: by default an in-process
        LRU of ``render_cache_size`` pages for ``render_cache_ttl`` seconds; a
        :class:`RedisRenderCache` shares them between the instances of an app.
    :param trusted_hosts: opt-in: hosts whose ``Host`` header may replace the base URL's
        host. Any other host gets a 400. Leave empty behind untrusted proxies.
    :param trust_forwarded: with ``trusted_hosts``, read the host and protocol a proxy
        reports: RFC 7239 ``Forwarded`` if present, else ``X-Forwarded-Host``/``-Proto``.
    """

    base_url: str
    sections: Mapping[str, ProviderLike | Section]
    max_urls_per_page: int = MAX_URLS
    max_bytes_per_page: int = MAX_BYTES
    sitemap_name: str = "sitemap.xml"
    index_name: str = "sitemap_index.xml"
    page_prefix: str = "sitemap-"
    robots_path: str | None = "/robots.txt"
    robots_groups: Sequence[RobotsGroup] = (RobotsGroup(),)
    robots_mode: Literal["generate", "append"] = "generate"
    gzip: bool = True
    gzip_level: int = 1
    gzip_files: bool = True
    text_sitemaps: bool = False
    stylesheet: bool | str = False
    cache_control: str | None = "public, max-age=3600"
    x_robots_tag: str | None = "noindex"
    strict: bool = False
    provider_timeout: float = 30.0
    retry_after: int = 120
    fallback_validators: Literal["none", "render"] = "none"
    render_cache_max_bytes: int = 8 * 1024 * 1024
    render_cache_size: int = 16
    render_cache_ttl: float = 60.0
    render_cache: RenderCache | None = None
    trusted_hosts: Sequence[str] = ()
    trust_forwarded: bool = False

    base: BaseURL = field(init=False, repr=False)
    resolved_sections: tuple[_ResolvedSection, ...] = field(init=False, repr=False)
    fingerprint: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            base = BaseURL.parse(self.base_url)
        except InvalidEntryError as exc:
            raise ConfigurationError(str(exc)) from None
        object.__setattr__(self, "base", base)
        self._check_numbers()
        self._check_names()
        object.__setattr__(self, "resolved_sections", self._resolve_sections())
        object.__setattr__(self, "fingerprint", self._fingerprint())

    def _check_numbers(self) -> None:
        checks = [
            ("max_urls_per_page", self.max_urls_per_page, 1, MAX_URLS),
            ("max_bytes_per_page", self.max_bytes_per_page, 1024, MAX_BYTES),
            ("gzip_level", self.gzip_level, 1, 9),
            ("retry_after", self.retry_after, 0, 86_400),
            ("render_cache_size", self.render_cache_size, 0, 100_000),
        ]
        for name, value, low, high in checks:
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigurationError(
                    f"{name} must be an integer from {low} to {high}, got {value!r}"
                )
        if not (isinstance(self.provider_timeout, int | float) and self.provider_timeout > 0):
            raise ConfigurationError(f"provider_timeout must be > 0, got {self.provider_timeout!r}")
        if self.fallback_validators not in ("none", "render"):
            raise ConfigurationError(
                f"fallback_validators must be 'none' or 'render', got {self.fallback_validators!r}"
            )
        if self.render_cache is not None and self.fallback_validators != "render":
            raise ConfigurationError(
                "render_cache is used only with fallback_validators='render'; set both"
            )
        if self.robots_mode not in ("generate", "append"):
            raise ConfigurationError(
                f"robots_mode must be 'generate' or 'append', got {self.robots_mode!r}"
            )

    def _check_names(self) -> None:
        for name in ("sitemap_name", "index_name"):
            value = getattr(self, name)
            if not (
                isinstance(value, str) and _FILE_NAME.fullmatch(value) and value.endswith(".xml")
            ):
                raise ConfigurationError(
                    f"{name} must be a file name ending in .xml, got {value!r}"
                )
        if not (isinstance(self.page_prefix, str) and _FILE_NAME.fullmatch(self.page_prefix)):
            raise ConfigurationError(
                f"page_prefix must be a file-name prefix, got {self.page_prefix!r}"
            )
        if self.robots_path is not None and not (
            isinstance(self.robots_path, str)
            and self.robots_path.endswith("/robots.txt")
            and self.robots_path.startswith("/")
        ):
            raise ConfigurationError(
                "robots_path must be an absolute path ending in /robots.txt, "
                f"got {self.robots_path!r}"
            )
        if isinstance(self.trusted_hosts, str):
            raise ConfigurationError("trusted_hosts must be a sequence of host names, not a string")
        for host in self.trusted_hosts:
            if not isinstance(host, str) or not re.fullmatch(r"[a-z0-9.-]+(?::\d+)?", host):
                raise ConfigurationError(
                    f"trusted_hosts entries must be lower-case host[:port], got {host!r}"
                )
        for group in self.robots_groups:
            if not isinstance(group, RobotsGroup):
                raise ConfigurationError(
                    f"robots_groups must hold RobotsGroup objects, got {group!r}"
                )

    def _resolve_sections(self) -> tuple[_ResolvedSection, ...]:
        if not isinstance(self.sections, Mapping) or not self.sections:
            raise ConfigurationError(f"sections must be a non-empty mapping, got {self.sections!r}")
        resolved = []
        for name, value in self.sections.items():
            if not isinstance(name, str) or not _SECTION_NAME.fullmatch(name):
                raise ConfigurationError(
                    f"section name {name!r} must hold only letters, digits, '_' and inner '-'"
                )
            section = value if isinstance(value, Section) else Section(value)
            max_urls = section.max_urls or self.max_urls_per_page
            if not 1 <= max_urls <= self.max_urls_per_page:
                raise ConfigurationError(
                    f"section {name!r}: max_urls must be from 1 to "
                    f"{self.max_urls_per_page}, got {max_urls!r}"
                )
            try:
                provider = as_provider(section.provider)
            except TypeError as exc:
                raise ConfigurationError(f"section {name!r}: {exc}") from None
            resolved.append(_ResolvedSection(name, provider, max_urls))
        return tuple(resolved)

    def _fingerprint(self) -> str:
        """Hash of every setting that shapes output, for ETags stable across processes."""
        from . import __version__

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
            repr([(s.name, s.max_urls) for s in self.resolved_sections]),
            repr([(g.user_agents, g.allow, g.disallow) for g in self.robots_groups]),
            str(self.robots_path),
            str(self.gzip_files),
            str(self.gzip_level),
        ]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    def section(self, name: str) -> _ResolvedSection | None:
        for section in self.resolved_sections:
            if section.name == name:
                return section
        return None
