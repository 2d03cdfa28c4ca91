"""`sitemap-middleware generate`: files for a URL list or a legacy sitemap, byte-identical
to what `export` writes for the same entries, XSD-valid, without an app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
from starlette.applications import Starlette

from sitemap_middleware import ASGISitemapMiddleware, SitemapConfig, SitemapEntry
from sitemap_middleware._ops.export import MANIFEST, export_app
from sitemap_middleware._ops.generate import generate
from sitemap_middleware.ops import parse_sitemap
from sitemap_middleware.providers import StaticProvider
from tests.harness.documents import check_document, require_schemas

ROOT = Path(__file__).resolve().parents[3]
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


def test_generate_from_a_legacy_index_of_local_files(tmp_path: Path) -> None:
    """An index's children are read from files of the same name beside it; lastmods and
    extensions survive, duplicates are listed once, --base-url keeps what is under it."""
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    urlset = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
    (legacy / "a.xml").write_text(
        f"{urlset}<url><loc>https://example.com/shop/a</loc><lastmod>2024-05-01</lastmod>"
        "<image:image><image:loc>https://cdn.example/a.png</image:loc></image:image></url>"
        "<url><loc>https://example.com/blog/x</loc></url></urlset>"
    )
    (legacy / "b.xml").write_text(
        f"{urlset}<url><loc>https://example.com/shop/b</loc></url>"
        "<url><loc>https://example.com/shop/a</loc></url></urlset>"
    )
    (legacy / "index.xml").write_text(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<sitemap><loc>https://old.example/a.xml</loc></sitemap>"
        "<sitemap><loc>https://old.example/b.xml</loc></sitemap></sitemapindex>"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "sitemap_middleware", "generate", str(legacy / "index.xml")]
    command += ["--out", str(tmp_path / "out"), "--base-url", "https://example.com/shop/"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "exported to" in done.stdout
    parsed = parse_sitemap(tmp_path / "out" / "shop" / "sitemap.xml")
    assert parsed.kind == "urlset"
    assert [(e.loc, str(e.lastmod), len(e.images)) for e in parsed.entries] == [
        ("https://example.com/shop/a", "2024-05-01", 1),
        ("https://example.com/shop/b", "None", 0),
    ]
    bad = subprocess.run(
        [*command[:4], str(tmp_path / "missing.txt"), "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert bad.returncode == 2
    assert f"cannot read {tmp_path / 'missing.txt'}: No such file or directory" in bad.stderr


def test_generate_refuses_when_no_url_is_under_the_base_url(tmp_path: Path) -> None:
    """Every URL outside --base-url: exit 2 and nothing written (before: exit 0 and a
    robots.txt naming no sitemap)."""
    (tmp_path / "urls.txt").write_text("https://example.com/a\nhttps://example.com/b\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "sitemap_middleware", "generate", str(tmp_path / "urls.txt")]
    command += ["--out", str(tmp_path / "out"), "--base-url", "https://other.example/"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "none of the sources' 2 URLs is under https://other.example/" in done.stderr
    assert not (tmp_path / "out").exists()
