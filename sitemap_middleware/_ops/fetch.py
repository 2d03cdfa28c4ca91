"""Fetching for the checker: bounded concurrency, a polite rate, size caps, gzip.

This module alone talks HTTP for ``check`` and ``export``: one :class:`Fetcher` over an
``httpx.AsyncClient`` (network, or an app in-process), at most ``concurrency`` requests
at once and at most ``rate`` a second, bodies capped before and after decompression
(a gzip bomb stops at the cap).
"""

from __future__ import annotations

import math
import time
import zlib
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import anyio

from .._sansio.limits import MAX_BYTES

if TYPE_CHECKING:
    import httpx

__all__ = ["Fetched", "Fetcher", "failure_kind", "gunzip", "timed_out"]

#: The protocol's uncompressed limit (50 MiB) plus one byte, so "too large" is visible.
MAX_DOCUMENT = MAX_BYTES + 1
USER_AGENT = "sitemap-middleware-check (+https://pypi.org/project/sitemap-middleware/)"
#: Redirect statuses that carry a Location to follow (RFC 9110 15.4).
REDIRECTS = frozenset({301, 302, 303, 307, 308})


def timed_out(seconds: float) -> str:
    """The message for a request cut at its deadline."""
    return f"timed out after {seconds:g} s (the whole request, body included)"


def failure_kind(exc: BaseException) -> str:
    """Why a request got no answer, in one word the CLI's hints read: ``refused``, ``dns``,
    ``tls`` or ``connect`` (another connection failure), else ``http``.

    Read from the causes, not the message: anyio says "All connection attempts failed"
    whatever refused it, and each platform words its errors its own way.
    """
    import ssl
    from socket import gaierror

    seen: list[BaseException] = [exc]
    for error in seen:  # the chain of causes, and every member of an exception group
        if isinstance(error, ConnectionRefusedError):
            return "refused"
        if isinstance(error, gaierror):
            return "dns"
        if isinstance(error, ssl.SSLError):
            return "tls"
        for more in (error.__cause__, error.__context__, *getattr(error, "exceptions", ())):
            if more is not None and not any(more is known for known in seen):
                seen.append(more)
    import httpx

    return "connect" if isinstance(exc, httpx.ConnectError | OSError) else "http"


class TooLarge(Exception):
    """A body past the cap (compressed or not)."""


def gunzip(data: bytes, limit: int) -> bytes:
    """Decompress gzip ``data`` up to ``limit`` bytes (``TooLarge`` past it; ``zlib.error``)."""
    inflate = zlib.decompressobj(47)
    out = inflate.decompress(data, limit)
    if inflate.unconsumed_tail:
        raise TooLarge(f"more than {limit - 1:,} bytes once decompressed")
    if not inflate.eof:
        raise zlib.error("truncated gzip stream")
    return out


@dataclass(frozen=True, slots=True)
class Fetched:
    """One response as the checker saw it.

    ``raw`` is the body as sent (content-coding kept); ``body`` has ``Content-Encoding:
    gzip`` undone and a gzip file (``.xml.gz``) unpacked. ``error`` is set when there
    was no usable response (connection failure, body too large, broken gzip).
    """

    url: str
    method: str
    status: int
    headers: httpx.Headers
    raw: bytes
    body: bytes
    fetched_at: datetime
    error: str | None = None
    #: (status, URL) of each redirect followed to get here, in order.
    redirected_from: tuple[tuple[int, str], ...] = ()
    #: The body was cut at the ``max_bytes`` its fetch asked for (the rest not read).
    truncated: bool = False
    #: With ``error``: its kind (``failure_kind``, or ``timeout``, ``too-large``, ``gzip``).
    failure: str | None = None

    def header(self, name: str) -> str | None:
        value: str | None = self.headers.get(name)
        return value


