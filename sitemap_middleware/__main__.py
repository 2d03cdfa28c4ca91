"""Command line: ``python -m sitemap_middleware demo``."""

from __future__ import annotations

import sys

USAGE = (
    "usage: python -m sitemap_middleware demo [--server uvicorn|werkzeug] [--host H] [--port P]"
    " [--base-url URL] [--products N] [--data-dir DIR] [--redis-url URL]"
)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "demo":
        print(USAGE)
        raise SystemExit(2)
    from ._demo import run

    run(args[1:])


if __name__ == "__main__":
    main()
