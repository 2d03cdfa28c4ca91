"""A local IndexNow endpoint that answers as the protocol says (indexnow.org).

* 400 Bad request: the body is not JSON, or ``host``/``key``/``urlList`` is missing or
  wrong, or ``urlList`` is empty or holds more than 10,000 URLs;
* 422 Unprocessable Entity: the key does not match the schema, a URL is not on
  ``host``, or not under the key file's directory;
* 403 Forbidden: the key file (fetched from ``keyLocation`` or ``https://host/<key>.txt``)
  is missing or does not hold exactly the key;
* 429 Too Many Requests: while ``throttle`` > 0 (each 429 uses one up), with Retry-After;
* 500: while ``fail`` > 0;
* 202 Accepted the first time a key is verified (validation pending), 200 OK after.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

KEY = re.compile(r"[A-Za-z0-9-]{8,128}")


@dataclass
class IndexNowEndpoint:
    throttle: int = 0
    fail: int = 0
    verified: set[str] = field(default_factory=set)
    received: list[dict[str, Any]] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)

    def app(self) -> Starlette:
        async def indexnow(request: Request) -> PlainTextResponse:
            response = await self._answer(request)
            self.answers.append(response.status_code)
            return response

        return Starlette(routes=[Route("/indexnow", indexnow, methods=["POST"])])

    async def _answer(self, request: Request) -> PlainTextResponse:
        if self.fail > 0:
            self.fail -= 1
            return PlainTextResponse("Internal Server Error", 500)
        if self.throttle > 0:
            self.throttle -= 1
            return PlainTextResponse("Too Many Requests", 429, headers={"Retry-After": "0"})
        try:
            body = await request.json()
        except ValueError:
            return PlainTextResponse("Bad request: not JSON", 400)
        if not isinstance(body, dict) or not all(k in body for k in ("host", "key", "urlList")):
            return PlainTextResponse("Bad request: host, key and urlList are required", 400)
        host, key, urls = body["host"], body["key"], body["urlList"]
        if not isinstance(urls, list) or not 1 <= len(urls) <= 10_000:
            return PlainTextResponse("Bad request: urlList must hold 1 to 10,000 URLs", 400)
        if request.headers.get("content-type", "").split(";")[0] != "application/json":
            return PlainTextResponse("Bad request: JSON body expected", 400)
        if not isinstance(key, str) or not KEY.fullmatch(key):
            return PlainTextResponse("Unprocessable: key does not match the schema", 422)
        location = body.get("keyLocation") or f"https://{host}/{key}.txt"
        directory = location.rsplit("/", 1)[0] + "/"
        for url in urls:
            if not isinstance(url, str) or urlsplit(url).netloc != host:
                return PlainTextResponse(f"Unprocessable: {url!r} is not on {host}", 422)
            if not url.startswith(directory):
                return PlainTextResponse(f"Unprocessable: {url!r} is outside {directory}", 422)
        if urlsplit(location).netloc != host:
            return PlainTextResponse("Unprocessable: keyLocation is not on host", 422)
        async with httpx.AsyncClient() as client:
            try:
                found = await client.get(location)
            except httpx.TransportError:
                return PlainTextResponse("Forbidden: key file unreachable", 403)
        if found.status_code != 200 or found.text != key:
            return PlainTextResponse("Forbidden: key not valid", 403)
        self.received.append(body)
        if key not in self.verified:
            self.verified.add(key)
            return PlainTextResponse("Accepted: key validation pending", 202)
        return PlainTextResponse("OK", 200)
