"""IndexNow: tell search engines which URLs changed (indexnow.org).

This module owns the IndexNow protocol: the JSON body (``host``, ``key``,
``keyLocation``, ``urlList``), batches of at most 10,000 URLs, and what each answer
means (200 OK and 202 Accepted succeed; 400, 403 and 422 are final; 429 and 5xx are
retried with backoff). The key file itself is served by the middleware
(``SitemapConfig(indexnow_key=...)``). Which URLs changed comes from
:mod:`.changes`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import anyio
from werkzeug.http import parse_date

from .._config import SitemapConfig
from .._config_keys import INDEXNOW_KEY
from .._exceptions import ConfigurationError
from .._logs import logger
from .snapshots import Snapshot, changed_urls, take_snapshot

if TYPE_CHECKING:
    import httpx

__all__ = ["IndexNowBatch", "IndexNowNotifier", "IndexNowResult"]

#: The shared endpoint: participating engines (Bing, Yandex, Seznam, Naver, ...) share it.
DEFAULT_ENDPOINT = "https://api.indexnow.org/indexnow"
#: IndexNow accepts up to 10,000 URLs per POST.
MAX_BATCH = 10_000
#: What each final answer means, for the error message (indexnow.org documentation).
FINAL_ERRORS = {
    400: "bad request: invalid format",
    403: "forbidden: the key is not valid (key file not found, or not holding the key)",
    422: "unprocessable: URLs do not belong to the host, or the key does not match the schema",
}
#: A background notification: an asyncio task, or a portal future from sync code.
Pending = asyncio.Future["IndexNowResult"] | concurrent.futures.Future["IndexNowResult"]
LOG_GAVE_UP = "IndexNow: %d URLs not submitted to %s: %s"
LOG_RETRY = "IndexNow: %s answered %s; retrying in %.1f s"
_DELAY_SECONDS = re.compile("[0-9]+")


@dataclass(frozen=True, slots=True)
class IndexNowBatch:
    """How one POST of up to 10,000 URLs went."""

    urls: int
    status: int | None  # None: no HTTP answer (connection failed every time)
    attempts: int
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class IndexNowResult:
    """All batches of one notification."""

    batches: tuple[IndexNowBatch, ...] = ()

    @property
    def ok(self) -> bool:
        return all(batch.ok for batch in self.batches)

    @property
    def submitted(self) -> int:
        """URLs the endpoint accepted (200 or 202)."""
        return sum(batch.urls for batch in self.batches if batch.ok)


@dataclass(slots=True)
class IndexNowNotifier:
    """Pushes changed URLs to an IndexNow endpoint, in batches, with retries.

    ``await notifier.notify(urls)`` sends and reports; ``notifier.submit(urls)`` does the
    same in the background and returns at once, so a request handler never waits on a
    search engine. Build one from the middleware's configuration with
    :meth:`for_config` so the host and key location match what is served.

    :param host: the site's host name (``www.example.com``); every URL must be on it.
    :param key: the IndexNow key (8-128 of a-z, A-Z, 0-9, '-').
    :param key_location: absolute URL of the key file (sent as ``keyLocation``).
    :param endpoint: the IndexNow endpoint to POST to.
    :param batch_size: URLs per POST, at most 10,000.
    :param retries: further attempts after a 429, a 5xx or a connection error.
    :param backoff: first retry delay in seconds; doubles each time, with jitter, and
        never shorter than a ``Retry-After`` the endpoint sends (capped at ``max_backoff``).
    :param max_backoff: the longest single wait, in seconds (jitter included); an
        unparseable ``Retry-After`` is ignored (the backoff applies).
    :param timeout: seconds for one whole POST, answer included (> 0); past it the
        attempt failed and is retried like a connection error.
    :param client: an ``httpx.AsyncClient`` to send with (by default one per call).
    """

    host: str
    key: str
    key_location: str | None = None
    endpoint: str = DEFAULT_ENDPOINT
    batch_size: int = MAX_BATCH
    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 300.0
    timeout: float = 30.0
    client: httpx.AsyncClient | None = None
    _pending: set[Pending] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not INDEXNOW_KEY.fullmatch(self.key):
            raise ConfigurationError(
                f"IndexNow key must be 8 to 128 characters of a-z, A-Z, 0-9 and '-', "
                f"got {self.key!r}"
            )
        if not isinstance(self.host, str) or not self.host or "/" in self.host:
            raise ConfigurationError(
                f"host must be a host name such as 'example.com', got {self.host!r}"
            )
        if urlsplit(self.endpoint).scheme not in ("http", "https"):
            raise ConfigurationError(f"endpoint must be an http(s) URL, got {self.endpoint!r}")
        if not (isinstance(self.batch_size, int) and 1 <= self.batch_size <= MAX_BATCH):
            raise ConfigurationError(
                f"batch_size must be an integer from 1 to {MAX_BATCH}, got {self.batch_size!r}"
            )
        if not (isinstance(self.retries, int) and self.retries >= 0):
            raise ConfigurationError(f"retries must be an integer >= 0, got {self.retries!r}")
        for name, least in (("timeout", None), ("backoff", 0.0), ("max_backoff", 0.0)):
            value = getattr(self, name)
            number = isinstance(value, int | float) and math.isfinite(value)
            if not number or (value <= 0 if least is None else value < least):
                kind = "> 0" if least is None else ">= 0"
                raise ConfigurationError(
                    f"{name} must be a number of seconds {kind}, got {value!r}"
                )

    @classmethod
    def for_config(cls, config: SitemapConfig, **kwargs: object) -> IndexNowNotifier:
        """A notifier for the site ``config`` serves, using its ``indexnow_key``."""
        if config.indexnow_key is None:
            raise ConfigurationError("SitemapConfig.indexnow_key is not set: no key file to verify")
        host = urlsplit(config.base.origin).netloc
        location = config.base.file_url(config.indexnow_key + ".txt")
        return cls(host=host, key=config.indexnow_key, key_location=location, **kwargs)  # type: ignore[arg-type]

    def payload(self, urls: Sequence[str]) -> dict[str, object]:
        """The JSON body of one POST (indexnow.org "Submitting set of URLs")."""
        body: dict[str, object] = {"host": self.host, "key": self.key}
        if self.key_location:
            body["keyLocation"] = self.key_location
        body["urlList"] = list(urls)
        return body

    def _checked(self, urls: Iterable[str]) -> list[str]:
        """Unique URLs in order; a URL on another host is refused here, not by a 422."""
        seen: dict[str, None] = {}
        for url in urls:
            parts = urlsplit(url)
            # Scheme and host compare case-insensitively (RFC 3986 6.2.2.1).
            scheme, host = parts.scheme.lower(), parts.netloc.lower()
            if scheme not in ("http", "https") or host != self.host.lower():
                raise ValueError(
                    f"IndexNow URL {url!r} is not an absolute URL on host {self.host!r}"
                )
            seen[url] = None
        return list(seen)

    async def notify(self, urls: Iterable[str]) -> IndexNowResult:
        """Submit ``urls`` now (batches in order); returns how each batch went.

        Raises ``ValueError`` for a URL that is not on ``host``; endpoint failures are
        reported in the result (and logged), never raised.
        """
        unique = self._checked(urls)
        if not unique:
            return IndexNowResult()
        batches = [unique[i : i + self.batch_size] for i in range(0, len(unique), self.batch_size)]
        if self.client is not None:
            return IndexNowResult(tuple([await self._send(self.client, b) for b in batches]))
        import httpx

        async with httpx.AsyncClient(timeout=self.timeout) as client:
            return IndexNowResult(tuple([await self._send(client, b) for b in batches]))

    async def notify_changes(
        self, config: SitemapConfig, previous: Snapshot
    ) -> tuple[Snapshot, IndexNowResult]:
        """Snapshot the sitemap now and push what changed since ``previous``.

        Returns the new snapshot (keep it for the next call) and how the push went.
        Take the first snapshot with :func:`take_snapshot`: pushing a whole site on
        start-up is what IndexNow asks not to do.
        """
        current = await take_snapshot(config, previous)
        return current, await self.notify(changed_urls(previous, current))

    async def _send(self, client: httpx.AsyncClient, urls: list[str]) -> IndexNowBatch:
        import httpx

        delay = self.backoff
        status: int | None = None
        reason = ""
        for attempt in range(1, self.retries + 2):
            retry_after: str | None = None
            try:
                # One deadline for the whole POST, answer included: httpx's timeout is per
                # read, and an endpoint dripping a byte at a time never trips it.
                with anyio.fail_after(self.timeout):
                    response = await client.post(
                        self.endpoint,
                        json=self.payload(urls),
                        headers={"Content-Type": "application/json; charset=utf-8"},
                        timeout=self.timeout,
                    )
            except httpx.TransportError as exc:
                status, reason = None, f"{type(exc).__name__}: {exc}"
            except TimeoutError:
                status, reason = None, f"timed out after {self.timeout:g} s"
            else:
                status = response.status_code
                if status in (200, 202):
                    return IndexNowBatch(len(urls), status, attempt)
                if status in FINAL_ERRORS or not (status == 429 or status >= 500):
                    error = f"{status} {FINAL_ERRORS.get(status, 'unexpected answer')}"
                    logger.error(LOG_GAVE_UP, len(urls), self.endpoint, error)
                    return IndexNowBatch(len(urls), status, attempt, error)
                reason = f"{status} " + ("too many requests" if status == 429 else "server error")
                retry_after = response.headers.get("retry-after")
            if attempt > self.retries:
                break
            wait = retry_wait(delay, retry_after, self.max_backoff, random.random())
            logger.warning(LOG_RETRY, self.endpoint, reason, wait)
            await anyio.sleep(wait)
            delay = min(delay * 2, self.max_backoff)
        error = f"{reason} (gave up after {self.retries + 1} attempts)"
        logger.error(LOG_GAVE_UP, len(urls), self.endpoint, error)
        return IndexNowBatch(len(urls), status, self.retries + 1, error)

    def submit(self, urls: Iterable[str]) -> Pending:
        """Notify in the background and return at once (never blocks a request).

        From asyncio code (an ASGI app) the notification runs as a task on the running
        loop; anywhere else (a WSGI view, a thread, trio) it runs on the per-process
        portal the WSGI middleware uses. Await :meth:`aclose` on shutdown to let pending
        notifications finish. URLs are checked here: a bad one raises ``ValueError``.
        """
        unique = self._checked(urls)
        pending: Pending
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            from .._adapters.portal import get_portal

            pending = get_portal().start_task_soon(self.notify, unique)
        else:
            pending = asyncio.ensure_future(self.notify(unique))
        self._pending.add(pending)
        pending.add_done_callback(self._pending.discard)
        return pending

    async def aclose(self) -> None:
        """Wait for the background notifications still running."""
        for pending in list(self._pending):
            if isinstance(pending, asyncio.Future):
                await pending
            else:  # a portal future (any backend): wait for it in a worker thread
                await anyio.to_thread.run_sync(pending.result)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (RFC 9110 10.2.3), or None if absent or unparseable.

    delay-seconds is 1*DIGIT in ASCII (``str.isdigit`` would take ``²`` or ``١``); else an
    HTTP date, parsed by werkzeug.
    """
    if not value:
        return None
    value = value.strip()
    if _DELAY_SECONDS.fullmatch(value):
        return float(value)  # huge values give inf: the cap applies
    when = parse_date(value)  # None for anything it cannot parse, never a raise
    if when is None:
        return None
    from datetime import datetime, timezone

    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def retry_wait(delay: float, retry_after: str | None, max_backoff: float, jitter: float) -> float:
    """Seconds to wait before a retry: 0 <= wait <= ``max_backoff``, always.

    The backoff ``delay``, never shorter than a parseable ``Retry-After`` (junk falls back
    to the backoff), plus up to 25 % jitter (``jitter`` in [0, 1]), then capped.
    """
    wait = max(delay, _retry_after(retry_after) or 0.0) * (1.0 + 0.25 * jitter)
    return max(0.0, min(wait, max_backoff))
