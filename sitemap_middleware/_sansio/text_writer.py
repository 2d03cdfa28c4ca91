"""Text sitemaps: one URL a line, UTF-8, the limits of an XML page."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .batches import PlainBatch
from .models import Admitted, SitemapEntry
from .urlset_writer import LimitedWriter

__all__ = ["TextWriter"]


class TextWriter(LimitedWriter):
    """Writes a text sitemap: one URL a line, UTF-8, same limits as XML."""

    def __init__(self, *, label: str, max_urls: int, max_bytes: int) -> None:
        super().__init__(label=label, max_items=max_urls, max_bytes=max_bytes, closing="")

    def open(self, first: Sequence[SitemapEntry] = ()) -> str:
        return ""

    def urls(self, batch: Iterable[Admitted]) -> str:
        # A batch admitted whole gives its locs as they are (its tails are never built).
        locs = batch.locs if isinstance(batch, PlainBatch) else [loc for loc, _, _ in batch]
        if not self.cap:
            return "".join([self._account(loc + "\n") for loc in locs])
        parts = []
        for loc in locs:
            line = loc + "\n"
            if self.count >= self.max_items or self.size + len(line) > self.max_bytes:
                self.full = True
                break
            parts.append(self._account(line))
        return "".join(parts)

    def close(self) -> str:
        return ""
