"""``manage.py seed_shop [--domain example.com]``: the demo rows (run after migrate)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from shop.data import seed


class Command(BaseCommand):
    help = "Seed the demo categories, products and flat pages, and set the Site's domain."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--domain", default="example.com", help="the Site's domain")

    def handle(self, *args: Any, domain: str, **options: Any) -> None:
        seed(domain)
        self.stdout.write(f"seeded the example shop on {domain}")
