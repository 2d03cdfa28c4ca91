"""`sitemap-middleware export` to S3-compatible object storage, against a real S3 API.

A moto server (``moto[server]``, the test extra) listens on a free port on 127.0.0.1; every
test gets a bucket of its own, versioned, so each upload is a new object version and "no
upload" can be told from "the same bytes uploaded again".
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import boto3
import httpx
import pytest
from lxml import etree
from moto.server import ThreadedMotoServer

from sitemap_middleware import Feed, SitemapEntry
from sitemap_middleware._ops.export import MANIFEST, ExportResult, export_app
from sitemap_middleware._ops.store_sink import ObjectStoreSink
from sitemap_middleware.providers import ProviderVersion
from tests.sites.exported_sites import Flaky, Pages, asgi, make_app, shop_config

ROOT = Path(__file__).resolve().parents[3]
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server over HTTP on a free port of 127.0.0.1, for this module's tests."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_endpoint: str, request: pytest.FixtureRequest, monkeypatch: Any) -> str:
    """A fresh versioned bucket; the standard AWS variables point obstore at the server."""
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    name = "t-" + re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:50].strip("-")
    client = s3(s3_endpoint)
    client.create_bucket(Bucket=name)
    client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def s3(endpoint: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def versions(endpoint: str, bucket: str) -> dict[str, list[str]]:
    """Every key's version ids (newest first); deleted keys have a delete marker first."""
    listed = s3(endpoint).list_object_versions(Bucket=bucket)
    found: dict[str, list[tuple[Any, str]]] = {}
    for version in listed.get("Versions", []) + listed.get("DeleteMarkers", []):
        marker = "" if "Size" in version else "deleted:"
        found.setdefault(version["Key"], []).append(
            (version["LastModified"], marker + version["VersionId"])
        )
    return {key: [v for _, v in sorted(vs, reverse=True)] for key, vs in sorted(found.items())}


def live(endpoint: str, bucket: str) -> dict[str, bytes]:
    """Every object in the bucket now, with its bytes."""
    client = s3(endpoint)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]
    return {key: client.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys}


def presigned(endpoint: str, bucket: str, key: str) -> str:
    """A URL to GET the object over plain HTTP, as a CDN in front of the bucket does."""
    return str(
        s3(endpoint).generate_presigned_url(
            "get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=60
        )
    )


def sink(endpoint: str, bucket: str, **options: Any) -> ObjectStoreSink:
    return ObjectStoreSink.from_url(f"s3://{bucket}/site", endpoint_url=endpoint, **options)


def export(app: Any, target: Any, **options: Any) -> ExportResult:
    result: ExportResult = anyio.run(partial(export_app, app, target, **options))
    return result


def test_exporting_twice_uploads_nothing_the_second_time(s3_endpoint: str, bucket: str) -> None:
    """The manifest in the bucket makes the second run upload nothing at all."""
    app = asgi(shop_config(Pages()))
    first = export(app, sink(s3_endpoint, bucket))
    assert first.failed == [] and "/shop/sitemap-products-3.xml.gz" in first.written
    stored = versions(s3_endpoint, bucket)
    assert set(stored) == {"site" + key for key in first.written} | {f"site/{MANIFEST}"}
    assert all(len(ids) == 1 for ids in stored.values())
    again = export(app, sink(s3_endpoint, bucket))
    assert again.written == [] and sorted(again.unchanged) == sorted(first.written)
    after = versions(s3_endpoint, bucket)
    del after[f"site/{MANIFEST}"], stored[f"site/{MANIFEST}"]  # rewritten: same ETags now
    assert after == stored
    assert again.as_dict()["directory"] == f"s3://{bucket}/site"


def test_changed_data_uploads_only_the_changed_objects(s3_endpoint: str, bucket: str) -> None:
    """A changed section re-uploads its pages; an object replaced by hand is repaired."""
    pages = Pages()
    app = asgi(shop_config(pages))
    export(app, sink(s3_endpoint, bucket))
    before = versions(s3_endpoint, bucket)
    pages.items.append(SitemapEntry("/contact"))
    pages.revision += 1
    s3(s3_endpoint).put_object(
        Bucket=bucket, Key="site/shop/sitemap-products-2.xml", Body=b"tampered"
    )
    result = export(app, sink(s3_endpoint, bucket))
    changed = [
        "/shop/sitemap-pages-1.txt",
        "/shop/sitemap-pages-1.txt.gz",
        "/shop/sitemap-pages-1.xml",
        "/shop/sitemap-pages-1.xml.gz",
        "/shop/sitemap-products-2.xml",
    ]
    assert sorted(result.written) == changed
    after = versions(s3_endpoint, bucket)
    grown = {key for key in after if len(after[key]) > len(before[key])}
    assert grown == {"site" + key for key in changed} | {f"site/{MANIFEST}"}
    assert b"/contact" in live(s3_endpoint, bucket)["site/shop/sitemap-pages-1.xml"]


