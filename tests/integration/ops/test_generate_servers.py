"""`sitemap-middleware generate` reading a live site: an index and its pages over HTTP,
from a real server (uvicorn) on 127.0.0.1 (the rest: tests/unit/ops/test_generate.py)."""

from __future__ import annotations

from pathlib import Path

import anyio
from starlette.applications import Starlette

from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig, SitemapEntry
from sitemap_middleware._ops.export import export_app
from sitemap_middleware._ops.generate import generate
from sitemap_middleware.ops import parse_sitemap
from sitemap_middleware.providers import StaticProvider
from tests.harness.ports import bound_socket
from tests.harness.servers import serve_uvicorn
from tests.unit.ops.test_generate import files


def test_generate_from_a_live_index_reproduces_the_sites_export(tmp_path: Path) -> None:
    """An index served over HTTP, its pages fetched (gzip asked for): the files generated
    from it are the files `export` writes for the serving app."""
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    entries = [
        SitemapEntry(f"{base}p/{n}", lastmod=f"2024-05-{1 + n % 28:02d}", priority=0.5)
        for n in range(25)
    ]
    config = SitemapConfig(
        base_url=base, sections={"pages": StaticProvider(entries)}, max_urls_per_page=10
    )
    app = ASGISitemapMiddleware(Starlette(), config=config)
    with serve_uvicorn(app, sock) as url:
        result = anyio.run(
            lambda: generate(
                [url + "/sitemap.xml"], tmp_path / "out", base_url=base, max_urls_per_page=10
            )
        )
    assert result.warnings == [] and result.failed == []
    anyio.run(export_app, app, tmp_path / "export")
    assert files(tmp_path / "out") == files(tmp_path / "export")


def test_generate_reads_a_local_indexs_children_over_http_when_not_beside_it(
    tmp_path: Path,
) -> None:
    """A downloaded index whose pages were not downloaded: its children are fetched from
    the site (before, 'reading URLs needs httpx' although httpx is there)."""
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    entries = [SitemapEntry(f"{base}p/{n}") for n in range(3)]
    config = SitemapConfig(base_url=base, sections={"pages": StaticProvider(entries)})
    app = ASGISitemapMiddleware(Starlette(), config=config)
    index = tmp_path / "index.xml"
    index.write_text(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{base}sitemap-pages-1.xml</loc></sitemap></sitemapindex>"
    )
    with serve_uvicorn(app, sock):
        result = anyio.run(lambda: generate([str(index)], tmp_path / "out"))
    assert result.failed == []
    assert [e.loc for e in parse_sitemap(tmp_path / "out" / "sitemap.xml").entries] == [
        e.loc for e in entries
    ]
