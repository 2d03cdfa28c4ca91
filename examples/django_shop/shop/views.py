"""The shop's pages: every URL the sitemaps list answers 200 here."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from .models import Category, Product


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "shop/home.html", {"categories": Category.objects.all()})


def about(request: HttpRequest) -> HttpResponse:
    return render(request, "shop/about.html")


def category(request: HttpRequest, slug: str) -> HttpResponse:
    found = get_object_or_404(Category, slug=slug)
    return render(request, "shop/category.html", {"category": found})


def product(request: HttpRequest, slug: str) -> HttpResponse:
    found = get_object_or_404(Product.objects.select_related("category"), slug=slug)
    return render(request, "shop/product.html", {"product": found})
