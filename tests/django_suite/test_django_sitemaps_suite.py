"""Django's own ``sitemaps_tests`` with the sitemap requests answered by the middleware.

The tests come from the sdist of the installed Django (``pip download``, cached in the
temporary directory; never copied into this repository). ``runtests.py sitemaps_tests``
runs in a subprocess with :mod:`tests.django_suite.settings`, whose harness hands every
request to Django's ``index``/``sitemap`` views to the middleware (see
:mod:`tests.django_suite.harness`), on SQLite and, when CI starts one, PostgreSQL.

Every test that fails is listed below with the docs' reason (docs, *Differences from django.contrib.sitemaps
tests*); the job fails when a test outside the list fails or a listed one passes. Two
more passes prove what the docs say: with ``xmlns:xhtml`` added, the "xhtml
declaration" tests pass; with the settings a user wanting Django's behaviour sets
(:func:`tests.django_suite.harness.django_settings`), exactly
:data:`DJANGO_SETTINGS_PASS` pass.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTTP = "sitemaps_tests.test_http.HTTPSitemapTests."
HTTPS = "sitemaps_tests.test_https.HTTPSSitemapTests."
DETECT = "sitemaps_tests.test_https.HTTPSDetectionSitemapTests."
GENERIC = "sitemaps_tests.test_generic.GenericViewsSitemapTests."

#: Failing tests by the docs' reason (*Differences from django.contrib.sitemaps*).
EXPECTED_FAILURES: dict[str, set[str]] = {
    # Pages are files at the base URL's directory: /sitemap-simple-1.xml, not
    # /simple/sitemap-simple.xml?p=1 (and the index's <lastmod> keeps its zone, below).
    "page names": {
        HTTP + "test_simple_sitemap_index",
        HTTP + "test_sitemap_not_callable",
        HTTP + "test_cached_sitemap_index",
        HTTP + "test_simple_sitemap_custom_lastmod_index",
        HTTPS + "test_secure_sitemap_index",
        DETECT + "test_sitemap_index_with_https_request",
        GENERIC + "test_generic_sitemap_index",
    },
    # A 404 is the middleware's (or, for a name it does not serve, the app's), not
    # Django's 404 view: no response.context["exception"] to read.
    "404 bodies": {
        HTTP + "test_no_section",
        HTTP + "test_empty_page",
        HTTP + "test_page_not_int",
    },
    # xmlns:xhtml is declared only where an <xhtml:link> is written (the same XML).
    "xhtml declaration": {
        HTTP + "test_simple_sitemap",
        HTTP + "test_simple_sitemap_section",
        HTTP + "test_requestsite_sitemap",
        HTTP + "test_simple_i18n_sitemap_index",
        HTTP + "test_language_for_item_i18n_sitemap",
        HTTPS + "test_secure_sitemap_section",
        DETECT + "test_sitemap_section_with_https_request",
        GENERIC + "test_generic_sitemap",
    },
    # <lastmod> keeps its time and zone: 2013-03-13T10:00:00+00:00, not 2013-03-13 or a
    # zoneless 2013-03-13T10:00:00 (W3C Datetime requires the zone with a time).
    "lastmod": {
        HTTP + "test_sitemap_get_latest_lastmod",
        GENERIC + "test_generic_sitemap_lastmod",
    },
    # Last-Modified only where it is honest: not from a plain Sitemap's lastmods (which
    # cannot see a deleted item) unless item_dates=True asks for it (the settings pass);
    # an index's is the later of its sections' time and when its content (ETag) became
    # current, and those two tests also read the index's page names.
    "validators": {
        HTTP + "test_sitemap_last_modified",
        HTTP + "test_sitemap_last_modified_date",
        HTTP + "test_sitemap_last_modified_tz",
        HTTP + "test_sitemaps_lastmod_ascending",
        HTTP + "test_sitemaps_lastmod_descending",
        HTTP + "test_callable_sitemod_full",
        HTTP + "test_callable_sitemod_partial",
    },
    # X-Robots-Tag: noindex (HTTPSettings(x_robots_tag=...) sets Django's value).
    "x-robots-tag": {HTTP + "test_x_robots_sitemap"},
    # The index lists no empty section, and no section whose location() fails; an index
    # with nothing to list is a 404 (503 when a section failed), never an empty index.
    "empty or failing sections": {
        HTTP + "test_callable_sitemod_no_items",
        HTTP + "test_paged_sitemap",
    },
    # sitemaps={} is refused at start-up (ConfigurationError): nothing to serve.
    "no sections": {HTTP + "test_sitemap_without_entries"},
}
#: With xmlns:xhtml added to every urlset (the diagnostic pass), these differ no more...
XHTML_ONLY = EXPECTED_FAILURES["xhtml declaration"]
#: ... and this one (a custom template, without the declaration) differs instead.
XHTML_PASS_ONLY = {HTTP + "test_simple_custom_sitemap"}
#: The settings a user wanting Django's behaviour sets (the settings pass,
#: ``SITEMAP_DJANGO_SUITE_DJANGO_SETTINGS=1``): ``sitemap_config(sitemaps,
#: item_dates=True, http=HTTPSettings(trust_provider_times=True,
#: x_robots_tag="noindex, noodp, noarchive"))``. With them these pass; every other listed
#: test still differs, for its reason above.
DJANGO_SETTINGS_PASS = {
    HTTP + "test_sitemap_last_modified",
    HTTP + "test_sitemap_last_modified_date",
    HTTP + "test_sitemap_last_modified_tz",
    HTTP + "test_sitemaps_lastmod_ascending",
    HTTP + "test_sitemaps_lastmod_descending",
    HTTP + "test_x_robots_sitemap",
}
#: The diagnostic and settings passes, by the environment variable the harness reads.
PASSES = {
    "declare_xhtml": "SITEMAP_DJANGO_SUITE_DECLARE_XHTML",
    "django_settings": "SITEMAP_DJANGO_SUITE_DJANGO_SETTINGS",
}


def _sdist_tests() -> Path:
    """Django's ``tests`` folder (runtests.py, sitemaps_tests) of the installed version."""
    version = importlib.metadata.version("django")
    cache = Path(
        os.environ.get("SITEMAP_DJANGO_SDIST_CACHE")
        or Path(tempfile.gettempdir()) / "sitemap-middleware-django-sdist"
    )
    tests = cache / f"django-{version}" / "tests"
    cache.mkdir(parents=True, exist_ok=True)
    # One download and extraction at a time: parallel workers (and runs) share the cache.
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ((tests / "runtests.py").is_file() and (tests / "sitemaps_tests").is_dir()):
            _download(cache, version)
    return tests


