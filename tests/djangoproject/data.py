"""The test data, written to a database alias: the same rows on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

PRODUCTS = 17  # 3 pages of 7
ARTICLES = 6  # 12 URLs after i18n (2 languages each): 3 pages of 5


def seed(using: str = "default") -> None:
    """Migrate ``using`` and (re)write its rows and sites."""
    from django.contrib.sites.models import Site
    from django.core.management import call_command

    from .shop.models import Article, Product

    call_command("migrate", database=using, verbosity=0)
    Product.objects.using(using).all().delete()
    Article.objects.using(using).all().delete()
    start = datetime(2024, 1, 1, 8, 30, tzinfo=timezone.utc)
    Product.objects.using(using).bulk_create(
        Product(pk=i, slug=f"product-{i}", updated_at=start + timedelta(days=i, hours=i))
        for i in range(1, PRODUCTS + 1)
    )
    Article.objects.using(using).bulk_create(
        Article(pk=i, slug=f"article-{i}", published=date(2024, 3, i))
        for i in range(1, ARTICLES + 1)
    )
    Site.objects.using(using).update_or_create(
        pk=1, defaults={"domain": "example.com", "name": "shop"}
    )
    Site.objects.using(using).update_or_create(
        pk=2, defaults={"domain": "www.example.com", "name": "www"}
    )
