"""The ``notify`` command: push what changed since the last run to IndexNow.

For deploy scripts and scheduled jobs. The snapshot file keeps, between runs, what the
sitemaps listed (each URL's digest); the first run only writes it (IndexNow asks not to
push a whole site), later runs push the URLs added, changed or removed and write the new
snapshot once every batch was accepted, so a failed push is pushed again next time.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import anyio

__all__ = ["add_notify_parser"]


def add_notify_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "notify",
        help="push the URLs changed since the last run to IndexNow (keeps a snapshot file)",
        description=(
            "Snapshot what the app's sitemaps list and push the URLs added, changed or "
            "removed since the snapshot FILE (the first run writes it and pushes nothing). "
            "The app's SitemapConfig needs indexnow_key."
        ),
    )
    parser.add_argument("--app", metavar="MODULE:APP", required=True, help="the ASGI/WSGI app")
    parser.add_argument(
        "--snapshot", type=Path, required=True, metavar="FILE", help="kept between runs (JSON)"
    )
    parser.add_argument(
        "--endpoint",
        default="https://api.indexnow.org/indexnow",
        help="the IndexNow endpoint (default: api.indexnow.org, shared by the engines)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=4,
        help="retries of a POST answered 429/5xx or cut off, with backoff (4)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the changed URLs; send and write nothing"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=_notify_command)


def _notify_command(args: argparse.Namespace) -> int:
    from .apps import load_app
    from .export import find_config
    from .indexnow import IndexNowNotifier
    from .snapshots import Snapshot, changed_urls, take_snapshot

    config = find_config(load_app(args.app))
    notifier = IndexNowNotifier.for_config(config, endpoint=args.endpoint, retries=args.retries)
    previous = None
    if args.snapshot.exists():
        try:
            previous = Snapshot.from_json(args.snapshot.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"--snapshot {str(args.snapshot)!r} cannot be read: {exc}") from None

    async def run() -> tuple[Any, list[str], Any]:
        current = await take_snapshot(config, previous)
        urls = [] if previous is None else changed_urls(previous, current)
        if args.dry_run or not urls:
            return current, urls, None
        return current, urls, await notifier.notify(urls)

    current, urls, result = anyio.run(run)
    ok = result is None or result.ok
    if ok and not args.dry_run:
        _write_atomically(args.snapshot, current.to_json())
    summary: dict[str, Any] = {
        "first_run": previous is None,
        "changed": len(urls),
        "submitted": 0 if result is None else result.submitted,
        "ok": ok,
        "errors": [] if result is None else [b.error for b in result.batches if b.error],
    }
    if args.dry_run:
        summary["urls"] = urls
    if args.json:
        print(json.dumps(summary, indent=2))
    elif previous is None:
        print(f"first run: snapshot written to {args.snapshot}; nothing pushed")
    else:
        print(
            f"{len(urls)} URLs changed, {summary['submitted']} accepted by {args.endpoint}"
            + (" (dry run: nothing sent)" if args.dry_run else "")
        )
        for url in urls if args.dry_run else []:
            print(f"  {url}")
        for error in summary["errors"]:
            print(f"  error: {error}")
    return 0 if ok else 1


def _write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` whole: a reader (or a crash) never sees half a snapshot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
