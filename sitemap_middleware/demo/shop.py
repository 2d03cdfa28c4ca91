"""What the demo shop answers, whichever framework routes to it (``Shop``).

Every URL the demo's sitemaps list: the pages, the alternates in other languages, a
small PNG per product (generated in memory), the news, video and landing pages, and the
pages planted for the sitemaps to leave out (``planted.py``); anything else is a 404,
products outside the catalog included.
"""

from __future__ import annotations

import html
import sqlite3
import struct
import zlib
from pathlib import Path

from .planted import planted_answer, planted_title
from .site import BLOG_POSTS, NEWS_AGES, VIDEO, landing_pages, sitemap_links

PAGE = """<!doctype html><html lang="{lang}"><meta charset="utf-8"><title>{title}</title>{head}
<h1>{title}</h1>
<p>{body}</p>
<h2>Sitemaps</h2>
<ul>
{sitemaps}
</ul>
<h2>The shop</h2>
<ul>
<li><a href="/">Home</a></li>
<li><a href="/about">About</a></li>
<li><a href="/products/1">Product 1</a>
(<a href="/de/products/1">Deutsch</a>, <a href="/fr/products/1">Français</a>)</li>
<li><a href="/blog/">The blog</a> (a mounted sub-application with its own sitemaps)</li>
<li><a href="/videos/{video}">A video page</a></li>
<li><a href="/news/1">The latest news</a></li>
<li><a href="/metrics">Metrics</a> (Prometheus, of the documents served)</li>
<li><a href="/docs/">Docs</a> (static files, listed by a directory provider)</li>
</ul>
</html>
"""
PRODUCT_TITLES = {"en": "Product", "de": "Produkt", "fr": "Produit"}
#: Cached for a day, like any static image.
IMAGE_HEADERS = {"Cache-Control": "public, max-age=86400"}


def catalog_size(database: Path) -> int:
    with sqlite3.connect(database) as conn:
        (size,) = conn.execute("SELECT count(*) FROM products").fetchone()
    conn.close()
    return int(size)


def render_page(
    title: str, body: str = "A page of the demo shop.", lang: str = "en", head: str = ""
) -> str:
    sitemaps = "\n".join(
        f'<li><a href="{path}">{path}</a> ({html.escape(note)})</li>'
        for path, note in sitemap_links()
    )
    return PAGE.format(
        title=html.escape(title), body=body, sitemaps=sitemaps, video=VIDEO, lang=lang, head=head
    )


def png(seed: int, size: int = 16) -> bytes:
    """A small solid-colour PNG (RFC 2083), its colour derived from ``seed``."""
    colour = bytes(((seed * 67) % 256, (seed * 131) % 256, (seed * 199) % 256))
    rows = b"".join(b"\x00" + colour * size for _ in range(size))  # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


class Shop:
    """What both flavours answer, as (status, body) pairs; the frameworks only route."""

    def __init__(self, database: Path, flavour: str) -> None:
        self.directory = database.parent
        self.products = catalog_size(database)
        self.flavour = flavour

    def page(self, title: str, body: str = "A page of the demo shop.", lang: str = "en") -> str:
        return render_page(title, body, lang)

    def home(self) -> str:
        return self.page(f"Demo shop ({self.flavour})", f"{self.products:,} products from SQLite.")

    def product(self, product_id: int, lang: str = "en") -> tuple[int, str]:
        if not 1 <= product_id <= self.products or lang not in PRODUCT_TITLES:
            return 404, self.page("Not found", f"There is no product {product_id}.")
        return 200, self.page(f"{PRODUCT_TITLES[lang]} {product_id}", lang=lang)

    def blog(self, post: int = 0) -> tuple[int, str]:
        if not 0 <= post <= BLOG_POSTS:
            return 404, self.page("Not found", f"There is no post {post}.")
        title = f"Blog post {post}" if post else "Blog"
        return 200, self.page(title, "A sub-application mounted at /blog, with its own sitemaps.")

    def product_image(self, product_id: int) -> bytes | None:
        return png(product_id) if 1 <= product_id <= self.products else None

    def news(self, number: int) -> tuple[int, str]:
        if not 1 <= number <= len(NEWS_AGES):
            return 404, self.page("Not found", f"There is no story {number}.")
        return 200, self.page(f"Story {number}", "Published by the Demo Times.")

    def video(self, slug: str, player: bool = False) -> tuple[int, str]:
        if slug != VIDEO:
            return 404, self.page("Not found", "There is no such video.")
        return 200, self.page("Video player" if player else "Unboxing product 1")

    def video_thumbnail(self, slug: str) -> bytes | None:
        return png(0) if slug == VIDEO else None

    def planted(self, path: str) -> tuple[int, dict[str, str], str]:
        """A page planted to be left out, or the deals page (``planted.py``)."""
        title, body, head = planted_title(path)
        return planted_answer(path, render_page(title, body, head=head))

    def landing(self, slug: str) -> tuple[int, str]:
        if f"/landing/{slug}" not in landing_pages(self.directory):
            return 404, self.page("Not found", "There is no such landing page.")
        return 200, self.page(slug.replace("-", " ").capitalize())