def _download(cache: Path, version: str) -> None:
    archive = cache / f"django-{version}.tar.gz"
    if not archive.is_file():
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        done = subprocess.run(
            [*pip, "--dest", str(cache), f"django=={version}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0 or not archive.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            pytest.skip(f"cannot download Django {version}'s sdist: {' / '.join(tail)}")
    wanted = re.compile(
        rf"django-{re.escape(version)}/tests/(runtests\.py|test_sqlite\.py|urls\.py|sitemaps_tests/.*)"
    )
    with tarfile.open(archive) as sdist:
        members = [m for m in sdist.getmembers() if wanted.fullmatch(m.name)]
        sdist.extractall(cache, members=members, filter="data")


def _run(database: str, passed: str | None = None) -> tuple[int, set[str]]:
    """Tests run and the ids of those that failed or raised (``passed``: a key of
    :data:`PASSES`, the pass to run; ``None``: the middleware as configured by default)."""
    env = dict(os.environ, SITEMAP_DJANGO_SUITE_DB=database)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("DJANGO_SETTINGS_MODULE", None)
    for variable in PASSES.values():
        env.pop(variable, None)
    if passed is not None:
        env[PASSES[passed]] = "1"
    command = [sys.executable, "runtests.py", "sitemaps_tests", "--parallel", "1", "--noinput"]
    done = subprocess.run(
        [*command, "--settings", "tests.django_suite.settings"],
        cwd=_sdist_tests(),
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    ran = re.search(r"^Ran (\d+) tests?", done.stderr, re.M)
    assert ran is not None, done.stdout + done.stderr
    failed = set(re.findall(r"^(?:FAIL|ERROR): \S+ \(([\w.]+)\)", done.stderr, re.M))
    assert done.returncode == (1 if failed else 0), done.stderr[-3000:]
    return int(ran[1]), failed


def _check(database: str) -> None:
    expected = set().union(*EXPECTED_FAILURES.values())
    ran, failed = _run(database)
    assert ran >= 40
    assert sorted(failed - expected) == [], "new differences from Django"
    assert sorted(expected - failed) == [], "listed differences that pass now"
    _, failed = _run(database, "declare_xhtml")
    assert failed == (expected - XHTML_ONLY) | XHTML_PASS_ONLY
    # The settings pass: exactly the differences a setting undoes are gone.
    _, failed = _run(database, "django_settings")
    assert expected >= DJANGO_SETTINGS_PASS
    assert sorted(failed - expected) == [], "new differences under Django's settings"
    assert sorted(expected - failed) == sorted(DJANGO_SETTINGS_PASS)


def test_django_sitemaps_tests_sqlite() -> None:
    _check("sqlite")


@pytest.mark.postgres
def test_django_sitemaps_tests_postgres() -> None:
    if not os.environ.get("SITEMAP_TEST_POSTGRES_URL"):
        pytest.skip("SITEMAP_TEST_POSTGRES_URL is not set (scripts/test starts PostgreSQL)")
    _check("postgres")
