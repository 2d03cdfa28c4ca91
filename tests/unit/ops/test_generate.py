"""`sitemap-middleware generate`: files for a URL list or a legacy sitemap, byte-identical
to what `export` writes for the same entries, XSD-valid, without an app."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from starlette.applications import Starlette

from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig, SitemapEntry
from sitemap_middleware._ops.export import MANIFEST, export_app
from sitemap_middleware._ops.generate import generate
from sitemap_middleware.ops import parse_sitemap
from sitemap_middleware.providers import StaticProvider
from tests.harness.documents import check_document, require_schemas

BASE = "https://example.com/"


def files(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    }


def exported(entries: list[SitemapEntry], directory: Path, **settings: object) -> dict[str, bytes]:
    config = SitemapConfig(
        base_url=BASE,
        sections={"pages": StaticProvider(entries)},
        **settings,  # type: ignore[arg-type]
    )
    app = ASGISitemapMiddleware(Starlette(), config=config)
    anyio.run(export_app, app, directory)
    return files(directory)


def test_generate_from_urls_txt_is_what_export_writes(tmp_path: Path) -> None:
    locs = [f"{BASE}p/{n}" for n in range(25)]
    (tmp_path / "urls.txt").write_text("\n".join(locs) + "\n\nnot a url\n")

    result = anyio.run(
        lambda: generate([str(tmp_path / "urls.txt")], tmp_path / "out", max_urls_per_page=10)
    )
    assert result.failed == [] and "sitemap-pages-3.xml" in " ".join(result.written)
    assert result.warnings == [
        f"{tmp_path / 'urls.txt'}: loc-invalid: not an absolute http(s) URL (line 27) "
        "<not a url> left out"
    ]
    generated = files(tmp_path / "out")
    entries = [SitemapEntry(loc) for loc in locs]
    assert generated == exported(entries, tmp_path / "export", max_urls_per_page=10)
    assert json.loads((tmp_path / "out" / MANIFEST).read_text())
    index = parse_sitemap(generated["sitemap.xml"])
    assert [s.loc for s in index.sitemaps] == [f"{BASE}sitemap-pages-{n}.xml" for n in (1, 2, 3)]
    pages = [parse_sitemap(generated[f"sitemap-pages-{n}.xml"]) for n in (1, 2, 3)]
    assert [e.loc for page in pages for e in page.entries] == locs


def test_generated_files_are_xsd_valid(tmp_path: Path) -> None:
    require_schemas()
    (tmp_path / "urls.txt").write_text("".join(f"{BASE}p/{n}\n" for n in range(25)))
    anyio.run(lambda: generate([str(tmp_path / "urls.txt")], tmp_path, max_urls_per_page=10))
    for name in ("sitemap.xml", "sitemap-pages-1.xml", "sitemap-pages-3.xml"):
        check_document((tmp_path / name).read_bytes())
