"""``manage.py sitemap check|export|notify|explain``: see ``sitemap_middleware._django.command``."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand

from ...._django.command import COMMANDS, run


class Command(BaseCommand):  # type: ignore[misc]
    help = (
        "Check the project's sitemaps like a search engine, export them to static files, "
        "push what changed to IndexNow or say why a URL is listed: the sitemap-middleware "
        "CLI's check, export, notify and explain, on this project in process"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help="|".join(COMMANDS) + " …")

    def handle(self, *args: Any, **options: Any) -> None:
        raise SystemExit(run(list(options["arguments"])))
