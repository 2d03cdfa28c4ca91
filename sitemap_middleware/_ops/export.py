"""``sitemap-middleware export``: every document the app serves, as static files.

Each document is fetched from the app in-process, so the files are the bytes the
middleware sends: ``name`` is the identity body and ``name.gz`` the gzip body (the
``.xml.gz`` file the middleware serves, or its gzip content-coding). Files land at their
URL path under the directory (``/shop/sitemap.xml`` -> ``DIR/shop/sitemap.xml``), next to
``sitemap-manifest.json``: per document its ETags, SHA-256 and sizes.

Incremental: a document whose ETag still matches (the app answers 304 to
``If-None-Match``) and whose files are intact is not fetched again; one without ETag is
fetched and rewritten only if its digest changed. Files of documents that are gone are
removed. Writes are atomic (temporary file, then rename; one PUT an object).

Where the files go is a sink (``sinks.py``): a directory (:class:`DirectorySink`) or an
object store (``store_sink.ObjectStoreSink``: S3, GCS, Azure); this module alone plans,
compares and decides. Pages, feeds and the stylesheet are written before ``sitemap.xml``
and the index, robots.txt last, and stale files are removed only after all of them: a
reader never follows a link to a file not there yet.

A failure never costs files: when a document answers anything but 200 or 404 (a section
whose provider failed answers 503), or an index says it left a failing section out
(``Sitemap-Sections-Failed``), the earlier files of that document stay as they were, no
file at all is removed, the manifest keeps their entries, and the result lists the
failure (the CLI then exits 1).

Every path written or deleted passes the sink's check first (for a directory
:func:`export_path`: a file strictly inside it): the documents' before anything is written
(:class:`ExportPathError`), the manifest's when it is read (a manifest that fails is
ignored, with a warning, as if absent).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._adapters.asgi import ASGISitemapMiddleware
from .._adapters.wsgi import WSGISitemapMiddleware
from .._config import SitemapConfig, Tenants
from .._engine.answer import FAILED_SECTIONS_HEADER, failed_sections_text
from .._engine.core import SitemapCore
from .._engine.tenants import TenantCores
from .._exceptions import SitemapError
from .._sansio.routing import STYLESHEET_NAME, TEXT_SITEMAP_NAME
from .._sansio.urls import BaseURL
from .apps import Interface, client_for_app
from .sinks import MANIFEST, DirectorySink, ExportSink, digest, export_path

if TYPE_CHECKING:
    import httpx

__all__ = [
    "MANIFEST",
    "DirectorySink",
    "ExportResult",
    "ExportSink",
    "export_app",
    "export_path",
    "find_config",
]

MANIFEST_VERSION = 1
_SITEMAP_NS = b"http://www.sitemaps.org/schemas/sitemap/0.9"


@dataclass(slots=True)
class ExportResult:
    """What an export wrote, kept and removed (URL paths)."""

    #: Where the files went: a directory, or the URL of an object store (``s3://...``).
    directory: Path | str
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: What could not be exported (earlier files kept): non-empty means exit status 1.
    failed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "directory": str(self.directory),
            "written": self.written,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "warnings": self.warnings,
            "failed": self.failed,
        }

    def format_text(self) -> str:
        lines = [f"warning: {warning}" for warning in self.warnings]
        lines += [f"failed: {failure}" for failure in self.failed]
        lines.append(
            f"exported to {self.directory}: {len(self.written)} written, "
            f"{len(self.unchanged)} unchanged, {len(self.removed)} removed "
            f"(manifest: {MANIFEST})"
        )
        if self.failed:
            lines.append(
                f"FAILED: {len(self.failed)} failures; the earlier files of those documents "
                "were kept and nothing was removed"
            )
        return "\n".join(lines)


class _DocumentFailed(Exception):
    """A document could not be exported as it should be: its earlier files are kept."""

    def __init__(self, message: str, entry: tuple[dict[str, Any], bytes] | None = None) -> None:
        super().__init__(message)
        #: What the app did serve (an index that left a section out), for a directory
        #: that has no earlier file to keep.
        self.entry = entry


def find_config(app: object) -> SitemapConfig:
    """The :class:`SitemapConfig` of the sitemap middleware wrapping (or inside) ``app``.

    Raises ``ValueError`` when no sitemap middleware is found, or it serves ``Tenants``.
    """
    return _single_site(find_served(app))


def find_served(app: object) -> object:
    """What the sitemap middleware wrapping (or inside) ``app`` serves: a
    :class:`SitemapConfig`, :class:`Tenants` or their cores.

    Looks through ``.app``/``.wsgi_app`` chains and Starlette's ``user_middleware``;
    raises ``ValueError`` when no sitemap middleware is found.
    """
    seen: set[int] = set()
    pending: list[Any] = [app]
    while pending:
        current = pending.pop()
        if id(current) in seen or current is None:
            continue
        seen.add(id(current))
        if isinstance(current, ASGISitemapMiddleware | WSGISitemapMiddleware):
            core = current.core
            return core.config if isinstance(core, SitemapCore) else core
        for middleware in getattr(current, "user_middleware", None) or ():
            if getattr(middleware, "cls", None) is ASGISitemapMiddleware:
                served: object = getattr(middleware, "kwargs", {}).get("config")
                return served
        pending += [
            getattr(current, name, None) for name in ("app", "wsgi_app", "middleware_stack")
        ]
    raise ValueError(
        f"no ASGISitemapMiddleware or WSGISitemapMiddleware found in {type(app).__name__}"
    )


def _single_site(config: object) -> SitemapConfig:
    if not isinstance(config, SitemapConfig):
        what = "Tenants" if isinstance(config, Tenants | TenantCores) else type(config).__name__
        raise ValueError(
            f"the sitemap middleware serves {what}, not one SitemapConfig: "
            "export serves one site (export each Tenants site from an app of its own)"
        )
    return config


class _Exporter:
    def __init__(self, client: httpx.AsyncClient, config: SitemapConfig, sink: ExportSink) -> None:
        self.client = client
        self.config = config
        self.sink = sink
        self.result = ExportResult(sink.location)
        self.old: dict[str, dict[str, Any]] = {}
        self.new: dict[str, dict[str, Any]] = {}

    async def _load_manifest(self) -> dict[str, dict[str, Any]]:
        """The manifest's documents, every key and entry checked (``ValueError`` if not)."""
        try:
            raw = await self.sink.read_manifest()
            if raw is None:
                return {}
            data = json.loads(raw)
        except (OSError, ValueError, RecursionError) as exc:  # deep nesting: RecursionError
            raise ValueError(f"unreadable ({type(exc).__name__}: {exc})") from None
        if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
            raise ValueError(f"not a version {MANIFEST_VERSION} sitemap manifest")
        documents = data.get("documents")
        if not isinstance(documents, dict):
            raise ValueError("'documents' is not an object")
        for key, entry in documents.items():
            self.sink.check(key, writing=False)  # ExportPathError is a ValueError
            if not isinstance(entry, dict):
                raise ValueError(f"entry {key!r} is not an object")
            if not isinstance(entry.get("sha256"), str):
                raise ValueError(f"entry {key!r} has no sha256")
            if not isinstance(entry.get("etag"), str | None):
                raise ValueError(f"entry {key!r} has an etag that is not a string")
        return documents

    async def _get(self, url: str, headers: dict[str, str]) -> tuple[int, httpx.Headers, bytes]:
        import httpx  # the cli extra (the client is httpx's)

        try:
            async with self.client.stream("GET", url, headers=headers) as response:
                raw = b"".join([chunk async for chunk in response.aiter_raw()])
        except (httpx.HTTPError, SitemapError) as exc:
            # A body cut short (its provider failed after the first byte; in process the
            # app's error reaches us as such): that document failed, the others go on.
            raise _DocumentFailed(f"{url} was cut short: {type(exc).__name__}: {exc}") from None
        return response.status_code, response.headers, raw

    async def variant(self, url: str, key: str, gzip: bool) -> tuple[dict[str, Any], bytes] | None:
        """One file: (its manifest entry, its bytes, or b"" if unchanged); None if not served."""
        old = self.old.get(key)
        headers = {"Accept-Encoding": "gzip" if gzip else "identity"}
        intact = old is not None and await self.sink.intact(key, old)
        if intact and old is not None and old.get("etag"):
            status, _, _ = await self._get(url, {**headers, "If-None-Match": old["etag"]})
            if status == 304:
                return old, b""
        status, response_headers, raw = await self._get(url, headers)
        if status in (404, 410):
            return None
        if status != 200:
            raise _DocumentFailed(f"{url} answers {status}")
        encoding = response_headers.get("content-encoding", "identity")
        if gzip != (encoding == "gzip" or raw[:2] == b"\x1f\x8b"):
            return None  # this coding is not served for this document
        entry = {
            "url": url,
            "etag": response_headers.get("etag"),
            "last_modified": response_headers.get("last-modified"),
            "content_type": response_headers.get("content-type"),
            "content_encoding": response_headers.get("content-encoding"),
            "sha256": digest(raw),
            "bytes": len(raw),
        }
        unchanged = intact and old is not None and old["sha256"] == entry["sha256"]
        if unchanged and old is not None and "stored" in old:  # what the sink noted of it
            entry["stored"] = old["stored"]
        failed = response_headers.get(FAILED_SECTIONS_HEADER)
        if failed:
            raise _DocumentFailed(
                f"{url} left out the sections whose data source failed: "
                + failed_sections_text(failed),
                (entry, b"" if unchanged else raw),
            )
        return entry, b"" if unchanged else raw

    async def document(self, url: str, *, gzip_variant: bool = True) -> None:
        """Export one document and its .gz (nothing if the app does not serve it)."""
        url_path = urlsplit(url).path
        try:
            identity = await self.variant(url, url_path, gzip=False)
        except _DocumentFailed as failure:
            await self._fail(failure, url_path, url_path + ".gz")
            return
        if identity is None:
            return
        await self._keep(url_path, *identity)
        if gzip_variant:
            gz_url, gz_key = (url + ".gz", url_path + ".gz")
            try:
                gz = (
                    await self.variant(gz_url, gz_key, gzip=True)
                    if self.config.gzip_files
                    else None
                )
                if gz is None:  # no .gz file served: the gzip content-coding of the document
                    gz = await self.variant(url, gz_key, gzip=True)
            except _DocumentFailed as failure:
                await self._fail(failure, gz_key)
                return
            if gz is not None:
                await self._keep(gz_key, *gz)

    async def _fail(self, failure: _DocumentFailed, *keys: str) -> None:
        """Keep the earlier files of ``keys``; with none, write what was served."""
        if str(failure) not in self.result.failed:
            self.result.failed.append(str(failure))
        for key in keys:
            if key in self.old:
                self.new[key] = self.old[key]
                self.result.unchanged.append(key)
            elif failure.entry is not None and key == keys[0]:
                await self._keep(key, *failure.entry)

    async def _keep(self, key: str, entry: dict[str, Any], data: bytes) -> None:
        self.new[key] = entry
        if data:
            self.new[key] = await self.sink.write(key, data, entry)
            self.result.written.append(key)
        else:
            self.result.unchanged.append(key)

    async def plan(self) -> list[tuple[str, bool]]:
        """Every document to export, as (URL, with a .gz), the pages read from the index."""
        config, base = self.config, self.config.base
        root, index = base.file_url(config.sitemap_name), base.file_url(config.index_name)
        documents = [(root, True), (index, True)]
        if config.robots is not None:
            documents.insert(0, (base.origin + config.robots.path, False))
        for listing in (index, root):
            status, _, body = await self._get(listing, {"Accept-Encoding": "identity"})
            if status == 200 and b"<sitemapindex" in body[:1000]:
                for page in _locs(body):
                    documents.append((page, True))
                    if config.text_sitemaps and page.endswith(".xml"):
                        documents.append((page[: -len(".xml")] + ".txt", True))
                break
        if config.text_sitemaps:
            documents.append((base.file_url(TEXT_SITEMAP_NAME), True))
        if config.stylesheet is True:
            documents.append((base.file_url(STYLESHEET_NAME), False))
        if config.indexnow_key:
            documents.append((base.file_url(config.indexnow_key + ".txt"), False))
        documents += ((base.file_url(feed.name), True) for feed in config.feeds)
        if config.llms_txt is not None:
            documents.append((base.file_url(config.llms_txt.name), False))
        return documents

    async def run(self) -> ExportResult:
        sink = self.sink
        await sink.prepare()
        try:
            self.old = await self._load_manifest()
        except ValueError as exc:  # corrupt or foreign: as if absent
            self.result.warnings.append(
                f"{MANIFEST} ignored: {exc}; every document is exported again and no file "
                "it lists is removed"
            )
        documents = await self.plan()
        for url, gzip_variant in documents:  # every target checked before anything is written
            url_path = urlsplit(url).path
            sink.check(url_path, writing=True)
            if gzip_variant:
                sink.check(url_path + ".gz", writing=True)
        for url, gzip_variant in _leaves_first(documents, self.config):
            await self.document(url, gzip_variant=gzip_variant)
        # Only now, the new index and robots.txt up, may what they no longer list go.
        for key in sorted(set(self.old) - set(self.new)):
            if self.result.failed:  # what is gone cannot be told from what failed: keep it
                self.new[key] = self.old[key]
                continue
            await sink.remove(key)
            self.result.removed.append(key)
        manifest = {"version": MANIFEST_VERSION, "documents": dict(sorted(self.new.items()))}
        await sink.write_manifest(json.dumps(manifest, indent=2).encode() + b"\n")
        return self.result


