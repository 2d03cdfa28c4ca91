"""examples/django_shop, the docs' Django migration guide as a project: migrated and seeded with
its own manage.py, checked by ``manage.py check`` and ``manage.py sitemap check``, then served
by gunicorn (its wsgi.py) and uvicorn (its asgi.py), each answering the URLs Django's own
sitemap views answer for the same sitemaps (kept under /django/ in its URLconf).

Django's settings are per process (this one may hold tests/djangoproject's), so the example
only ever runs in subprocesses, on a SQLite file in a temporary folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.harness.django import Url, urls
from tests.harness.documents import check_document, child_urls
from tests.harness.ports import free_port
from tests.harness.servers import Server, serving

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "django_shop"
BASE = "https://example.com"
LANGUAGES = ("en", "de", "fr")
PRODUCTS = 9  # shop/data.py
#: The sitemaps dict (shop/sitemaps.py); asgi.py adds the QuerySet section "catalog".
SECTIONS = ("products", "pages", "categories", "flatpages")


def _env(tmp: Path) -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "mysite.settings",  # not the test project's
        "DJANGO_SHOP_DB": str(tmp / "shop.sqlite3"),
        "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(ROOT)]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=EXAMPLE,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example migrated and seeded as its README says, on a fresh SQLite file."""
    env = _env(tmp_path_factory.mktemp("django_shop"))
    for args in (("migrate", "--noinput"), ("seed_shop",)):
        done = _manage(env, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    return env


def _argv(server: str, port: int) -> list[str]:
    if server == "gunicorn":
        return [
            *(sys.executable, "-m", "gunicorn", "--workers=2", "--worker-class=gthread"),
            *("--threads=4", f"--bind=127.0.0.1:{port}", "--log-level=warning"),
            f"--chdir={EXAMPLE}",
            "mysite.wsgi:application",
        ]
    return [  # the migration guide's command: Django's ASGI handler does not speak lifespan
        *(sys.executable, "-m", "uvicorn", "--lifespan=off", "--log-level=warning"),
        *("--host=127.0.0.1", f"--port={port}", f"--app-dir={EXAMPLE}"),
        "mysite.asgi:application",
    ]


@pytest.fixture(scope="module", params=["gunicorn", "uvicorn"])
def site(request: pytest.FixtureRequest, project: dict[str, str]) -> Iterator[tuple[str, Server]]:
    port = free_port()
    with serving(_argv(request.param, port), port, project) as running:
        yield request.param, running


def _get(site: Server, path: str, host: str = "example.com", **headers: str) -> httpx.Response:
    # The Site's domain as Host (hosts="sites" answers no other); X-Forwarded-Proto tells
    # Django's views the scheme is https (SECURE_PROXY_SSL_HEADER), as a TLS proxy would.
    return httpx.get(
        site.url + path,
        headers={"Host": host, "X-Forwarded-Proto": "https", **headers},
        timeout=30,
    )


def _path(url: str) -> str:
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == BASE, url
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_wsgi_and_asgi_are_the_migration_guides_steps() -> None:
    """mysite/wsgi.py and mysite/asgi.py hold the migration guide's two blocks, exactly."""
    guide = (ROOT / "docs" / "how-to" / "migrating" / "django.md").read_text()
    wsgi, asgi = re.findall(r"```python\n(.*?)```", guide, re.S)
    assert (EXAMPLE / "mysite" / "wsgi.py").read_text().endswith("\n" + wsgi)
    assert (EXAMPLE / "mysite" / "asgi.py").read_text().endswith("\n" + asgi)
    assert 'DJANGO_SETTINGS_MODULE", "mysite.settings"' in wsgi  # the example's own names
    assert "from shop.sitemaps import sitemaps" in wsgi and "from shop.models import" in asgi


def test_manage_py_check_and_sitemap_check(project: dict[str, str]) -> None:
    """No system check finding of ours; the CLI's check on the project finds no error."""
    check = _manage(project, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "sitemap_middleware" not in check.stdout + check.stderr
    assert "no issues" in check.stdout
    crawl = _manage(project, "sitemap", "check", "--max-urls", "20", "--no-progress")
    assert crawl.returncode == 0, crawl.stdout + crawl.stderr
    summary = crawl.stdout.strip().splitlines()[-1]
    assert summary.startswith("OK: ") and " 0 errors" in summary, crawl.stdout
    assert "20 URLs fetched" in summary, summary  # listed pages answer in process too


def _document(site: Server, path: str) -> tuple[bytes, bool]:
    """A sitemap document fetched gzipped, validated, and its conditional GET checked.

    Returns the body and whether it had an ETag (which must then earn a 304).
    """
    gzip = {"Accept-Encoding": "gzip"}
    response = _get(site, path, **gzip)
    assert response.status_code == 200, (path, response.status_code)
    assert response.headers["content-type"].startswith("application/xml"), path
    assert response.headers.get("content-encoding") == "gzip", path
    check_document(response.content)  # ultimate-sitemap-parser, and the XSDs when set
    etag = response.headers.get("etag")
    if etag:
        again = _get(site, path, **gzip, **{"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"", path
        assert again.headers["etag"] == etag
    return response.content, bool(etag)


def _djangos(site: Server, section: str) -> list[Url]:
    """Every URL Django's own view lists for ``section``, over all its ?p= pages."""
    index = _get(site, "/django/sitemap.xml")
    assert index.status_code == 200
    listed: list[Url] = []
    for child in re.findall(r"<loc>(.*?)</loc>", index.text):
        if urlsplit(child).path == f"/django/sitemap-{section}.xml":
            page = _get(site, _path(child))
            assert page.status_code == 200, child
            listed += urls(page.content, ours=False)
    return listed


def test_serves_what_djangos_sitemap_views_serve(site: tuple[str, Server]) -> None:
    """robots.txt, the index and every page it lists: gzip, validators, valid documents,
    and per section exactly the URLs (lastmod day, changefreq, priority, hreflang
    alternates, order) Django's own views list; every listed page answers 200."""
    server, running = site
    robots = _get(running, "/robots.txt")
    assert robots.status_code == 200
    assert f"Sitemap: {BASE}/sitemap.xml" in robots.text.splitlines()

    root, etag = _document(running, "/sitemap.xml")
    assert etag  # the index has a version: a conditional GET got its 304
    children = child_urls(check_document(root))
    assert children, "an index: the shop has several sections"
    ours: dict[str, list[Url]] = {}
    for child in children:
        name = urlsplit(child).path.rsplit("/", 1)[1]  # sitemap-<section>-<n>[~range].xml
        section = name.removeprefix("sitemap-").split("~")[0].removesuffix(".xml")
        section = section.rsplit("-", 1)[0]
        body, etag = _document(running, _path(child))
        assert etag == (section == "catalog"), child  # only the QuerySet has a version
        ours.setdefault(section, []).extend(urls(body, ours=True))

    expected = {*SECTIONS, "catalog"} if server == "uvicorn" else set(SECTIONS)
    assert set(ours) == expected  # asgi.py adds the keyset-paged QuerySet section
    for section in SECTIONS:
        assert ours[section] == _djangos(running, section), section

    locs = {section: [url[0] for url in listed] for section, listed in ours.items()}
    assert len(locs["products"]) == PRODUCTS * len(LANGUAGES)  # every product, every language
    assert len(ours["products"]) > 10  # several pages (limit = 10)
    assert all(len(url[4]) == len(LANGUAGES) for url in ours["products"])  # alternates
    assert {urlsplit(loc).path.split("/")[1] for loc in locs["products"]} == set(LANGUAGES)
    assert sorted(locs["pages"]) == sorted(
        f"{BASE}/{code}/{page}" for code in LANGUAGES for page in ("", "about/")
    )
    assert sorted(locs["flatpages"]) == [f"{BASE}/pages/imprint/", f"{BASE}/pages/shipping/"]
    assert len(locs["categories"]) == 3
    if server == "uvicorn":
        # The QuerySet lists each product once, at get_absolute_url() in LANGUAGE_CODE,
        # with an ETag (count, max key and lastmod, row checksum) and so 304s.
        assert sorted(locs["catalog"]) == sorted(u for u in locs["products"] if "/en/" in u)
        # The Sites framework decides the hosts: any other gets 400, Django the rest.
        assert _get(running, "/sitemap.xml", host="evil.example").status_code == 400

    for loc in {loc for listed in locs.values() for loc in listed}:
        page = _get(running, _path(loc))
        assert page.status_code == 200, loc
        assert page.headers["content-type"].startswith("text/html"), loc
