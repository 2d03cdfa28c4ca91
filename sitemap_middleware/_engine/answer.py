"""What the engine answers with: a Document (validators known, body not yet started) or
an HTTPError (any status but 200, decided before the first byte)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from .._config import SitemapConfig
from .observe import CacheStatus

__all__ = [
    "RequestInfo",
    "FAILED_SECTIONS_HEADER",
    "confirm",
    "failed_sections_text",
    "TEXT_TYPE",
    "XML_TYPE",
    "XSL_TYPE",
    "Document",
    "HTTPError",
    "service_unavailable",
    "unavailable",
]

XML_TYPE = "application/xml; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"
XSL_TYPE = "text/xsl; charset=utf-8"


class HTTPError(Exception):
    """An answer other than 200, decided before the body starts (never a traceback)."""

    def __init__(self, status: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = list(headers)


def unavailable(config: SitemapConfig) -> HTTPError:
    """503 for a failing provider, with ``Retry-After``."""
    return service_unavailable(config.http.retry_after)


def service_unavailable(retry_after: int) -> HTTPError:
    """503 with ``Retry-After: retry_after`` seconds."""
    return HTTPError(
        503,
        "Service Unavailable: this sitemap's data source failed; try again later",
        [("Retry-After", str(retry_after))],
    )


#: Response header naming the sections a document left out because their provider failed
#: (comma-separated): what ``check`` and ``export`` read to fail loudly.
FAILED_SECTIONS_HEADER = "Sitemap-Sections-Failed"


def failed_sections_text(value: str) -> str:
    """A ``Sitemap-Sections-Failed`` value for people: ``'a', 'b'``."""
    return ", ".join(repr(name.strip()) for name in value.split(",") if name.strip())


@dataclass(slots=True)
class Document:
    """A document ready to answer: validators known, body not yet started."""

    content_type: str
    etag: str | None
    last_modified: datetime | None
    open: Callable[[], Awaitable[AsyncIterator[bytes]]]
    cacheable: bool = True
    #: Sections left out because their provider failed (an index or a combined
    #: sitemap): told to clients in ``Sitemap-Sections-Failed`` so tools never call a
    #: partial site complete.
    failed_sections: tuple[str, ...] = ()
    #: False when only opening the body tells whether it exists (a page of a section
    #: that cannot count itself): a 304 then needs that check first.
    exists: bool = True
    cache: CacheStatus | None = None
    #: False for documents any client can name in unbounded numbers (key-range pages the
    #: index does not list): concurrent requests still share a render, nothing is stored.
    storable: bool = True
    #: (stamp key, identity) the document's Last-Modified is stamped by, when not its own
    #: (store key, ETag): key-range pages the index does not list share one stamp per
    #: section, so made-up range names add no stamps.
    stamped_as: tuple[str, str] | None = None
    #: The gzip body for a compression level, when concurrent requests share one
    #: compressor (a shared render); None: the identity body is compressed per reply.
    open_gzip: Callable[[int], Awaitable[AsyncIterator[bytes]]] | None = None
    #: Asked when a render completes: False keeps it out of the store (a page that found
    #: its plan wrong, served up to its budget: the next render, planned anew, is kept).
    keeps: Callable[[], bool] | None = None


async def confirm(document: Document) -> None:
    """Open a body to learn its status (raises HTTPError as GET would), then close it.

    The body is run to its first chunk: an async generator closed before it starts
    never runs its ``finally``, and that is where the provider's iterator is closed.
    """
    body = await document.open()
    try:
        await anext(body)
    except StopAsyncIteration:
        pass
    finally:
        await body.aclose()  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What the core needs from a request; adapters build it from a scope or environ.

    ``path`` is the full decoded path (percent-escapes resolved, UTF-8); ``root_path`` the
    part of it the app is mounted at (ASGI ``root_path``, WSGI ``SCRIPT_NAME``), or ``""``.
    ``headers`` maps lower-case names to values (repeated headers joined with ``, ``).
    """

    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    root_path: str = ""
    #: The connection's peer address as the server has it (ASGI ``client``, WSGI
    #: ``REMOTE_ADDR``; never a header) and the raw query: the explain endpoint's.
    client: str | None = None
    query: str = ""
