"""Starting the demo: ``python -m sitemap_middleware demo [options]`` (``run``).

It checks the ``demo`` extra is installed, builds the data (or says it reuses it), and
serves the shop under uvicorn (``apps.asgi_app``) or werkzeug (``apps.wsgi_app``). What
to open is printed only once the server has answered every printed link once (planning
the sitemaps of 360,000 product URLs is the slow part): each is then answered at once.
"""

from __future__ import annotations

import http.client
import importlib
import importlib.util
import logging
import socket
import sys
import threading
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

from .._logs import logger
from .planted import PlantedWarnings, left_out_message
from .site import (
    INDEXNOW_KEY,
    PRODUCT_LANGUAGES,
    database_path,
    demo_parser,
    prepare_data,
    second_host,
    sitemap_links,
)

#: What the demo imports from the ``demo`` extra (checked first, so a missing one is named).
DEMO_NEEDS = ("uvicorn", "flask", "sqlalchemy", "aiosqlite", "prometheus_client", "httpx")
#: Printed once every link has been answered: what the tests and scripts wait for.
READY = "Ready in"
#: Seconds one start-up request may take (a slow machine planning 120,000 products).
WARM_TIMEOUT = 900.0


def require_demo_extra() -> None:
    """Exit with the install command when a package of the ``demo`` extra is missing."""
    missing = []
    for name in DEMO_NEEDS:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise SystemExit(
            f"the demo needs the demo extra (missing: {', '.join(missing)}): "
            'pip install "sitemap-middleware[demo]" (from a clone: bash scripts/demo)'
        )


def links(base_url: str) -> tuple[list[str], list[str]]:
    """(the lines naming what to open, every URL they name): printed once ready."""
    other = base_url.replace(urlsplit(base_url).hostname or "", second_host(base_url), 1)
    paths = ["/", "/robots.txt", "/sitemap.xml", "/sitemap-news-1.xml", "/sitemap-pages-1.txt"]
    paths += ["/metrics", f"/{INDEXNOW_KEY}.txt"]
    lines = [f"Sitemaps for people (HTML view): {base_url}/sitemap.html", "Also open:"]
    lines += [f"  {base_url}{path}" for path in paths]
    lines.append(f"  {base_url}/blog/sitemap.xml  (a mounted sub-application's own sitemaps)")
    lines.append(f"  {other}/sitemap.xml  (a second host name: its own sections and robots.txt)")
    urls = [f"{base_url}/sitemap.html", *(base_url + path for path in paths)]
    urls += [f"{base_url}/blog/sitemap.xml", f"{other}/sitemap.xml", f"{other}/sitemap.html"]
    # The home page's links too: the first products page is the largest of them.
    urls += [base_url + path for path, _ in sitemap_links()]
    return lines, list(dict.fromkeys(urls))


def _connect_host(host: str) -> str:
    """The address to reach a server listening on ``host`` (a wildcard: loopback)."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)


def fetch(host: str, port: int, url: str, timeout: float = WARM_TIMEOUT) -> int:
    """GET ``url`` from the server at ``host:port`` as a browser would (its Host, gzip
    accepted); the status."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        headers = {"Host": parts.netloc, "Accept-Encoding": "gzip", "User-Agent": "demo start-up"}
        connection.request("GET", parts.path or "/", headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def warm(host: str, port: int, urls: Sequence[str]) -> list[str]:
    """Wait for the server to listen, then ask it for each URL once; what did not answer
    200 or a redirect."""
    host = _connect_host(host)
    while True:
        try:
            socket.create_connection((host, port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    failed = []
    for url in urls:
        try:
            status = fetch(host, port, url)
        except (OSError, http.client.HTTPException) as exc:
            failed.append(f"{url}: {exc}")
            continue
        if not 200 <= status < 400:
            failed.append(f"{url}: {status}")
    return failed


def _announce(host: str, port: int, urls: Sequence[str], lines: list[str], started: float) -> None:
    failed = warm(host, port, urls)
    for problem in failed:
        print(f"warning: {problem}", flush=True)
    print(f"\n{READY} {time.monotonic() - started:.1f} s: every link below answers at once.")
    print("\n".join(lines), flush=True)


def run(argv: list[str] | None = None) -> None:
    require_demo_extra()
    started = time.monotonic()
    argv = sys.argv[1:] if argv is None else argv
    parser = demo_parser()
    args = parser.parse_args(argv)
    # One INFO record per document served (logger "sitemap_middleware").
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logger.addFilter(PlantedWarnings())
    if args.redis_url and importlib.util.find_spec("redis") is None:
        parser.error(
            "--redis-url needs the redis package: pip install '.[redis]' in the clone"
            " (bash scripts/demo installs it when given --redis-url)"
        )
    base_url = (args.base_url or f"http://{args.host}:{args.port}").rstrip("/")
    database = database_path(args.data_dir, args.products)
    if database.exists():
        print(f"reusing the catalog of {args.products:,} products in {database}", flush=True)
        prepare_data(args.data_dir, args.products)  # (the docs and landing files)
    else:
        print(
            f"building a catalog of {args.products:,} products in {args.data_dir}"
            " (once: later starts reuse it) ...",
            flush=True,
        )
        building = time.monotonic()
        prepare_data(args.data_dir, args.products)
        print(f"built in {time.monotonic() - building:.1f} s", flush=True)
    languages = len(PRODUCT_LANGUAGES.codes)
    print(
        f"planning the sitemaps ({languages * args.products:,} product URLs, each product in"
        f" {languages} languages): the links are printed once each answers at once ...",
        flush=True,
    )
    lines, urls = links(base_url)
    lines.insert(0, f"Demo site on {base_url}/ ({args.server}).")
    flavour = "asgi" if args.server == "uvicorn" else "wsgi"
    lines += left_out_message(base_url, argv, flavour)
    announcer = threading.Thread(
        target=_announce,
        args=(args.host, args.port, urls, lines, started),
        name="demo start-up",
        daemon=True,
    )
    from .apps import asgi_app, wsgi_app  # (the web frameworks: once the extra is known)

    if args.server == "uvicorn":
        import uvicorn

        app = asgi_app(base_url, database, args.redis_url, args.urls_per_page)
        announcer.start()
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    else:
        from werkzeug.serving import run_simple

        app = wsgi_app(base_url, database, args.redis_url, args.urls_per_page)
        announcer.start()
        run_simple(args.host, args.port, app, threaded=True)
