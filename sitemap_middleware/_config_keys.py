"""Small helpers of ``_config.py``: what of a setting shapes output, page-like names."""

from __future__ import annotations

from ._providers.i18n import Languages

__all__ = ["languages_key", "page_like"]


def languages_key(languages: Languages | None) -> tuple[object, ...] | None:
    """What of a section's Languages shapes output, stable across processes."""
    if languages is None:
        return None
    url = languages.url
    pattern = url if isinstance(url, str) or url is None else f"{url.__module__}.{url.__qualname__}"
    sites = tuple(base.prefix for base in languages.bases.values())
    return (languages.codes, pattern, languages.x_default, *((sites,) if sites else ()))


def page_like(prefix: str, name: str) -> bool:
    """Whether a file name would also match the page pattern ``<prefix><section>-<n>.xml``."""
    if not name.startswith(prefix):
        return False
    stem = name[len(prefix) : -len(".xml")]
    section, _, number = stem.rpartition("-")
    return bool(section) and number.isascii() and number.isdigit()
