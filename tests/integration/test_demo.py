"""The demo (the main job) started as a user starts it, in both flavours, crawled end to end."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from usp.tree import sitemap_tree_for_homepage

from benchmarks.common import free_port
from sitemap_middleware._demo import INDEXNOW_KEY
from tests.helpers import check_document, child_urls

ROOT = Path(__file__).resolve().parents[2]


def _sample(metrics: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` carrying ``labels``, from a /metrics text."""
    from prometheus_client.parser import text_string_to_metric_families

    return sum(
        sample.value
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )


@pytest.mark.slow
@pytest.mark.parametrize("server", ["uvicorn", "werkzeug"])
def test_demo_serves_valid_sitemaps(server: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """`python -m sitemap_middleware demo` serves pages, robots.txt and XSD-valid sitemaps."""
    data = tmp_path_factory.getbasetemp() / "demo-data"  # shared: the 120,000 rows are built once
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("demo-log") / "demo.log"
    command = [sys.executable, "-m", "sitemap_middleware", "demo", "--server", server]
    command += ["--port", str(port), "--data-dir", str(data)]
    redis_url = os.environ.get("SITEMAP_TEST_REDIS_URL")
    if redis_url:  # under .ci/run: the news pages' render cache lives in Redis
        command += ["--redis-url", redis_url]
    # Output to a file, not a pipe: a pipe nobody reads fills up and stalls the server.
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                home = httpx.get(url + "/", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "demo did not start"
                time.sleep(0.2)
        assert home.status_code == 200 and "Demo shop" in home.text
        before = httpx.get(url + "/metrics").text
        served = "sitemap_documents_served_total"
        pages_before = _sample(before, served, kind="page", status="200")
        assert httpx.get(url + "/products/7").status_code == 200
        robots = httpx.get(url + "/robots.txt").text
        assert f"Sitemap: {url}/sitemap.xml" in robots and "User-agent: GPTBot" in robots
        index = check_document(httpx.get(url + "/sitemap.xml").content)
        children = child_urls(index)
        assert [c for c in children if "products" in c] == [
            f"{url}/sitemap-products-{n}.xml" for n in (1, 2, 3)
        ]
        for child in children:  # every page validates, the 50,000-URL ones and extensions too
            check_document(httpx.get(child).content)
        tree = sitemap_tree_for_homepage(url + "/", use_known_paths=False)
        urls = {page.url for page in tree.all_pages()}
        assert f"{url}/products/120000" in urls and f"{url}/docs/guide/" in urls
        assert len([u for u in urls if "/products/" in u]) == 120_000
        text = httpx.get(url + "/sitemap-pages-1.txt").text.splitlines()
        assert f"{url}/about" in text
        assert httpx.get(url + "/sitemap.xsl").status_code == 200
        news = httpx.get(url + "/sitemap-news-1.xml")  # unversioned: ETag from the render cache
        again = httpx.get(
            url + "/sitemap-news-1.xml", headers={"If-None-Match": news.headers["etag"]}
        )
        assert again.status_code == 304
        metrics = httpx.get(url + "/metrics").text  # the documents served above are counted
        assert _sample(metrics, served, kind="page", status="200") >= pages_before + len(children)
        assert _sample(metrics, "sitemap_urls_written_total", section="products") >= 120_000
        assert _sample(metrics, served, kind="page", status="304", cache="hit") == 1
        assert httpx.get(f"{url}/{INDEXNOW_KEY}.txt").text == INDEXNOW_KEY
        assert "served sitemap-products-2.xml 200: 50000 urls" in log.read_text()
    finally:
        process.terminate()
        process.wait(20)
