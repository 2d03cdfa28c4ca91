"""Command line: ``sitemap-middleware demo | check | export | generate | notify | explain``
(or ``python -m sitemap_middleware``).

``check``, ``export``, ``generate``, ``notify`` and ``explain`` need the ``cli`` extra
(httpx, rich, lxml).
"""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sitemap-middleware",
        description=(
            "Sitemaps for ASGI and WSGI apps: run the demo, check a site, export files, "
            "push changes to IndexNow."
        ),
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="start the demo site (SQLite, 120,000 products)", add_help=False
    )
    demo.add_argument("demo_args", nargs=argparse.REMAINDER)
    try:
        from ._ops.cli import add_check_parser, add_export_parser, add_generate_parser
        from ._ops.explain import add_explain_parser
        from ._ops.notify import add_notify_parser
    except ImportError:  # pragma: no cover - without the cli extra
        pass
    else:
        add_check_parser(commands)
        add_export_parser(commands)
        add_generate_parser(commands)
        add_notify_parser(commands)
        add_explain_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["demo"]:  # the demo has its own argparse parser
        from .demo.serve import run

        run(args[1:])
        return
    parser = build_parser()
    namespace = parser.parse_args(args)
    try:
        status = namespace.handler(namespace)
    except ImportError as exc:
        parser.exit(
            2,
            f"sitemap-middleware {namespace.command}: {exc}; "
            "install the cli extra (from a clone of the repository: pip install '.[cli]')\n",
        )
    except ValueError as exc:
        parser.exit(2, f"sitemap-middleware {namespace.command}: error: {exc}\n")
    raise SystemExit(status)


if __name__ == "__main__":
    main()
