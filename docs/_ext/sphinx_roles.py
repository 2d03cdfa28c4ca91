"""A griffe extension for the API reference (mkdocs.yml): the docstrings cross-reference
with Sphinx roles (``:class:`~sitemap_middleware.SitemapConfig```), which Markdown would
show as they are; each becomes inline code of the name (the last part with ``~``)."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    name = match[2].strip()
    if match[1]:
        name = name.rsplit(".", 1)[-1]
    return f"``{name}``"


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring griffe reads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)