class Fetcher:
    """Sends requests for the checker, bounded and paced.

    :param client: the ``httpx.AsyncClient`` (its transport decides network or in-process).
    :param concurrency: requests in flight at once.
    :param rate: requests started per second at most (0 for no pacing).
    :param max_bytes: cap on a body, compressed or decompressed.
    :param timeout: seconds for one whole request (headers and body), > 0.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        concurrency: int = 4,
        rate: float = 5.0,
        max_bytes: int = MAX_DOCUMENT,
        timeout: float = 30.0,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency!r}")
        if rate < 0:
            raise ValueError(f"rate must be >= 0 requests a second, got {rate!r}")
        if not (isinstance(timeout, int | float) and timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        self.client = client
        self.timeout = float(timeout)
        self.max_bytes = max_bytes
        self.requests = 0
        self._slots = anyio.Semaphore(concurrency)
        self._interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._pace = anyio.Lock()

    async def _wait_turn(self) -> None:
        if not self._interval:
            return
        async with self._pace:
            now = time.monotonic()
            if self._next > now:
                await anyio.sleep(self._next - now)
            self._next = max(now, self._next) + self._interval

    async def fetch(
        self,
        url: str,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        *,
        redirects: int = 0,
        max_bytes: int | None = None,
    ) -> Fetched:
        """One request; never raises for network or body problems (see ``Fetched.error``).

        Follows at most ``redirects`` redirects (301, 302, 303, 307, 308 with a
        ``Location``); the result is the last answer, its ``url`` where it came from and
        ``redirected_from`` the chain before it. A redirect past the bound is returned as
        it is (a 3xx), so the caller sees it was not followed.

        With ``max_bytes`` the body is read up to that many bytes (decompressed) and the
        rest is left unread: ``truncated`` says so (robots.txt, RFC 9309 2.5), never an error.
        """
        chain: list[tuple[int, str]] = []
        while True:
            fetched = await self._fetch_one(url, method, headers, max_bytes)
            location = fetched.header("location") if fetched.status in REDIRECTS else None
            if not location or len(chain) >= redirects:
                return replace(fetched, redirected_from=tuple(chain)) if chain else fetched
            chain.append((fetched.status, url))
            url = urljoin(url, location.strip())

    async def _fetch_one(
        self, url: str, method: str, headers: dict[str, str] | None, cut: int | None = None
    ) -> Fetched:
        import httpx

        truncated = False

        async with self._slots:
            await self._wait_turn()
            self.requests += 1
            fetched_at = datetime.now(timezone.utc)
            response: httpx.Response | None = None
            try:
                # One deadline for the whole request, body included: a server dripping a
                # byte at a time never trips a per-read timeout.
                with anyio.fail_after(self.timeout):
                    async with self.client.stream(method, url, headers=headers) as response:
                        chunks: list[bytes] = []
                        size = 0
                        async for chunk in response.aiter_raw():
                            size += len(chunk)
                            if cut is not None and size > cut:
                                chunks.append(chunk[: len(chunk) - (size - cut)])
                                truncated = True
                                break
                            if size > self.max_bytes:
                                raise TooLarge(f"more than {self.max_bytes - 1:,} bytes")
                            chunks.append(chunk)
            except httpx.HTTPError as exc:
                empty = httpx.Headers()
                error = f"{type(exc).__name__}: {exc}"
                return Fetched(
                    url, method, 0, empty, b"", b"", fetched_at, error, failure=failure_kind(exc)
                )
            except TimeoutError:
                status, got = (
                    (response.status_code, response.headers)
                    if response is not None
                    else (0, httpx.Headers())
                )
                error = timed_out(self.timeout)
                return Fetched(
                    url, method, status, got, b"", b"", fetched_at, error, failure="timeout"
                )
            except TooLarge as exc:
                assert response is not None
                return Fetched(
                    url,
                    method,
                    response.status_code,
                    response.headers,
                    b"",
                    b"",
                    fetched_at,
                    str(exc),
                    failure="too-large",
                )
        assert response is not None
        raw = b"".join(chunks)

        def answer(body: bytes, error: str | None = None, failure: str | None = None) -> Fetched:
            return Fetched(
                url,
                method,
                response.status_code,
                response.headers,
                raw,
                body,
                fetched_at,
                error,
                truncated=truncated,
                failure=failure,
            )

        if not raw:  # HEAD, 304, 204: nothing to decode, whatever Content-Encoding says
            return answer(raw)
        body = raw
        try:
            if cut is not None:
                body, cut_short = _unpacked_prefix(body, response.headers, cut)
                truncated = truncated or cut_short
            elif response.headers.get("content-encoding", "").strip().lower() in (
                "gzip",
                "x-gzip",
            ):
                body = gunzip(body, self.max_bytes)
            if cut is None and body[:2] == b"\x1f\x8b":  # a gzip file (.xml.gz), as such
                body = gunzip(body, self.max_bytes)
        except TooLarge as exc:
            return answer(b"", str(exc), "too-large")
        except zlib.error as exc:
            return answer(b"", f"broken gzip: {exc}", "gzip")
        return answer(body)


def _unpacked_prefix(raw: bytes, headers: httpx.Headers, cut: int) -> tuple[bytes, bool]:
    """The first ``cut`` bytes of the body (gzip undone, a partial stream is fine) and
    whether there was more."""
    if headers.get("content-encoding", "").strip().lower() in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        body = inflate.decompress(raw, cut)
        return body, bool(inflate.unconsumed_tail) or len(body) >= cut
    return raw[:cut], len(raw) >= cut
