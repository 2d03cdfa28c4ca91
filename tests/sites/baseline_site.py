"""An app for ``check --baseline`` tests: its sections come from $BASELINE_SITE (JSON).

``tests.sites.baseline_site:app`` for ``sitemap-middleware check --app``; each section is a
list of paths or entry mappings, as providers may yield them.
"""

from __future__ import annotations

import json
import os
from typing import Any

from starlette.applications import Starlette

from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig

DEFAULT = {"pages": ["/", "/about"], "blog": [f"/blog/{n}" for n in range(20)]}


def make_app(sections: dict[str, Any]) -> ASGISitemapMiddleware:
    config = SitemapConfig(base_url="https://shop.example", sections=sections, max_urls_per_page=10)
    return ASGISitemapMiddleware(Starlette(), config=config)


app = make_app(json.loads(os.environ.get("BASELINE_SITE", "null")) or DEFAULT)
