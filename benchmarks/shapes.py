"""The value-shape matrix: one fast path for every shape real apps hand over.

``python -m benchmarks.shapes [--n N] [--repeats R] [--json PATH] [--dedupe] [--cases K]``

For each shape of ``lastmod`` and ``priority`` (``date`` objects, naive and aware
datetimes in UTC and in other zones, W3C strings of each allowed form, float, int, str
and ``Decimal`` priorities; dicts, ``SitemapEntry`` objects, SQLAlchemy ``RowMapping``s
from SQLite, and objects turned into dicts by ``CallableProvider(..., map=)``), a
provider of N entries (``&`` in every URL) is served through the core: a
section page (``/sitemap-p-1.xml``), ``/sitemap.xml`` and the first index (a fresh app:
one planning pass), each through the ASGI and the WSGI middleware in process. Each is
timed in alternation with the plain-Python floor for that shape: loop, format the value
the cheapest correct way, escape, join. ``--dedupe`` serves them with
``SitemapConfig(dedupe=True)`` (one URL, one listing: what it costs); ``--cases K`` runs
the first K shapes alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.run import asgi_request, wsgi_call
from sitemap_middleware import (
    ASGISitemapMiddleware,
    Renders,
    SitemapConfig,
    SitemapEntry,
    WSGISitemapMiddleware,
)
from sitemap_middleware.providers import CallableProvider

START = datetime(2024, 1, 1, 8, 30, tzinfo=timezone.utc)
PARIS = timezone(timedelta(hours=2))
HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
)


def _loc(i: int) -> str:
    return f"https://example.com/products/{i}?ref=a&b={i}"


#: shape -> (the lastmod of entry i, the floor's text of it)
LASTMODS: dict[str, tuple[Callable[[int], Any], Callable[[Any], str]]] = {
    "w3c str +00:00": (
        lambda i: (START + timedelta(minutes=i)).isoformat(),
        lambda v: v,
    ),
    "w3c str Z": (
        lambda i: (START + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        lambda v: v,
    ),
    "w3c str date": (lambda i: (START + timedelta(days=i % 3000)).date().isoformat(), lambda v: v),
    # XML Schema's dateTime needs seconds: the cheapest correct text is a normalised one.
    "w3c str minutes": (
        lambda i: (START + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M+00:00"),
        lambda v: datetime.fromisoformat(v).isoformat(timespec="seconds"),
    ),
    "w3c str fraction (JS)": (
        lambda i: (START + timedelta(minutes=i, microseconds=5000)).isoformat()[:23] + "Z",
        lambda v: datetime.fromisoformat(v).isoformat(timespec="seconds"),
    ),
    "date": (lambda i: (START + timedelta(days=i % 3000)).date(), date.isoformat),
    "naive datetime": (
        lambda i: (START + timedelta(minutes=i)).replace(tzinfo=None),
        lambda v: v.isoformat(timespec="seconds") + "+00:00",
    ),
    "aware UTC": (
        lambda i: START + timedelta(minutes=i),
        lambda v: v.isoformat(timespec="seconds"),
    ),
    "aware +02:00": (
        lambda i: (START + timedelta(minutes=i)).astimezone(PARIS),
        lambda v: v.isoformat(timespec="seconds"),
    ),
}

PRIORITIES: dict[str, Any] = {
    "float": 0.5,
    "int": 1,
    "str": "0.5",
    "Decimal": Decimal("0.5"),
}


class Product:
    """An ORM-like row: a slotted object with attributes (as an ORM instance has)."""

    __slots__ = ("changefreq", "loc", "priority", "updated")

    def __init__(self, loc: str, updated: Any, changefreq: str, priority: Any) -> None:
        self.loc, self.updated, self.changefreq, self.priority = loc, updated, changefreq, priority


def product_entry(product: Product) -> dict[str, Any]:
    """The user's mapping function, given to ``CallableProvider(..., map=)``."""
    return {
        "loc": product.loc,
        "lastmod": product.updated,
        "changefreq": product.changefreq,
        "priority": product.priority,
    }


