"""Starting the demo: ``python -m sitemap_middleware demo [options]`` (``run``).

It checks the ``demo`` extra is installed, prepares the data, prints what to open and
what the sitemaps leave out, and serves the shop under uvicorn (``apps.asgi_app``) or
werkzeug (``apps.wsgi_app``).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from urllib.parse import urlsplit

from .._logs import logger
from .planted import PlantedWarnings, left_out_message
from .site import INDEXNOW_KEY, demo_parser, prepare_data, second_host

#: What the demo imports from the ``demo`` extra (checked first, so a missing one is named).
DEMO_NEEDS = ("uvicorn", "flask", "sqlalchemy", "aiosqlite", "prometheus_client", "httpx")


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


def run(argv: list[str] | None = None) -> None:
    require_demo_extra()
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
    print(f"preparing {args.products:,} products in {args.data_dir} ...", flush=True)
    database = prepare_data(args.data_dir, args.products)
    print(f"\nDemo site on {base_url}/ ({args.server}).")
    print(f"Sitemaps for people (HTML view): {base_url}/sitemap.html")
    print("Also open:")
    for path in (
        "/",
        "/robots.txt",
        "/sitemap.xml",
        "/sitemap-news-1.xml",
        "/sitemap-pages-1.txt",
        "/metrics",
        f"/{INDEXNOW_KEY}.txt",
    ):
        print(f"  {base_url}{path}")
    other = base_url.replace(urlsplit(base_url).hostname or "", second_host(base_url), 1)
    print(f"  {base_url}/blog/sitemap.xml  (a mounted sub-application's own sitemaps)")
    print(f"  {other}/sitemap.xml  (a second host name: its own sections and robots.txt)")
    flavour = "asgi" if args.server == "uvicorn" else "wsgi"
    print("\n".join(left_out_message(base_url, argv, flavour)))
    print(flush=True)
    from .apps import asgi_app, wsgi_app  # (the web frameworks: once the extra is known)

    if args.server == "uvicorn":
        import uvicorn

        app = asgi_app(base_url, database, args.redis_url, args.urls_per_page)
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    else:
        from werkzeug.serving import run_simple

        run_simple(
            args.host,
            args.port,
            wsgi_app(base_url, database, args.redis_url, args.urls_per_page),
            threaded=True,
        )
