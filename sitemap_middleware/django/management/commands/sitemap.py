"""``manage.py sitemap check|export``: see ``sitemap_middleware._django.command``."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand

from ...._django.command import run


class Command(BaseCommand):  # type: ignore[misc]
    help = (
        "Check the project's sitemaps like a search engine, or export them to static "
        "files: the sitemap-middleware CLI's check and export, on this project in process"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help="check|export …")

    def handle(self, *args: Any, **options: Any) -> None:
        raise SystemExit(run(list(options["arguments"])))
