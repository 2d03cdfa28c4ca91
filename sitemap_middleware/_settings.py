"""Small configuration values, one per feature, each validated when it is created.

:class:`SitemapConfig` holds one of each; every layer is handed only the value it reads
(robots.txt gets :class:`Robots`, the host policy :class:`TrustedHosts`, the reply
headers :class:`HTTPSettings`, stored renders and their ETags :class:`Renders`).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ._caches.store import RenderStore
from ._exceptions import ConfigurationError
from ._sansio.limits import MAX_BYTES

__all__ = [
    "HOST_PATTERN",
    "HTTPSettings",
    "Renders",
    "Robots",
    "RobotsGroup",
    "TrustedHosts",
    "check_int",
    "check_positive",
    "is_exact_host",
]

# Characters urllib.robotparser (str.splitlines) and some crawlers read as line breaks,
# plus "#" (a comment would cut the rule short): a robots.txt value may hold none of them.
_ROBOTS_FORBIDDEN = re.compile("[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029#]")
# RFC 9110 §5.5: a field value is visible ASCII, space and tab; CR, LF and NUL never.
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
#: A lower-case ASCII host name or a bracketed IPv6 literal (RFC 3986 §3.2.2, as a Host
#: header carries it), with an optional port (IDNA names as xn--).
HOST_PATTERN = re.compile(r"(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]+)?", re.ASCII)


def is_exact_host(host: str) -> bool:
    """Whether ``host`` is one exact ``host[:port]`` (an IPv6 literal must be a valid one)."""
    if not HOST_PATTERN.fullmatch(host):
        return False
    if not host.startswith("["):
        return True
    try:
        ipaddress.IPv6Address(host[1 : host.index("]")])
    except ValueError:
        return False
    return True


def check_int(owner: str, name: str, value: object, low: int, high: int) -> None:
    """Raise ConfigurationError unless ``value`` is an int in ``[low, high]`` (no bools)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigurationError(
            f"{owner}.{name} must be an integer from {low} to {high}, got {value!r}"
        )


