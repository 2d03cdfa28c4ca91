"""Feed and llms.txt settings: small validated values, like those of ``_settings.py``.

``SitemapConfig(feeds=[Feed(...)], llms_txt=LlmsTxt(...))`` serves documents made from
the same providers as the sitemaps (see ``_sansio/feeds.py`` and ``_engine/feeds.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal, Protocol

from ._exceptions import ConfigurationError
from ._sansio.limits import MAX_URLS
from ._sansio.values import check_text
from ._settings import check_int, check_positive

__all__ = ["CHANGES_NAME", "MAX_FEED_ENTRIES", "Changes", "DocumentNames", "Feed", "LlmsTxt"]
__all__ += ["check_documents"]

#: A feed lists at most this many entries: they are held in memory while a section is read.
MAX_FEED_ENTRIES = 10_000
_FEED_NAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")


def _check_sections(owner: str, sections: object) -> tuple[str, ...]:
    if isinstance(sections, str) or not isinstance(sections, Sequence) or not sections:
        raise ConfigurationError(f"{owner}.sections must be a non-empty list of section names")
    names = tuple(sections)
    if not all(isinstance(name, str) for name in names) or len(set(names)) != len(names):
        raise ConfigurationError(f"{owner}.sections must name each section once, got {names!r}")
    return names


def _text(owner: str, name: str, value: object, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    try:
        return check_text(f"{owner}.{name}", value, max_length=1024)
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class Feed:
    """An Atom 1.0 (``format="atom"``) or RSS 2.0 (``"rss"``) feed of the ``limit``
    entries of ``sections`` with the newest lastmod, newest first.

    Served as ``name`` in the sitemap directory and listed in robots.txt. Entries without
    a lastmod cannot be ordered by recency and are left out (counted, logged once).
    ``title`` defaults to the site's host; ``author`` (Atom requires one) to the title;
    ``description`` (RSS requires one) to the title.
    """

    name: str
    sections: Sequence[str]
    limit: int = 100
    title: str | None = None
    format: Literal["atom", "rss"] = "atom"
    author: str | None = None
    description: str | None = None

    def __post_init__(self) -> None:
        if not (
            isinstance(self.name, str)
            and _FEED_NAME.fullmatch(self.name)
            and not self.name.endswith((".gz", ".txt", ".html", ".xsl"))
        ):
            raise ConfigurationError(
                "Feed.name must be a file name such as 'feed.atom' or 'feed.xml', "
                f"got {self.name!r}"
            )
        object.__setattr__(self, "sections", _check_sections("Feed", self.sections))
        check_int("Feed", "limit", self.limit, 1, MAX_FEED_ENTRIES)
        if self.format not in ("atom", "rss"):
            raise ConfigurationError(f"Feed.format must be 'atom' or 'rss', got {self.format!r}")
        for name in ("title", "author", "description"):
            object.__setattr__(self, name, _text("Feed", name, getattr(self, name), True))

    @property
    def key(self) -> str:
        """What of the feed shapes its bytes (part of its ETag)."""
        return repr(
            (
                self.name,
                self.sections,
                self.limit,
                self.title,
                self.format,
                self.author,
                self.description,
            )
        )


@dataclass(frozen=True, slots=True)
class LlmsTxt:
    """An ``/llms.txt`` (llmstxt.org): ``# title``, ``> summary``, then one ``## heading``
    per key of ``sections``, listing the entries of the sitemap sections it names as
    ``- [title](url)`` links, in provider order, at most ``limit`` per heading.

    Served as ``llms.txt`` in the sitemap directory (``/llms.txt`` for a site at the root).
    """

    title: str
    sections: Mapping[str, Sequence[str]]
    summary: str | None = None
    limit: int = 500
    name: str = field(default="llms.txt", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "title", _text("LlmsTxt", "title", self.title))
        object.__setattr__(self, "summary", _text("LlmsTxt", "summary", self.summary, True))
        if not isinstance(self.sections, Mapping) or not self.sections:
            raise ConfigurationError("LlmsTxt.sections must map headings to section names")
        checked = {}
        for heading, names in self.sections.items():
            _text("LlmsTxt", "sections heading", heading)
            checked[heading] = _check_sections(f"LlmsTxt.sections[{heading!r}]", names)
        object.__setattr__(self, "sections", checked)
        check_int("LlmsTxt", "limit", self.limit, 1, MAX_FEED_ENTRIES)

    @property
    def key(self) -> str:
        """What of the file shapes its bytes (part of its ETag)."""
        return repr((self.title, self.summary, sorted(self.sections.items()), self.limit))

    def all_sections(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for names in self.sections.values() for n in names))


#: The changes sitemap's default file name (``check`` knows it by its ending).
CHANGES_NAME = "sitemap-changes.xml"


@dataclass(frozen=True, slots=True)
class Changes:
    """A changes sitemap: a urlset of the entries whose lastmod is within the last
    ``hours`` hours, newest first, at most ``limit`` (picked in O(limit) memory), from
    ``sections`` (``None``: every section).

    Served as ``name`` in the sitemap directory and listed first in the index, so a
    crawler re-fetches one small file to find what changed. Entries without a lastmod
    are left out (nothing tells when they changed). The index lists it only while a page
    of its sections has a lastmod within the window; with nothing changed the document
    answers 404 (the sitemap XSD refuses an empty urlset). ``sitemap.xml`` is then
    always the index.
    """

    hours: float = 24
    sections: Sequence[str] | None = None
    limit: int = MAX_URLS
    name: str = CHANGES_NAME

    def __post_init__(self) -> None:
        if not (
            isinstance(self.name, str)
            and _FEED_NAME.fullmatch(self.name)
            and self.name.endswith(".xml")
        ):
            raise ConfigurationError(
                f"Changes.name must be a file name ending in .xml, got {self.name!r}"
            )
        if self.sections is not None:
            object.__setattr__(self, "sections", _check_sections("Changes", self.sections))
        check_positive("Changes", "hours", self.hours, 24 * 366)
        check_int("Changes", "limit", self.limit, 1, MAX_URLS)

    @property
    def window(self) -> timedelta:
        return timedelta(hours=self.hours)

    @property
    def key(self) -> str:
        """What of the document shapes its bytes (part of its ETag)."""
        return repr((self.name, self.sections, self.hours, self.limit))


class DocumentNames(Protocol):
    """The names a ``SitemapConfig`` gives its own documents (the config imports this
    module, never the other way round)."""

    @property
    def sitemap_name(self) -> str: ...
    @property
    def index_name(self) -> str: ...
    @property
    def page_prefix(self) -> str: ...
    @property
    def indexnow_key(self) -> str | None: ...


class Site(DocumentNames, Protocol):
    """What :func:`check_documents` reads of a ``SitemapConfig``."""

    @property
    def feeds(self) -> Sequence[Feed]: ...
    @property
    def llms_txt(self) -> LlmsTxt | None: ...
    @property
    def changes(self) -> Changes | None: ...
    def section(self, name: str) -> object | None: ...


def check_documents(config: Site, page_like: Callable[[str, str], bool]) -> None:
    """Feeds, llms.txt and the changes sitemap name sections that exist, and files
    nothing else is called (``page_like``: the form of a page name)."""
    feeds, llms, changes = config.feeds, config.llms_txt, config.changes
    if isinstance(feeds, str | Feed) or not all(isinstance(f, Feed) for f in feeds):
        raise ConfigurationError(f"SitemapConfig.feeds must be a list of Feed, got {feeds!r}")
    if llms is not None and not isinstance(llms, LlmsTxt):
        raise ConfigurationError(f"SitemapConfig.llms_txt must be an LlmsTxt, got {llms!r}")
    if changes is not None and not isinstance(changes, Changes):
        raise ConfigurationError(f"SitemapConfig.changes must be a Changes, got {changes!r}")
    object.__setattr__(config, "feeds", tuple(feeds))
    taken = {config.sitemap_name, config.index_name, f"{config.indexnow_key}.txt", "llms.txt"}
    wanted = [(f"feed {f.name!r}", f.sections) for f in config.feeds]
    if llms is not None:
        wanted.append(("llms_txt", llms.all_sections()))
    named = [("Feed.name", feed.name) for feed in config.feeds]
    if changes is not None:
        named.append(("Changes.name", changes.name))
        wanted.append(("changes", changes.sections or ()))
    ledger = getattr(config, "ledger", None)
    if ledger is not None and ledger.sections is not None:
        wanted.append(("ledger", ledger.sections))
    for owner, name in named:
        if name in taken or page_like(config.page_prefix, name):
            raise ConfigurationError(
                f"{owner} {name!r} is taken by another document; choose another name"
            )
        taken.add(name)
    for owner, names in wanted:
        for name in names:
            if config.section(name) is None:
                raise ConfigurationError(f"{owner} names no section {name!r}")
