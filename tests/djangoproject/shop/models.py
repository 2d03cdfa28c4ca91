"""Two models: products (plain) and articles (listed per language)."""

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
