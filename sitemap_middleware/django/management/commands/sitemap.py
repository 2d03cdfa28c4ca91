"""``manage.py sitemap check|export|notify``: see ``sitemap_middleware._django.command``."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand

from ...._django.command import run


class Command(BaseCommand):  # type: ignore[misc]
    help = (
        "Check the project's sitemaps like a search engine, export them to static files, "
        "or push what changed to IndexNow: the sitemap-middleware CLI's check, export and "
        "notify, on this project in process"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help="check|export|notify …")

    def handle(self, *args: Any, **options: Any) -> None:
        raise SystemExit(run(list(options["arguments"])))
