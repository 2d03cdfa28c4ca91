"""Which URLs changed: snapshots of every section's entries and their difference.

A :class:`Snapshot` maps each listed URL to a digest of everything written for it
(lastmod, changefreq, priority, extensions). Sections whose provider reports an
unchanged version are carried over without iterating them again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

from .._config import SitemapConfig
from .._engine.planning import section_version
from .._engine.stream import EntryStream
from .._sansio.etag import version_parts

__all__ = ["SectionSnapshot", "Snapshot", "changed_urls", "take_snapshot"]


@dataclass(frozen=True, slots=True)
class SectionSnapshot:
    """One section: its provider's version (if it reports one) and URL digests."""

    version: tuple[str, str] | None
    digests: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every section's URLs and digests at one moment; JSON-serialisable for cron jobs."""

    sections: Mapping[str, SectionSnapshot]

    def urls(self) -> dict[str, str]:
        """URL to digest, over all sections."""
        merged: dict[str, str] = {}
        for section in self.sections.values():
            merged.update(section.digests)
        return merged

    def to_json(self) -> str:
        return json.dumps(
            {
                name: {"version": list(s.version) if s.version else None, "urls": dict(s.digests)}
                for name, s in self.sections.items()
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Snapshot:
        """Read :meth:`to_json` output; ``ValueError`` names what is malformed."""
        try:
            data = json.loads(text)
            sections = {
                str(name): SectionSnapshot(
                    tuple(value["version"]) if value["version"] else None,
                    {str(url): str(digest) for url, digest in value["urls"].items()},
                )
                for name, value in data.items()
            }
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ValueError(f"not a sitemap snapshot: {type(exc).__name__}: {exc}") from None
        return cls(sections)


async def take_snapshot(config: SitemapConfig, previous: Snapshot | None = None) -> Snapshot:
    """Digest every entry the sitemap lists now (under ``config.base_url``).

    A section whose provider reports the same version as in ``previous`` is copied from
    it without a pass over its entries. Provider failures raise ``ProviderError``.
    """
    sections: dict[str, SectionSnapshot] = {}
    for section in config.resolved_sections:
        version = version_parts(await section_version(config, section))
        before = previous.sections.get(section.name) if previous else None
        if version is not None and before is not None and before.version == version:
            sections[section.name] = before
            continue
        digests: dict[str, str] = {}
        stream = EntryStream(
            section.name,
            section.provider,
            config.base,
            timeout=config.provider_timeout,
            strict=config.strict,
            exclusion=section.exclusion,
        )
        try:
            while batch := await stream.next_batch():
                for loc, tail, extended in batch:
                    written = tail + (repr(extended) if extended is not None else "")
                    digests[loc] = hashlib.blake2b(written.encode(), digest_size=12).hexdigest()
        finally:
            await stream.aclose()
        sections[section.name] = SectionSnapshot(version, digests)
    return Snapshot(sections)


def changed_urls(before: Snapshot, after: Snapshot) -> list[str]:
    """URLs added, changed or removed between two snapshots (IndexNow wants all three).

    New and changed URLs come first in listing order, then removed ones.
    """
    old, new = before.urls(), after.urls()
    changed = [url for url, digest in new.items() if old.get(url) != digest]
    return changed + [url for url in old if url not in new]
