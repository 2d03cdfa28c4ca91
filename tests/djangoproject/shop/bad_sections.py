"""Sections a system check must refuse: a QuerySet keyed by a nullable field."""

from __future__ import annotations

from sitemap_middleware.django import DjangoQuerySetProvider

from .models import Tag

sections = {"tags": DjangoQuerySetProvider(Tag.objects.all(), key="code", location="/t/{code}/")}
