"""``sitemap-middleware generate``: static sitemap files from a URL list or a legacy sitemap.

The sources (a text file of URLs, a sitemap, an index, a feed: local files or URLs) are
read with :func:`.parse.parse_sitemap`; an index's children are read too (from a local
file of the same name beside the index when there is one, else over HTTP). The entries
then go to the middleware itself, a :class:`StaticProvider` behind an app that is never
written, and :func:`.export.export_app` writes what it serves: the same page planning,
the same writers, the same atomic replacement and manifest as ``export``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from .._adapters.asgi import ASGISitemapMiddleware
from .._config import SitemapConfig
from .._exceptions import SitemapError
from .._providers.base import StaticProvider
from .._sansio.models import SitemapEntry
from .export import ExportResult, export_app
from .fetch import USER_AGENT, Fetcher
from .parse import ParsedSitemap, parse_sitemap
from .rules import origin_of

__all__ = ["generate", "read_sources"]


def _is_url(source: str) -> bool:
    return urlsplit(source).scheme in ("http", "https")


class _Reader:
    def __init__(self, fetcher: Fetcher | None) -> None:
        self.fetcher = fetcher
        self.entries: dict[str, SitemapEntry] = {}
        self.warnings: list[str] = []

    async def read(self, source: str) -> ParsedSitemap:
        """The parsed source; ``ValueError`` (the CLI's exit 2) naming it if unreadable."""
        try:
            return await self._read(source)
        except OSError as exc:
            raise ValueError(f"cannot read {source}: {exc.strerror or exc}") from None
        except SitemapError as exc:
            raise ValueError(f"cannot read {source}: {exc}") from None

    async def _read(self, source: str) -> ParsedSitemap:
        if not _is_url(source):
            return parse_sitemap(source)
        if self.fetcher is None:
            raise ValueError(f"{source}: reading URLs needs httpx (the cli extra)")
        fetched = await self.fetcher.fetch(source, headers={"Accept-Encoding": "gzip"}, redirects=5)
        if fetched.error is not None or fetched.status != 200:
            raise ValueError(f"cannot read {source}: {fetched.error or f'HTTP {fetched.status}'}")
        return parse_sitemap(fetched.body)

    def keep(self, source: str, parsed: ParsedSitemap) -> None:
        for problem in parsed.problems:
            where = f" <{problem.url}>" if problem.url else ""
            self.warnings.append(f"{source}: {problem.code}: {problem.message}{where} left out")
        for entry in parsed.entries:
            self.entries.setdefault(entry.loc, entry)

    async def source(self, source: str) -> None:
        parsed = await self.read(source)
        if parsed.kind != "sitemapindex":
            self.keep(source, parsed)
            return
        self.keep(source, parsed)  # its problems
        for child in parsed.sitemaps:
            local = None
            if not _is_url(source):
                local = Path(source).parent / PurePosixPath(urlsplit(child.loc).path).name
            where = str(local) if local is not None and local.is_file() else child.loc
            page = await self.read(where)
            if page.kind == "sitemapindex":
                self.warnings.append(f"{where}: an index listed by an index: not followed")
                continue
            self.keep(where, page)


async def read_sources(sources: Sequence[str]) -> tuple[list[SitemapEntry], list[str]]:
    """Every entry the sources list (first listing wins) and what was left out, said.

    A client is there even when every source is a local file: a local index may list
    children that only exist on its site.
    """
    try:
        import httpx
    except ImportError:  # pragma: no cover - without the cli extra: local files only
        return await _read_all(_Reader(None), sources)
    async with httpx.AsyncClient(
        headers={"User-Agent": USER_AGENT}, follow_redirects=False, timeout=30.0
    ) as client:
        return await _read_all(_Reader(Fetcher(client, rate=5.0)), sources)


async def _read_all(
    reader: _Reader, sources: Sequence[str]
) -> tuple[list[SitemapEntry], list[str]]:
    for source in sources:
        await reader.source(source)
    return list(reader.entries.values()), reader.warnings


def _under(config: SitemapConfig, loc: str) -> bool:
    try:
        config.base.locate(loc)
    except SitemapError:
        return False
    return True


async def _not_found(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def generate(
    sources: Sequence[str],
    directory: Path,
    *,
    base_url: str | None = None,
    section: str = "pages",
    **settings: Any,
) -> ExportResult:
    """Write the sitemap files the middleware would serve for the sources' entries.

    :param base_url: the site's base URL (default: the origin of the first entry); entries
        outside it are left out, as the middleware leaves them out.
    :param section: the name of the one section (``sitemap-<section>-<n>.xml``).
    :param settings: more :class:`SitemapConfig` settings (``max_urls_per_page``,
        ``text_sitemaps``...).
    """
    entries, warnings = await read_sources(sources)
    if not entries:
        raise ValueError("the sources list no URL")
    base = base_url or origin_of(entries[0].loc) + "/"
    config = SitemapConfig(base_url=base, sections={section: StaticProvider(entries)}, **settings)
    if not any(_under(config, entry.loc) for entry in entries):
        raise ValueError(
            f"none of the sources' {len(entries):,} URLs is under {config.base.prefix}: "
            "there would be no sitemap (see --base-url)"
        )
    app = ASGISitemapMiddleware(_not_found, config=config)
    result = await export_app(app, Path(directory), "asgi")
    result.warnings[:0] = warnings
    return result
