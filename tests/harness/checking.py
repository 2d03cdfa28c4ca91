"""Running ``check`` in process against a URL, without its HTTP checks of listed pages."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import anyio
import httpx

from sitemap_middleware._ops.check import CheckOptions, run_check
from sitemap_middleware._ops.fetch import Fetcher
from sitemap_middleware._ops.findings import CheckReport

__all__ = ["check_report"]


def check_report(
    url: str, client: AbstractAsyncContextManager[httpx.AsyncClient] | None = None
) -> CheckReport:
    """``check url`` through ``client`` (a real HTTP client when None), no rate limit."""

    async def main() -> CheckReport:
        async with client or httpx.AsyncClient() as http:
            options = CheckOptions(http_checks=False)
            return await run_check(url, Fetcher(http, rate=0), options)

    return anyio.run(main)
