"""The floor: the fastest plain-Python serialization of the workload we could write.

Loop, escape, format, join: no validation, no streaming, no framework.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'


def render(items: Sequence[dict[str, Any]]) -> str:
    parts = [HEAD]
    append = parts.append
    for item in items:
        append(
            "<url><loc>"
            + item["loc"].replace("&", "&amp;")
            + "</loc><lastmod>"
            + item["lastmod"]
            + "</lastmod><changefreq>"
            + item["changefreq"]
            + "</changefreq><priority>"
            + str(item["priority"])
            + "</priority></url>\n"
        )
    append("</urlset>\n")
    return "".join(parts)