def _row_mappings(rows: list[dict[str, Any]]) -> list[Any]:
    """``row._mapping`` of each row read back from an in-memory SQLite table (before
    any timing): loc, lastmod (a DATETIME, read back naive), changefreq, priority."""
    import sqlalchemy as sa

    table = sa.Table(
        "urls",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("loc", sa.String),
        sa.Column("lastmod", sa.DateTime),
        sa.Column("changefreq", sa.String),
        sa.Column("priority", sa.Float),
    )
    engine = sa.create_engine("sqlite://")
    table.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(table.insert(), rows)
        columns = [table.c.loc, table.c.lastmod, table.c.changefreq, table.c.priority]
        fetched = connection.execute(sa.select(*columns).order_by(table.c.id)).all()
    engine.dispose()
    return [row._mapping for row in fetched]


def items(n: int, lastmod: str, priority: str, kind: str) -> list[Any]:
    make = LASTMODS[lastmod][0]
    value = PRIORITIES[priority]
    if kind == "SitemapEntry":
        return [
            SitemapEntry(_loc(i), lastmod=make(i), changefreq="daily", priority=value)
            for i in range(n)
        ]
    if kind == "ORM rows via map=":
        return [Product(_loc(i), make(i), "daily", value) for i in range(n)]
    rows = [
        {"loc": _loc(i), "lastmod": make(i), "changefreq": "daily", "priority": value}
        for i in range(n)
    ]
    return _row_mappings(rows) if kind == "RowMapping" else rows


def floor(raw: list[Any], lastmod: str) -> bytes:
    text = LASTMODS[lastmod][1]
    parts = [HEAD]
    append = parts.append
    for item in raw:
        if isinstance(item, SitemapEntry):  # validated when built: a datetime or a date
            loc, priority = item.loc, item.priority
            lastmod = item.lastmod.isoformat(timespec="seconds")  # type: ignore[union-attr,call-arg]
        elif isinstance(item, Product):
            loc, lastmod, priority = item.loc, text(item.updated), item.priority
        else:
            loc, lastmod, priority = item["loc"], text(item["lastmod"]), item["priority"]
        append(
            "<url><loc>"
            + loc.replace("&", "&amp;")
            + "</loc><lastmod>"
            + lastmod
            + "</lastmod><changefreq>daily</changefreq><priority>"
            + str(float(priority))  # type: ignore[arg-type]
            + "</priority></url>\n"
        )
    append("</urlset>\n")
    return "".join(parts).encode()


class Generated:
    """A generator provider (no version: every request reads it)."""

    def __init__(self, raw: list[Any]) -> None:
        self.raw = raw

    async def entries(self) -> AsyncIterator[Any]:
        for item in self.raw:
            yield item


#: Whether the configurations list each URL once (``--dedupe``).
DEDUPE = False


def _config(raw: list[Any]) -> SitemapConfig:
    mapped = bool(raw) and isinstance(raw[0], Product)  # the ORM rows: the user's map=
    provider = CallableProvider(lambda: raw, map=product_entry) if mapped else Generated(raw)
    return SitemapConfig(
        base_url="https://example.com",
        sections={"p": provider},
        renders=Renders(memory_bytes=0, plan_ttl=0),
        dedupe=DEDUPE,
    )


