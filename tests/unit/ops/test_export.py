"""`sitemap-middleware export`: static files byte-identical to what is served; incremental."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Feed,
    LlmsTxt,
    SitemapConfig,
    SitemapEntry,
    Tenants,
)
from sitemap_middleware._ops.export import MANIFEST, export_app, find_config
from sitemap_middleware.ops import ExportPathError
from tests.sites.exported_sites import Pages, asgi, shop_config, wsgi


async def served(app: Any, url: str, gzip_: bool) -> bytes:
    """The raw body the app sends for ``url`` (content-coding kept)."""
    from sitemap_middleware._ops.apps import client_for_app

    async with client_for_app(app) as client:
        headers = {"Accept-Encoding": "gzip" if gzip_ else "identity"}
        async with client.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200, url
            return b"".join([chunk async for chunk in response.aiter_raw()])


async def etag_of(app: Any, path: str) -> str:
    from sitemap_middleware._ops.apps import client_for_app

    async with client_for_app(app) as client:
        response = await client.get(
            "https://example.com" + path, headers={"Accept-Encoding": "identity"}
        )
        return str(response.headers["etag"])


@pytest.mark.parametrize("flavour", ["asgi", "wsgi"])
def test_export_is_byte_identical_to_the_served_documents(flavour: str, tmp_path: Path) -> None:
    """Every file (and its .gz) equals what the middleware serves; the manifest has ETags."""
    config = shop_config(
        ["/", "/about"],
        feeds=[Feed(name="feed.atom", sections=["products"], limit=20)],
        llms_txt=LlmsTxt(title="Shop", sections={"Products": ["products"]}, limit=20),
    )
    app = asgi(config) if flavour == "asgi" else wsgi(config)
    result = anyio.run(export_app, app, tmp_path)
    manifest = json.loads((tmp_path / MANIFEST).read_text())["documents"]
    expected = {
        "/robots.txt",
        "/shop/sitemap.xml",
        "/shop/sitemap.xml.gz",
        "/shop/sitemap_index.xml",
        "/shop/sitemap_index.xml.gz",
        "/shop/sitemap.xsl",
        "/shop/export-key-0001.txt",
        "/shop/feed.atom",  # robots.txt lists it: a static copy has it too
        "/shop/feed.atom.gz",
        "/shop/llms.txt",
    }
    for section, pages in (("pages", 1), ("products", 3)):
        for n in range(1, pages + 1):
            for ext in ("xml", "txt"):
                expected |= {
                    f"/shop/sitemap-{section}-{n}.{ext}",
                    f"/shop/sitemap-{section}-{n}.{ext}.gz",
                }
    assert set(manifest) == expected and sorted(result.written) == sorted(expected)
    for key, entry in manifest.items():
        data = (tmp_path / key.lstrip("/")).read_bytes()
        gz = key.endswith(".gz")
        again = anyio.run(served, app, entry["url"], gz)
        if gz:
            # gzip bytes follow the body's chunking, which a stored render changes (one
            # chunk instead of 64 KiB ones): the same document, the same ETag, other bytes.
            assert gzip.decompress(data) == gzip.decompress(again), key
            assert gzip.decompress(data) == (tmp_path / key[1:-3]).read_bytes()
        else:
            assert data == again, key
        assert entry["sha256"] and entry["bytes"] == len(data)
    assert manifest["/shop/sitemap-products-2.xml"]["etag"].startswith('"')
    assert manifest["/shop/export-key-0001.txt"]["bytes"] == len("export-key-0001")


def test_export_rewrites_only_what_changed(tmp_path: Path) -> None:
    """A second export writes nothing; a changed section rewrites its pages and the index."""
    pages = Pages()
    config = shop_config(pages)
    app = asgi(config)
    first = anyio.run(export_app, app, tmp_path)
    stamp = (tmp_path / "shop/sitemap-products-1.xml").stat().st_mtime_ns
    again = anyio.run(export_app, app, tmp_path)
    assert again.written == [] and sorted(again.unchanged) == sorted(first.written)
    pages.items.append(SitemapEntry("/contact"))
    pages.revision += 1
    third = anyio.run(export_app, app, tmp_path)
    # The index's ETag changed but not its bytes: only the manifest notes the new ETag.
    assert sorted(third.written) == [
        "/shop/sitemap-pages-1.txt",
        "/shop/sitemap-pages-1.txt.gz",
        "/shop/sitemap-pages-1.xml",
        "/shop/sitemap-pages-1.xml.gz",
    ]
    assert (tmp_path / "shop/sitemap-products-1.xml").stat().st_mtime_ns == stamp
    assert b"/contact" in (tmp_path / "shop/sitemap-pages-1.xml").read_bytes()
    manifest = json.loads((tmp_path / MANIFEST).read_text())["documents"]
    assert manifest["/shop/sitemap_index.xml"]["etag"] == anyio.run(
        etag_of, app, "/shop/sitemap_index.xml"
    )


def test_export_repairs_tampered_files_and_removes_stale_ones(tmp_path: Path) -> None:
    """A file edited by hand is rewritten; a document that is gone is deleted."""
    app = asgi(shop_config(["/", "/about"]))
    anyio.run(export_app, app, tmp_path)
    (tmp_path / "shop/sitemap-products-2.xml").write_bytes(b"tampered")
    manifest_path = tmp_path / MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["documents"]["/shop/sitemap-old-1.xml"] = {"sha256": "0", "etag": None}
    manifest_path.write_text(json.dumps(manifest))
    (tmp_path / "shop/sitemap-old-1.xml").write_bytes(b"old")
    result = anyio.run(export_app, app, tmp_path)
    assert result.written == ["/shop/sitemap-products-2.xml"]
    assert result.removed == ["/shop/sitemap-old-1.xml"]
    assert not (tmp_path / "shop/sitemap-old-1.xml").exists()


def test_export_refuses_an_app_without_the_middleware(tmp_path: Path) -> None:
    """A clear error names what is missing."""
    with pytest.raises(ValueError, match="no ASGISitemapMiddleware or WSGISitemapMiddleware"):
        find_config(Starlette())
    tenants = Tenants(sites={"a.example": shop_config(["/"])})
    with pytest.raises(ValueError, match="serves Tenants, not one SitemapConfig"):
        find_config(ASGISitemapMiddleware(Starlette(), config=tenants))
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is not a directory"):
        anyio.run(export_app, asgi(shop_config(["/"])), tmp_path / "file")


# -- a corrupt or foreign manifest, paths that leave DIR or hit a directory ----------------


def _tamper_missing_sha256(documents: dict[str, Any]) -> None:
    del documents["/shop/sitemap.xml"]["sha256"]


TAMPERINGS = {
    "an entry without sha256": (_tamper_missing_sha256, "'/shop/sitemap.xml' has no sha256"),
    "the key /": (lambda d: d.update({"/": {"sha256": "0"}}), "'/' names the export directory"),
    "a key leaving DIR": (
        lambda d: d.update({"/../victim.txt": {"sha256": "0"}}),
        "'/../victim.txt' leaves the export directory",
    ),
    "a key through a symlink out of DIR": (
        lambda d: d.update({"/link/victim.txt": {"sha256": "0"}}),
        "'/link/victim.txt' leaves the export directory",
    ),
    "the manifest's own name": (
        lambda d: d.update({"/" + MANIFEST: {"sha256": "0"}}),
        f"'/{MANIFEST}' is the manifest itself",
    ),
    "an entry that is not an object": (lambda d: d.update({"/x.xml": 3}), "'/x.xml' is not"),
    "a relative key": (lambda d: d.update({"x.xml": {"sha256": "0"}}), "'x.xml' does not start"),
}


def test_a_deeply_nested_manifest_is_ignored_not_raised(tmp_path: Path) -> None:
    """JSON nested past the recursion limit is a RecursionError, not a ValueError: still
    a corrupt manifest (warned, everything exported again), not a crash."""
    out = tmp_path / "out"
    app = asgi(shop_config(["/"]))
    first = anyio.run(export_app, app, out)
    (out / MANIFEST).write_text("[" * 100_000)
    again = anyio.run(export_app, app, out)
    assert sorted(again.written) == sorted(first.written) and again.removed == []
    assert len(again.warnings) == 1 and "RecursionError" in again.warnings[0]


@pytest.mark.parametrize("case", sorted(TAMPERINGS))
def test_a_corrupt_manifest_is_ignored_with_a_warning(case: str, tmp_path: Path) -> None:
    """Treated as absent: everything is exported again, nothing it lists is deleted."""
    tamper, reason = TAMPERINGS[case]
    out, victim = tmp_path / "out", tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / "link").parent.mkdir()
    (out / "link").symlink_to(tmp_path)
    app = asgi(shop_config(["/"]))
    first = anyio.run(export_app, app, out)
    manifest = json.loads((out / MANIFEST).read_text())
    tamper(manifest["documents"])
    (out / MANIFEST).write_text(json.dumps(manifest))
    again = anyio.run(export_app, app, out)
    assert victim.read_text() == "keep me" and out.is_dir()
    assert sorted(again.written) == sorted(first.written) and again.removed == []
    assert len(again.warnings) == 1 and reason in again.warnings[0], again.warnings
    assert again.warnings[0].startswith(f"{MANIFEST} ignored: ")
    assert again.warnings[0] in again.format_text() and again.as_dict()["warnings"]
    # the manifest written now is whole again: the next export finds everything unchanged
    assert anyio.run(export_app, app, out).warnings == []


@pytest.mark.parametrize(
    ("prepare", "message"),
    [
        (
            lambda out: (out / "shop" / "sitemap.xml").mkdir(parents=True),
            "document '/shop/sitemap.xml' would be written over the directory",
        ),
        (
            lambda out: (out / "shop").write_text("a file"),
            "document '/shop/sitemap.xml' needs the directory",
        ),
    ],
)
def test_a_document_path_that_cannot_be_written_fails_before_writing(
    prepare: Any, message: str, tmp_path: Path
) -> None:
    """A clear ExportPathError, raised before any file is written (nothing half-exported)."""
    out = tmp_path / "out"
    out.mkdir()
    prepare(out)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    with pytest.raises(ExportPathError, match=message):
        anyio.run(export_app, asgi(shop_config(["/"])), out)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_files_are_named_by_the_decoded_path_a_static_server_looks_up(tmp_path: Path) -> None:
    """nginx, S3 and CDNs decode a request's path before they look for the file: the
    document at /caf%C3%A9%20x/sitemap.xml is the file 'café x/sitemap.xml'."""
    config = SitemapConfig(
        base_url="https://example.com/café x/", sections={"pages": ["/café x/a"]}
    )
    result = anyio.run(export_app, asgi(config), tmp_path)
    assert "/caf%C3%A9%20x/sitemap.xml" in result.written
    assert (tmp_path / "café x" / "sitemap.xml").is_file()
    assert not (tmp_path / "caf%C3%A9%20x").exists()
    again = anyio.run(export_app, asgi(config), tmp_path)
    assert again.written == [] and again.removed == []