def test_objects_have_the_documented_content_type_and_encoding(
    s3_endpoint: str, bucket: str, tmp_path: Path
) -> None:
    """Served as a CDN serves them: `.gz` objects application/gzip with no Content-Encoding,
    the others the content type the middleware serves; Cache-Control when asked; the same
    bytes (once decompressed) as the directory export."""
    config = shop_config(["/"], feeds=[Feed(name="feed.atom", sections=["products"], limit=5)])
    app = asgi(config)
    export(app, sink(s3_endpoint, bucket, cache_control="public, max-age=300"))
    export(app, tmp_path)
    expected = {
        "/robots.txt": "text/plain; charset=utf-8",
        "/shop/sitemap.xml": "application/xml; charset=utf-8",
        "/shop/sitemap-products-1.txt": "text/plain; charset=utf-8",
        "/shop/sitemap.xsl": "text/xsl; charset=utf-8",
        "/shop/feed.atom": "application/atom+xml; charset=utf-8",
        "/shop/sitemap.xml.gz": "application/gzip",
        "/shop/sitemap-products-1.txt.gz": "application/gzip",  # the content-coding, as a file
        "/shop/feed.atom.gz": "application/gzip",
        f"/{MANIFEST}": "application/json",
    }
    for key, content_type in expected.items():
        response = httpx.get(presigned(s3_endpoint, bucket, "site" + key))
        assert response.status_code == 200, key
        assert response.headers["content-type"] == content_type, key
        assert "content-encoding" not in response.headers, key
        if key != f"/{MANIFEST}":
            assert response.headers["cache-control"] == "public, max-age=300", key
        on_disk = (tmp_path / key[1:]).read_bytes()
        if key.endswith(".gz"):
            assert gzip.decompress(response.content) == gzip.decompress(on_disk), key
        elif key != f"/{MANIFEST}":
            assert response.content == on_disk, key
    # Another Cache-Control is a change: every document is uploaded again with it.
    again = export(app, sink(s3_endpoint, bucket))
    assert (
        again.unchanged == []
        and "cache-control"
        not in httpx.get(f"{s3_endpoint}/{bucket}/site/shop/sitemap.xml").headers
    )


def test_the_index_and_robots_txt_list_the_public_url(s3_endpoint: str, bucket: str) -> None:
    """Every URL they list is under --public-url; a public URL other than the app's
    base_url is refused before anything is uploaded."""
    app = asgi(shop_config(["/"]))
    public = "https://example.com/shop/"
    export(app, sink(s3_endpoint, bucket), public_url="https://EXAMPLE.com:443/shop")
    objects = live(s3_endpoint, bucket)
    index = etree.fromstring(objects["site/shop/sitemap_index.xml"])
    locs = [loc.text for loc in index.iter("{*}loc")]
    assert len(locs) == 4 and all(loc.startswith(public) for loc in locs), locs
    for loc in locs:  # each listed page is in the bucket, at its URL path
        assert "site" + urlsplit(loc).path in objects, loc
    robots = objects["site/robots.txt"].decode()
    assert f"Sitemap: {public}sitemap.xml" in robots

    before = versions(s3_endpoint, bucket)
    with pytest.raises(ValueError, match=r"base_url 'https://example.com/shop/'.*--public-url"):
        export(app, sink(s3_endpoint, bucket), public_url="https://cdn.example.com/sitemaps/")
    assert versions(s3_endpoint, bucket) == before


class Shrinking(Flaky):
    """:class:`Flaky` whose version follows its size (a shrunk section is a new version)."""

    async def version(self) -> ProviderVersion:
        await super().version()
        return ProviderVersion(token=f"v{self.size}")


@pytest.mark.parametrize("broken", ["broken_planning", "broken_pages"])
def test_a_failing_provider_leaves_the_bucket_unchanged(
    broken: str, s3_endpoint: str, bucket: str
) -> None:
    """No object is deleted, replaced or added while a section fails; the run fails."""
    flaky = Shrinking(25)
    app = make_app(flaky)
    first = export(app, sink(s3_endpoint, bucket))
    assert first.failed == [] and "/sitemap-items-3.xml" in first.written
    before = versions(s3_endpoint, bucket)
    del before[f"site/{MANIFEST}"]
    setattr(flaky, broken, True)
    flaky.size = 12  # what a half-read database would say: pages 2 and 3 "gone"
    result = export(app, sink(s3_endpoint, bucket))
    assert result.failed and result.removed == [], result.format_text()
    after = versions(s3_endpoint, bucket)
    manifest = json.loads(live(s3_endpoint, bucket)[f"site/{MANIFEST}"])["documents"]
    del after[f"site/{MANIFEST}"]
    assert after == before  # not one upload, not one delete marker
    assert "/sitemap-items-3.xml" in manifest

    setattr(flaky, broken, False)
    healed = export(app, sink(s3_endpoint, bucket))
    assert healed.failed == [] and sorted(healed.removed) == [
        "/sitemap-items-3.xml",
        "/sitemap-items-3.xml.gz",
    ]