def _leaves_first(
    documents: list[tuple[str, bool]], config: SitemapConfig
) -> list[tuple[str, bool]]:
    """The documents in the order they are written: what the others link to first (pages,
    stylesheet, feeds...), then ``sitemap.xml`` and the index, robots.txt last. A reader
    never finds a link to a file not yet there (each file itself is replaced atomically)."""
    base = config.base
    last = [base.file_url(config.sitemap_name), base.file_url(config.index_name)]
    if config.robots is not None:
        last.append(base.origin + config.robots.path)
    rank = {url: n + 1 for n, url in enumerate(last)}
    return sorted(documents, key=lambda document: rank.get(document[0], 0))


def _locs(index: bytes) -> Iterator[str]:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    root = etree.fromstring(index, parser)
    for loc in root.iterfind("s:sitemap/s:loc", {"s": _SITEMAP_NS.decode()}):
        yield (loc.text or "").strip()


async def export_app(
    app: object,
    target: Path | str | ExportSink,
    interface: Interface | None = None,
    *,
    public_url: str | None = None,
) -> ExportResult:
    """Export every document of the sitemap middleware in ``app`` to ``target``.

    :param target: a directory (a ``Path``, or a string that is not a URL), the URL of an
        object store (``s3://bucket/prefix``, ``gs://``, ``az://``: the ``cloud`` extra,
        configured from the environment) or an :class:`ExportSink`.
    :param public_url: where the exported files will be served from; it must be the
        app's ``base_url`` (the URLs in the documents come from it), else ``ValueError``.
    """
    config = find_config(app)
    if public_url is not None:
        check_public_url(config, public_url)
    sink = open_sink(target)
    async with client_for_app(app, interface, base_url=config.base.origin) as client:
        return await _Exporter(client, config, sink).run()


def open_sink(target: Path | str | ExportSink) -> ExportSink:
    """The sink for an export target (see :func:`export_app`)."""
    if isinstance(target, str) and "://" in target:
        from .store_sink import ObjectStoreSink

        return ObjectStoreSink.from_url(target)
    if isinstance(target, str | Path):
        return DirectorySink(Path(target))
    return target


def check_public_url(config: SitemapConfig, public_url: str) -> None:
    """``ValueError`` unless ``public_url`` is the app's base URL (the directory the
    sitemaps are served from, normalized: ``https://EXAMPLE.com:443/shop`` is
    ``https://example.com/shop/``)."""
    try:
        public = BaseURL.parse(public_url).prefix
    except SitemapError as exc:
        raise ValueError(f"--public-url {public_url!r}: {exc}") from None
    if public != config.base.prefix:
        raise ValueError(
            f"the app's base_url {config.base.prefix!r} is not --public-url {public!r}: every "
            "URL the exported index and robots.txt list comes from base_url, so configure "
            "base_url as the public URL the files are served from"
        )