def check_positive(owner: str, name: str, value: object, high: float) -> None:
    """Raise ConfigurationError unless ``value`` is a number in ``(0, high]`` (no bools).

    A setting's number; an entry's (a priority, a video's rating) is read by
    ``_sansio/values.py``'s ``check_number``, which takes text and raises
    InvalidEntryError."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 < value <= high  # also false for NaN
    ):
        raise ConfigurationError(
            f"{owner}.{name} must be a number > 0 and <= {high}, got {value!r}"
        )


def _check_header(owner: str, name: str, value: object) -> None:
    if value is not None and not (isinstance(value, str) and _HEADER_VALUE.fullmatch(value)):
        raise ConfigurationError(
            f"{owner}.{name} must be a header value of visible ASCII (no CR, LF or control "
            f"characters), or None, got {value!r}"
        )


def _strings(owner: str, name: str, values: object) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    if not isinstance(values, Sequence):
        raise ConfigurationError(f"{owner}.{name} must be a sequence of strings, got {values!r}")
    for value in values:
        if not isinstance(value, str):
            raise ConfigurationError(f"{owner}.{name} entries must be strings, got {value!r}")
    return tuple(values)


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
            values = _strings("RobotsGroup", name, getattr(self, name))
            for value in values:
                if _ROBOTS_FORBIDDEN.search(value) or not value.isprintable():
                    raise ConfigurationError(
                        f"RobotsGroup.{name} entries must be one-line strings without '#' or "
                        f"control characters, got {value!r}"
                    )
                if name != "user_agents" and value and not value.startswith(("/", "*")):
                    raise ConfigurationError(
                        f"RobotsGroup.{name} paths must start with '/' or '*', got {value!r}"
                    )
            object.__setattr__(self, name, values)
        if not self.user_agents or not all(self.user_agents):
            raise ConfigurationError("RobotsGroup.user_agents must name at least one agent")


#: The crawlers that read sitemaps to index a site (their robots.txt product tokens):
#: their groups' rules, with ``*``'s, decide what sitemaps leave out.
SEARCH_CRAWLERS: tuple[str, ...] = (
    "Googlebot",
    "Bingbot",
    "Applebot",
    "DuckDuckBot",
    "YandexBot",
    "Baiduspider",
    "Slurp",
    "Yeti",
    "SeznamBot",
    "PetalBot",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Robots:
    """robots.txt: where it is answered and what it says.

    :param path: where robots.txt is answered (an absolute path ending in /robots.txt).
    :param groups: user-agent groups of a generated robots.txt.
    :param mode: ``"generate"`` writes robots.txt from ``groups``; ``"append"`` serves the
        app's own robots.txt with our ``Sitemap:`` line added (``groups`` are used when
        the app answers a 4xx other than 429: it has no robots.txt).
    :param app_timeout: in ``"append"`` mode, seconds the app has to answer its own
        robots.txt; past that (or on an error) robots.txt answers 503, never an
        allow-everything file in place of the app's rules.
    :param sitemap_agents: besides ``*``, the user agents whose rules leave URLs out of
        the sitemaps: the crawlers that read sitemaps (``SEARCH_CRAWLERS``). A group for
        another agent (an AI crawler kept off the whole site) leaves nothing out.
    """

    path: str = "/robots.txt"
    groups: Sequence[RobotsGroup] = (RobotsGroup(),)
    mode: Literal["generate", "append"] = "generate"
    app_timeout: float = 5.0
    sitemap_agents: Sequence[str] = SEARCH_CRAWLERS

    def __post_init__(self) -> None:
        if not (
            isinstance(self.path, str)
            and self.path.startswith("/")
            and self.path.endswith("/robots.txt")
            and self.path.isascii()
            and self.path.isprintable()
        ):
            raise ConfigurationError(
                "Robots.path must be an absolute ASCII path ending in /robots.txt, "
                f"got {self.path!r}"
            )
        if isinstance(self.groups, RobotsGroup):
            object.__setattr__(self, "groups", (self.groups,))
        groups = tuple(self.groups)
        if not all(isinstance(group, RobotsGroup) for group in groups):
            raise ConfigurationError(f"Robots.groups must hold RobotsGroup objects, got {groups!r}")
        object.__setattr__(self, "groups", groups)
        if self.mode not in ("generate", "append"):
            raise ConfigurationError(
                f"Robots.mode must be 'generate' or 'append', got {self.mode!r}"
            )
        check_positive("Robots", "app_timeout", self.app_timeout, 300)
        agents = self.sitemap_agents
        if isinstance(agents, str) or not all(isinstance(a, str) and a for a in agents):
            raise ConfigurationError(
                f"Robots.sitemap_agents must be a sequence of user agents, got {agents!r}"
            )
        object.__setattr__(self, "sitemap_agents", tuple(agents))


@dataclass(frozen=True, slots=True, kw_only=True)
class HTTPSettings:
    """How replies are encoded and which caching headers they carry.

    :param gzip: negotiate gzip with clients that accept it.
    :param gzip_level: zlib level 1-9. 1 by default: on a 50,000-URL page level 6 makes
        the body 7% smaller for twice the compression time (benchmarks/results).
    :param cache_control: ``Cache-Control`` of sitemap and robots.txt replies (``None``
        to omit).
    :param x_robots_tag: ``X-Robots-Tag`` of sitemap documents (``None`` to omit).
    :param retry_after: ``Retry-After`` seconds on a 503 from a failing provider.
    :param trust_provider_times: answer ``If-Modified-Since`` with a 304 from a provider's
        time alone (a time-only ``ProviderVersion``: Django's ``GenericSitemap``, or any
        ``Sitemap`` under ``item_dates=True``), as Django's ``ConditionalGetMiddleware``
        would. Off by default: a time cannot tell that an older item was deleted, so such
        a 304 can be stale. The ``Last-Modified`` header is sent either way.
    """

    gzip: bool = True
    gzip_level: int = 1
    cache_control: str | None = "public, max-age=3600"
    x_robots_tag: str | None = "noindex"
    retry_after: int = 120
    trust_provider_times: bool = False

    def __post_init__(self) -> None:
        for name in ("gzip", "trust_provider_times"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                message = f"HTTPSettings.{name} must be True or False, got {value!r}"
                raise ConfigurationError(message)
        check_int("HTTPSettings", "gzip_level", self.gzip_level, 1, 9)
        check_int("HTTPSettings", "retry_after", self.retry_after, 0, 86_400)
        _check_header("HTTPSettings", "cache_control", self.cache_control)
        _check_header("HTTPSettings", "x_robots_tag", self.x_robots_tag)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustedHosts:
    """Opt-in: answer for the request's host when it is on an allow-list.

    By default every URL comes from ``base_url`` and no request header is read. With
    ``TrustedHosts(hosts=[...])`` the ``Host`` header may pick another allow-listed host
    (any other host gets a 400).

    Behind reverse proxies, ``forwarded`` names the one header family the proxies write
    (``"x-forwarded"``: ``X-Forwarded-Host``/``-Proto``; ``"forwarded"``: RFC 7239) and
    ``proxies`` how many of them append to it. As with werkzeug's ``ProxyFix``, values
    are counted from the right: the ``proxies``-th value from the end is the one the
    outermost trusted proxy wrote; anything a client sent sits left of it and is never
    used. Security: set ``proxies`` to exactly the number of proxies in front of the app.

    :param hosts: lower-case ``host`` or ``host:port`` names.
    :param forwarded: ``None`` (read ``Host`` only), ``"x-forwarded"`` or ``"forwarded"``.
    :param proxies: how many trusted proxies append to the forwarded header.
    """

    hosts: Sequence[str]
    forwarded: Literal["x-forwarded", "forwarded"] | None = None
    proxies: int = 1

    def __post_init__(self) -> None:
        hosts = _strings("TrustedHosts", "hosts", self.hosts)
        if isinstance(self.hosts, str):
            raise ConfigurationError(
                "TrustedHosts.hosts must be a sequence of host names, not a string"
            )
        for host in hosts:
            if not is_exact_host(host):
                raise ConfigurationError(
                    f"TrustedHosts.hosts entries must be lower-case ASCII host[:port] (IDNA "
                    f"names as xn--, IPv6 as [::1]), got {host!r}"
                )
        if not hosts:
            raise ConfigurationError("TrustedHosts.hosts must name at least one host")
        object.__setattr__(self, "hosts", hosts)
        if self.forwarded not in (None, "x-forwarded", "forwarded"):
            raise ConfigurationError(
                "TrustedHosts.forwarded must be None, 'x-forwarded' or 'forwarded', "
                f"got {self.forwarded!r}"
            )
        check_int("TrustedHosts", "proxies", self.proxies, 1, 16)


@dataclass(frozen=True, slots=True, kw_only=True)
class Renders:
    """Rendered documents: shared by concurrent requests and instances, served stale.

    Concurrent requests for one document always share one provider pass. Complete
    renders are stored by ETag, so a later request for the same version is answered
    from the stored bytes; with ``store=RedisRenderStore(url)`` a fleet renders each
    version once (a short lock) and agrees on validators and ``Last-Modified``.

    :param etag: where a document's ETag comes from. ``"version"`` (the default): from
        its providers' versions; a document some provider cannot version streams
        without validators. ``"content"``: such a document is rendered whole first (up
        to ``max_bytes``; a larger one streams without validators) and tagged by its
        bytes, then stored like any other render.
    :param content_ttl: with ``etag="content"``, seconds a render tagged by its bytes
        answers without reading the providers again (they cannot say whether it
        changed), counted from when they were asked for it; past it the document is
        rendered again for its tag.
    :param store: a :class:`RenderStore`; ``None`` keeps renders in this process.
    :param memory_bytes: bodies (identity and gzip) kept by the in-process store, least
        recently used out. 256 MiB by default: a 1,000,000-URL section of 20 full pages
        (8.6 MB each, 0.5-1 MB gzipped) fits with room to spare; size it as pages x
        (page bytes + its gzip) for the sections crawlers revisit.
    :param max_bytes: largest document stored (and, with ``etag="content"``, buffered
        for its tag); also the most one shared render holds in memory for requests
        reading it at different speeds. ``None`` (the default): the
        page budget, ``SitemapConfig.max_bytes_per_page``, so every full page is stored.
    :param ttl: seconds a stored render answers without asking the provider anything.
    :param stale_while_revalidate: seconds past ``ttl`` a stored render still answers
        while one refresh runs in the background (RFC 5861; asyncio only).
    :param stale_if_error: seconds past ``ttl`` a stored render answers, with its own
        validators, when the provider fails (RFC 5861).
    :param lock_ttl: seconds one instance may hold a document's render lock.
    :param plan_ttl: seconds the section plans (page counts and lastmods) of a site are
        reused when some provider reports no version (with versions: while they hold).
    :param warm_up: plan every section in the background once an ASGI app has started
        (lifespan), so the first index finds its plans; under WSGI, which has no start-up
        to hook, from the first request the middleware sees (any path), once per process
        (or from ``WSGISitemapMiddleware.warm_up()``, e.g. in a server's start-up hook).
    :param plan_directory: a folder where section plans are kept as files, so that a
        restarted process serves its first index without planning again (each plan is
        for one version: a section that changed meanwhile is planned anew). For a site
        without Redis; a store that shares plans (:class:`RedisRenderStore`) keeps them
        itself and this is not used. Sections taking part in ``dedupe`` are never kept
        (their fingerprints are the process's own): see ``Section(dedupe=False)``.
    """

    etag: Literal["version", "content"] = "version"
    content_ttl: float = 60.0
    store: RenderStore | None = None
    memory_bytes: int = 256 * 1024 * 1024
    max_bytes: int | None = None
    ttl: float = 0.0
    stale_while_revalidate: float = 0.0
    stale_if_error: float = 0.0
    lock_ttl: float = 10.0
    plan_ttl: float = 5.0
    warm_up: bool = False
    plan_directory: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        if self.store is not None and not isinstance(self.store, RenderStore):
            raise ConfigurationError(
                f"Renders.store must implement RenderStore, got {self.store!r}"
            )
        if self.etag not in ("version", "content"):
            raise ConfigurationError(
                f"Renders.etag must be 'version' or 'content', got {self.etag!r}"
            )
        check_int("Renders", "memory_bytes", self.memory_bytes, 0, 2**40)
        if self.max_bytes is not None:
            check_int("Renders", "max_bytes", self.max_bytes, 1024, MAX_BYTES)
        for name in ("ttl", "stale_while_revalidate", "stale_if_error", "plan_ttl", "content_ttl"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 <= value <= 86_400 * 365  # also false for NaN
            ):
                raise ConfigurationError(
                    f"Renders.{name} must be a number of seconds from 0 to 31536000, got {value!r}"
                )
        check_positive("Renders", "lock_ttl", self.lock_ttl, 3600)
        if not isinstance(self.warm_up, bool):
            raise ConfigurationError(f"Renders.warm_up must be True or False, got {self.warm_up!r}")
        if self.plan_directory is not None and not isinstance(
            self.plan_directory, str | os.PathLike
        ):
            raise ConfigurationError(
                f"Renders.plan_directory must be a path, got {self.plan_directory!r}"
            )