class Recording(ObjectStoreSink):
    """The object-store sink, noting the order of its uploads and deletions."""

    calls: list[str]

    async def write(self, key: str, data: bytes, entry: dict[str, Any]) -> dict[str, Any]:
        self.calls.append("put " + key)
        return await super().write(key, data, entry)

    async def remove(self, key: str) -> None:
        self.calls.append("delete " + key)
        await super().remove(key)

    async def write_manifest(self, data: bytes) -> None:
        self.calls.append("put manifest")
        await super().write_manifest(data)


def test_pages_go_up_before_the_index_and_stale_objects_go_after_it(
    s3_endpoint: str, bucket: str
) -> None:
    """Readers never see an index listing a missing page, nor a page gone while listed."""
    flaky = Shrinking(25)
    app = make_app(flaky)
    export(app, sink(s3_endpoint, bucket))
    flaky.size = 15  # page 3 is gone and page 2 changed: so does the index
    recording = Recording.from_url(f"s3://{bucket}/site", endpoint_url=s3_endpoint)
    recording.calls = []
    result = export(app, recording)
    assert result.failed == [] and sorted(result.removed) == [
        "/sitemap-items-3.xml",
        "/sitemap-items-3.xml.gz",
    ]
    calls = recording.calls
    index = calls.index("put /sitemap.xml")
    assert calls.index("put /sitemap-items-2.xml") < index
    assert calls.index("put /sitemap-items-2.xml.gz") < index
    if "put /robots.txt" in calls:  # unchanged here: it names no page
        assert index < calls.index("put /robots.txt")
    deletes = [i for i, call in enumerate(calls) if call.startswith("delete ")]
    assert len(deletes) == 2 and min(deletes) > max(
        i for i, call in enumerate(calls) if call.startswith("put /")
    )
    assert calls[-1] == "put manifest"
    objects = live(s3_endpoint, bucket)
    assert "site/sitemap-items-3.xml" not in objects and "site/sitemap-items-2.xml" in objects


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "export", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **CREDENTIALS, **env},
        timeout=120,
        cwd=ROOT,
    )


def test_export_command_to_s3(s3_endpoint: str, bucket: str) -> None:
    """`export --app M:APP s3://bucket/prefix --public-url URL`, the endpoint from
    AWS_ENDPOINT_URL or --endpoint-url; incremental; a wrong public URL exits 2."""
    target = f"s3://{bucket}/static"
    app = "tests.sites.checked_sites:selfcheck_wsgi"
    public = ["--public-url", "https://shop.example/"]
    done = cli("--app", app, target, *public, "--json", AWS_ENDPOINT_URL=s3_endpoint)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert "/sitemap.xml" in data["written"] and data["directory"] == target
    objects = live(s3_endpoint, bucket)
    assert {"static/sitemap.xml", "static/sitemap.xml.gz", "static/robots.txt"} <= set(objects)
    again = cli("--app", app, target, *public, "--endpoint-url", s3_endpoint)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"exported to {target}: 0 written, "), again.stdout
    wrong = cli(
        "--app", app, target, "--public-url", "https://cdn.example/", "--endpoint-url", s3_endpoint
    )
    assert wrong.returncode == 2 and "--public-url" in wrong.stderr, wrong.stderr
    missing = cli("--app", app, "s3://", "--endpoint-url", s3_endpoint)
    assert missing.returncode == 2 and "s3://" in missing.stderr, missing.stderr
    nowhere = cli("--app", app, "s3://no-such-bucket/x", "--endpoint-url", s3_endpoint)
    assert nowhere.returncode == 1 and "Traceback" not in nowhere.stderr, nowhere.stderr
    assert "failed: s3://no-such-bucket/x: put " in nowhere.stderr, nowhere.stderr


