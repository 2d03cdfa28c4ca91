"""Demo rows: the Site's domain, categories, products and flat pages (idempotent)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

from django.conf import settings
from django.contrib.flatpages.models import FlatPage
from django.contrib.sites.models import Site
from django.db import transaction

from .models import Category, Product

START = datetime(2024, 5, 1, 9, 30, tzinfo=timezone.utc)
CATEGORIES = [("tea", "Tea"), ("coffee", "Coffee"), ("teaware", "Teaware")]
PRODUCTS = [
    ("tea", "sencha", "Sencha", "12.50"),
    ("tea", "assam", "Assam", "9.90"),
    ("tea", "earl-grey", "Earl Grey", "8.40"),
    ("tea", "rooibos", "Rooibos", "7.20"),
    ("coffee", "ethiopia-yirgacheffe", "Ethiopia Yirgacheffe", "14.00"),
    ("coffee", "colombia-huila", "Colombia Huila", "13.00"),
    ("coffee", "espresso-blend", "Espresso blend", "11.50"),
    ("teaware", "kyusu", "Kyusu teapot", "39.00"),
    ("teaware", "gaiwan", "Gaiwan", "24.00"),
]
FLATPAGES = [
    # (url, title, registration_required): FlatPageSitemap leaves the last one out.
    ("/shipping/", "Shipping and returns", False),
    ("/imprint/", "Imprint", False),
    ("/wholesale/", "Wholesale prices", True),
]


@transaction.atomic
def seed(domain: str = "example.com") -> None:
    site, _ = Site.objects.update_or_create(
        pk=settings.SITE_ID, defaults={"domain": domain, "name": "Example Shop"}
    )
    categories = {}
    for number, (slug, name) in enumerate(CATEGORIES):
        categories[slug], _ = Category.objects.update_or_create(slug=slug, defaults={"name": name})
        # auto_now sets the time on save: give the demo rows distinct, fixed times.
        Category.objects.filter(slug=slug).update(updated_at=START + timedelta(days=number))
    for number, (category, slug, name, price) in enumerate(PRODUCTS):
        Product.objects.update_or_create(
            slug=slug,
            defaults={
                "category": categories[category],
                "name": name,
                "price": Decimal(price),
                "description": f"{name}, from the example shop.",
            },
        )
        Product.objects.filter(slug=slug).update(
            updated_at=START + timedelta(days=number, hours=number)
        )
    for url, title, registration_required in FLATPAGES:
        page, _ = FlatPage.objects.update_or_create(
            url=url,
            defaults={
                "title": title,
                "content": f"<p>{title}.</p>",
                "registration_required": registration_required,
            },
        )
        page.sites.set([site])
