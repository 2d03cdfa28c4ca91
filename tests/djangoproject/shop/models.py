"""Products (plain), articles (listed per language), tags (NULLs) and revisioned rows."""

from __future__ import annotations

from django.db import models
from django.urls import reverse


class Product(models.Model):
    slug = models.SlugField(unique=True)
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["pk"]

    def get_absolute_url(self) -> str:
        return reverse("product", args=[self.slug])


class Article(models.Model):
    slug = models.SlugField(unique=True)
    published = models.DateField()

    class Meta:
        ordering = ["pk"]

    def get_absolute_url(self) -> str:
        return reverse("article", args=[self.slug])


class Tag(models.Model):
    """A unique but nullable code and an optional update time: the NULL cases."""

    code = models.CharField(max_length=40, unique=True, null=True)
    updated = models.DateTimeField(null=True)

    class Meta:
        ordering = ["pk"]

    def get_absolute_url(self) -> str:
        return f"/tags/{self.pk}/"


class Revisioned(models.Model):
    """A revision bumped from one sequence on every insert and update (version_field)."""

    code = models.CharField(max_length=40, null=True)
    updated = models.DateTimeField(null=True, db_index=True)  # max() and IS NULL: lookups
    revision = models.BigIntegerField(db_index=True)

    class Meta:
        ordering = ["pk"]


class RowCount(models.Model):
    """A table's row count a trigger keeps (row_count=; the tests create the trigger)."""

    name = models.CharField(max_length=40, primary_key=True)
    total = models.BigIntegerField(null=True)