def test_no_store_request_answers_from_a_thread_python_did_not_start(
    s3_endpoint: str, bucket: str, monkeypatch: Any
) -> None:
    """Every list, get, put and delete answers on a thread Python started.

    obstore's async calls hand their result to the event loop from a thread of its Rust
    runtime. When that thread was still inside the loop's wake-up as the export returned,
    the interpreter's exit stopped it there and the process died of SIGABRT after
    printing a good report (about one `export` in 70 on a loaded machine).
    """
    python_threads = threading.enumerate
    callers: list[str] = []
    call_soon_threadsafe = asyncio.BaseEventLoop.call_soon_threadsafe

    def spy(loop: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() not in {thread.ident for thread in python_threads()}:
            callers.append(repr(args[0]))
        return call_soon_threadsafe(loop, *args, **kwargs)

    monkeypatch.setattr(asyncio.BaseEventLoop, "call_soon_threadsafe", spy)
    flaky = Shrinking(25)
    app = make_app(flaky)
    export(app, sink(s3_endpoint, bucket))
    flaky.size = 15  # the second run reads the manifest, lists, uploads and deletes
    again = export(app, sink(s3_endpoint, bucket))
    assert again.written and again.removed and again.unchanged, again.format_text()
    assert callers == []


@pytest.mark.slow
def test_the_export_command_exits_cleanly_every_time(s3_endpoint: str, bucket: str) -> None:
    """Twenty-four `export ... s3://` processes, three at a time: each exits 0 (the race
    above ended about one in seventy with SIGABRT, so this caught it only now and then)."""
    app = "tests.sites.checked_sites:selfcheck_wsgi"

    def run(n: int) -> subprocess.CompletedProcess[str]:
        target = f"s3://{bucket}/run-{n % 4}"
        return cli("--app", app, target, "--json", AWS_ENDPOINT_URL=s3_endpoint)

    with ThreadPoolExecutor(3) as pool:
        done = list(pool.map(run, range(24)))
    assert [p.returncode for p in done] == [0] * 24, [p.stderr for p in done if p.returncode]


def test_readme_object_storage_example_runs(s3_endpoint: str, bucket: str) -> None:
    """The docs' `export ... s3://` example, with a test app, bucket and endpoint in
    place of the reader's, prints what the docs show (but for the count)."""
    page = (ROOT / "docs" / "how-to" / "export.md").read_text()
    section = page.split("### Export to object storage", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```console\n(.*?)\n```", section, re.S)
    steps = re.split(r"^\$ ", block.replace("\\\n", ""), flags=re.M)[1:]
    assert steps[0].startswith("export AWS_ACCESS_KEY_ID=")
    command, _, expected = steps[1].partition("\n")
    argv = shlex.split(command)
    assert argv[:2] == ["sitemap-middleware", "export"]
    swap = {
        "myproject.asgi:app": "tests.sites.checked_sites:selfcheck_wsgi",
        "s3://my-bucket/site": f"s3://{bucket}/site",
        "https://example.com/": "https://shop.example/",
    }
    done = cli(*[swap.get(arg, arg) for arg in argv[2:]], AWS_ENDPOINT_URL=s3_endpoint)
    assert done.returncode == 0, done.stderr
    pattern = re.escape(expected.replace("my-bucket", bucket)).replace("14", r"\d+")
    assert re.fullmatch(pattern, done.stdout.strip()), (done.stdout, expected)
    response = httpx.get(presigned(s3_endpoint, bucket, "site/sitemap.xml"))
    assert response.headers["cache-control"] == "public, max-age=300"


@pytest.mark.parametrize("prefix", ["site/", "site//", "/site/"])
def test_a_prefix_with_extra_slashes_names_the_same_prefix(
    s3_endpoint: str, bucket: str, prefix: str
) -> None:
    """Trailing (or doubled leading) slashes name the prefix, as `s3://bucket/site` does:
    object_store refuses an empty path segment, which surfaced as its GenericError."""
    app = asgi(shop_config(Pages()))
    target = ObjectStoreSink.from_url(f"s3://{bucket}/{prefix}", endpoint_url=s3_endpoint)
    result = export(app, target)
    assert result.failed == [] and result.as_dict()["directory"] == f"s3://{bucket}/site"
    assert f"site/{MANIFEST}" in live(s3_endpoint, bucket)
    assert export(app, sink(s3_endpoint, bucket)).written == []
    with pytest.raises(ValueError, match="not an object store URL"):
        ObjectStoreSink.from_url(f"s3://{bucket}/a//b", endpoint_url=s3_endpoint)


def test_objects_are_named_by_the_decoded_path(s3_endpoint: str, bucket: str) -> None:
    """S3 (and a CDN before it) looks up the decoded path: 'café x/sitemap.xml'."""
    from sitemap_middleware import SitemapConfig

    config = SitemapConfig(
        base_url="https://example.com/café x/", sections={"pages": ["/café x/a"]}
    )
    export(asgi(config), sink(s3_endpoint, bucket))
    assert "site/café x/sitemap.xml" in live(s3_endpoint, bucket)
    assert not any("%" in key for key in live(s3_endpoint, bucket))
    again = export(asgi(config), sink(s3_endpoint, bucket))
    assert again.written == [] and again.removed == []
