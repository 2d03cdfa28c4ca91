"""``export`` to object storage: S3 and S3-compatible servers, GCS, Azure (``obstore``).

The bucket (and prefix) stands for the site's root: a document is the object
``<prefix>/<URL path>`` (``s3://bucket/site`` gets ``site/shop/sitemap.xml`` and
``site/robots.txt``), with the manifest at ``<prefix>/sitemap-manifest.json``, the layout
of a directory export. Serve the prefix at the origin of the app's ``base_url``.

Objects carry the content type the middleware serves (``application/xml; charset=utf-8``,
``text/plain; charset=utf-8``...) and never a ``Content-Encoding``: a ``.gz`` object is a
gzip file, ``application/gzip``, as the ``.xml.gz`` files the middleware serves are (a
``.gz`` made from the gzip content-coding of a ``.txt`` or a feed included), so no client
or CDN unpacks it on the way. ``Cache-Control`` is set on every document when given.

One PUT replaces an object whole: a reader gets the old bytes or the new ones, never a
part. The manifest entry of each object notes its ETag in the store (and the
Cache-Control it was given): an object replaced by someone else, or that needs another
Cache-Control, is uploaded again. Credentials and the endpoint come from the standard
variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_REGION``, ``AWS_ENDPOINT_URL``; ``GOOGLE_*``, ``AZURE_*``) or the options.

Requests go through obstore's blocking calls, each in a worker thread, never its async
ones: those hand their result to the event loop from a thread of obstore's Rust runtime,
which the interpreter's exit can catch inside Python (``export`` then died of SIGABRT
after printing a good report). A blocking call runs that runtime from a thread Python
started and owns, and ``anyio`` waits for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import anyio

from .sinks import MANIFEST, SinkError, check_key

if TYPE_CHECKING:
    from obstore.store import ClientConfig, ObjectStore, S3Config

__all__ = ["SCHEMES", "ObjectStoreSink"]

#: URL schemes of the object stores export writes to.
SCHEMES = ("s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "adl")
GZIP_TYPE = "application/gzip"
_Sink = TypeVar("_Sink", bound="ObjectStoreSink")
_T = TypeVar("_T")
#: An S3 (GCS XML, Azure) error body's code and message, which name the cause.
_ERROR_CODE = re.compile(r"<Code>([^<]{1,200})</Code>")
_ERROR_MESSAGE = re.compile(r"<Message>([^<]{1,500})</Message>")


def store_error(exc: BaseException) -> str:
    """A store's error on one line: obstore's first line (not the Rust debug dump after
    it), with the service's ``<Code>`` and ``<Message>`` in place of the XML body that
    line ends in (``NoSuchBucket: The specified bucket does not exist``)."""
    text = str(exc).strip()
    first = (text.splitlines() or [""])[0]
    code, message = _ERROR_CODE.search(text), _ERROR_MESSAGE.search(text)
    if code is None:
        return first
    head = first.split("<?xml", 1)[0].split("<Error>", 1)[0].rstrip(": ")
    reason = code.group(1) + (f": {message.group(1)}" if message else "")
    return f"{head}: {reason}" if head else reason


def _endpoint(url: str | None) -> str | None:
    return url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


class ObjectStoreSink:
    """Objects in a bucket under a prefix, one PUT each (see the module's docstring)."""

    def __init__(self, store: ObjectStore, location: str, *, cache_control: str | None = None):
        self.store = store
        self.location = location
        self.cache_control = cache_control or None
        self._listing: dict[str, str | None] | None = None

    @classmethod
    def from_url(
        cls: type[_Sink],
        url: str,
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        cache_control: str | None = None,
    ) -> _Sink:
        """A sink for ``s3://bucket/prefix`` (``gs://``, ``az://``...), configured from the
        environment; ``endpoint_url`` (S3-compatible servers) and ``region`` override it.
        ``ValueError`` for a URL that names no bucket or an unknown scheme."""
        parts = urlsplit(url)
        prefix = parts.path.strip("/")
        if parts.scheme not in SCHEMES or not parts.netloc or "//" in prefix:
            raise ValueError(
                f"{url!r} is not an object store URL: use s3://BUCKET/PREFIX (or gs://, az://)"
            )
        try:
            from obstore.store import from_url
        except ImportError:
            raise ImportError(
                f"exporting to {parts.scheme}:// needs obstore: pip install "
                "'sitemap-middleware[cloud]'"
            ) from None
        config: S3Config = {}
        client: ClientConfig = {}
        if parts.scheme in ("s3", "s3a"):
            endpoint = _endpoint(endpoint_url)
            if endpoint_url:
                config["endpoint"] = endpoint_url
            if region:
                config["region"] = region
            if endpoint and endpoint.startswith("http://"):
                client["allow_http"] = True  # a local S3-compatible server (MinIO, moto)
        elif endpoint_url or region:
            raise ValueError("--endpoint-url and --region are for s3:// URLs")
        # object_store refuses empty path segments: a trailing "/" or two name the prefix.
        url = f"{parts.scheme}://{parts.netloc}/{prefix}"
        store = from_url(url, config=config or None, client_options=client or None)
        return cls(store, url.rstrip("/"), cache_control=cache_control)

    async def _call(self, what: str, call: Callable[[], _T], *, absent: bool = False) -> _T:
        """``call()``'s result, run in a worker thread (see the module's docstring); a
        store's refusal as :class:`SinkError` naming what failed (``FileNotFoundError`` as
        it is when ``absent``: a missing object is an answer)."""
        from obstore.exceptions import BaseError

        try:
            return await anyio.to_thread.run_sync(call)
        except (BaseError, OSError) as exc:
            if absent and isinstance(exc, FileNotFoundError):
                raise
            reason = store_error(exc)
            raise SinkError(f"{self.location}: {what}: {type(exc).__name__}: {reason}") from exc

    async def prepare(self) -> None:
        return None  # a bucket is there or not: the first request says which

    def check(self, key: str, *, writing: bool) -> None:
        self._name(key)

    def _name(self, key: str) -> str:
        """The object's name under the prefix: the decoded path, as S3 and CDNs look it up."""
        return "/".join(check_key(key, f"the prefix {self.location!r}"))

    async def _list(self) -> dict[str, str | None]:
        """Every object under the prefix and its ETag (one request a thousand objects)."""
        import obstore

        if self._listing is None:

            def read() -> dict[str, str | None]:
                batches = obstore.list(self.store, chunk_size=1000)
                return {meta["path"]: meta["e_tag"] for batch in batches for meta in batch}

            self._listing = await self._call("list", read)
        return self._listing

    async def read_manifest(self) -> bytes | None:
        import obstore

        def read() -> bytes:
            return bytes(obstore.get(self.store, MANIFEST).bytes())

        try:
            return await self._call(f"get {MANIFEST}", read, absent=True)
        except FileNotFoundError:
            return None

    async def intact(self, key: str, entry: dict[str, Any]) -> bool:
        stored = entry.get("stored")
        if not isinstance(stored, dict) or not stored.get("etag"):
            return False
        if stored.get("cache_control") != self.cache_control:
            return False
        return bool((await self._list()).get(self._name(key)) == stored["etag"])

    async def write(self, key: str, data: bytes, entry: dict[str, Any]) -> dict[str, Any]:
        import obstore

        content_type = GZIP_TYPE if key.endswith(".gz") else entry.get("content_type")
        attributes: dict[str, str] = {"Content-Type": content_type or "application/octet-stream"}
        if self.cache_control:
            attributes["Cache-Control"] = self.cache_control
        name = self._name(key)
        put = await self._call(
            f"put {name}", partial(obstore.put, self.store, name, data, attributes=attributes)
        )
        stored = {"etag": put["e_tag"], "cache_control": self.cache_control}
        return {**entry, "stored": stored}

    async def remove(self, key: str) -> None:
        import obstore

        # No error if it is already gone.
        name = self._name(key)
        await self._call(f"delete {name}", partial(obstore.delete, self.store, name))

    async def write_manifest(self, data: bytes) -> None:
        import obstore

        attributes: dict[str, str] = {"Content-Type": "application/json"}
        put = partial(obstore.put, self.store, MANIFEST, data, attributes=attributes)
        await self._call(f"put {MANIFEST}", put)