def _time(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _home(environ: Any, start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [])
    return []


async def _home_asgi(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


class _ASGI:
    """GETs through the ASGI middleware in process, on one event loop."""

    def __init__(self, raw: list[Any]) -> None:
        self.raw = raw
        self.loop = asyncio.new_event_loop()
        self.app = ASGISitemapMiddleware(_home_asgi, config=_config(raw))

    def fresh(self) -> _ASGI:
        other = _ASGI.__new__(_ASGI)
        other.raw, other.loop = self.raw, self.loop
        other.app = ASGISitemapMiddleware(_home_asgi, config=_config(self.raw))
        return other

    def get(self, path: str) -> bytes:
        chunks: list[bytes] = []
        self.loop.run_until_complete(asgi_request(self.app, path, on_chunk=chunks.append))
        return b"".join(chunks)

    def close(self) -> None:
        self.loop.close()


class _WSGI:
    """GETs through the WSGI middleware in process (its portal thread runs the core)."""

    def __init__(self, raw: list[Any]) -> None:
        self.raw = raw
        self.app = WSGISitemapMiddleware(_home, config=_config(raw))

    def fresh(self) -> _WSGI:
        return _WSGI(self.raw)

    def get(self, path: str) -> bytes:
        return wsgi_call(self.app, path)

    def close(self) -> None:
        pass


def _case(n: int, repeats: int, lastmod: str, priority: str, kind: str) -> dict[str, Any]:
    raw = items(n, lastmod, priority, kind)
    times: dict[str, list[float]] = {"floor": []}
    row: dict[str, Any] = {"lastmod": lastmod, "priority": priority, "items": kind}
    for adapter in (_ASGI(raw), _WSGI(raw)):
        name = type(adapter).__name__.strip("_")
        try:
            assert adapter.get("/sitemap-p-1.xml").count(b"<url>") == n  # warm
            for _ in range(repeats):
                fresh = adapter.fresh()  # built before the clock: its first index is timed
                times["floor"].append(_time(lambda: floor(raw, lastmod)))
                times.setdefault(f"{name} page", []).append(
                    _time(lambda a=adapter: a.get("/sitemap-p-1.xml"))  # type: ignore[misc]
                )
                times["floor"].append(_time(lambda: floor(raw, lastmod)))
                times.setdefault(f"{name} sitemap.xml", []).append(
                    _time(lambda a=adapter: a.get("/sitemap.xml"))  # type: ignore[misc]
                )
                times.setdefault(f"{name} index", []).append(
                    _time(lambda f=fresh: f.get("/sitemap_index.xml"))  # type: ignore[misc]
                )
        finally:
            adapter.close()
    best = {key: min(values) for key, values in times.items()}
    row["floor_ms"] = round(best["floor"] * 1000, 1)
    for key, value in best.items():
        if key != "floor":
            row[key.replace(" ", "_").replace(".", "_") + "_x_floor"] = round(
                value / best["floor"], 2
            )
    return row


def measure(n: int, repeats: int, cases: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    rows = []
    for lastmod, priority, kind in cases:
        rows.append(_case(n, repeats, lastmod, priority, kind))
        print(_row(rows[-1]), flush=True)
    return rows


COLUMNS = [
    f"{adapter}_{doc}_x_floor"
    for adapter in ("ASGI", "WSGI")
    for doc in ("page", "sitemap_xml", "index")
]


def _row(r: dict[str, Any]) -> str:
    ratios = " | ".join(f"{r[column]}×" for column in COLUMNS)
    return f"| {r['lastmod']} | {r['priority']} | {r['items']} | {r['floor_ms']} | {ratios} |"


def all_cases() -> list[tuple[str, str, str]]:
    cases = [(lastmod, "float", "dict") for lastmod in LASTMODS]
    cases += [
        ("w3c str +00:00", priority, "dict") for priority in PRIORITIES if priority != "float"
    ]
    cases += [("date", "Decimal", "dict")]
    cases += [("w3c str +00:00", "float", "SitemapEntry"), ("aware UTC", "float", "SitemapEntry")]
    cases += [("naive datetime", "float", "RowMapping")]
    cases += [
        ("aware UTC", "float", "ORM rows via map="),
        ("naive datetime", "int", "ORM rows via map="),
    ]
    return cases


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--dedupe", action="store_true", help="SitemapConfig(dedupe=True)")
    parser.add_argument("--cases", type=int, help="the first CASES shapes alone")
    args = parser.parse_args(argv)
    global DEDUPE
    DEDUPE = args.dedupe
    print(f"{args.n:,} entries a page; best of {args.repeats}, in alternation with the floor")
    documents = ("page", "/sitemap.xml", "first index")
    ratios = [f"{adapter} {doc} × floor" for adapter in ("ASGI", "WSGI") for doc in documents]
    print("| lastmod | priority | items | floor ms | " + " | ".join(ratios) + " |")
    print("| --- " * (4 + len(ratios)) + "|")
    rows = measure(args.n, args.repeats, all_cases()[: args.cases])
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
