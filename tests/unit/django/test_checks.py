"""The project's own configuration (``SITEMAP_MIDDLEWARE``) and ``manage.py check``
(issue 26, item 3)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _django(django_project: dict[str, str]) -> None:
    """Django set up with the test project (its URLconf passes ``sitemaps`` to Django's
    views under /django/)."""


def _check(**setting: Any) -> list[Any]:
    from django.test import override_settings

    from sitemap_middleware._django.checks import check_configuration

    with override_settings(**setting):
        return check_configuration()


def test_nothing_is_checked_without_the_setting() -> None:
    assert _check(SITEMAP_MIDDLEWARE=None) == []
    assert _check() == []  # the test project's own setting: a valid configuration


def test_the_sitemaps_come_from_the_urlconf_and_the_rest_from_the_setting() -> None:
    from django.test import override_settings

    from sitemap_middleware._django.project import find_sitemaps, settings_config
    from tests.djangoproject.shop.sitemaps import sitemaps

    assert find_sitemaps() == sitemaps
    with override_settings(SITEMAP_MIDDLEWARE={"base_url": "https://example.com"}):
        config = settings_config()
    assert [s.name for s in config.resolved_sections] == list(sitemaps)
    assert config.base.origin == "https://example.com"
    assert _check(SITEMAP_MIDDLEWARE={"base_url": "https://example.com"}) == []


def test_a_base_url_django_does_not_answer_for_is_a_warning() -> None:
    found = _check(SITEMAP_MIDDLEWARE={"base_url": "https://shop.example.org:8443"})
    assert [message.id for message in found] == ["sitemap_middleware.W001"]
    assert "'shop.example.org'" in found[0].msg and "ALLOWED_HOSTS" in found[0].hint


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        # A Sitemap whose protocol disagrees with base_url's scheme.
        ({"base_url": "http://example.com"}, "protocol is 'https'"),
        ({"sitemaps": "tests.djangoproject.shop.nowhere.sitemaps"}, "cannot be imported"),
        ({"base_url": "https://example.com", "max_urls_per_page": 0}, "max_urls_per_page"),
        ("https://example.com", "must be a dict"),
    ],
    ids=["protocol", "import", "value", "not-a-dict"],
)
def test_what_start_up_would_refuse_is_an_error(setting: Any, says: str) -> None:
    found = _check(SITEMAP_MIDDLEWARE=setting)
    assert [message.id for message in found] == ["sitemap_middleware.E001"], found
    assert says in found[0].msg


def test_a_nullable_key_is_an_error() -> None:
    """Sections named by dotted path are built when checked: a QuerySet keyed by a
    nullable field is refused there, as at start-up."""
    found = _check(
        SITEMAP_MIDDLEWARE={
            "base_url": "https://example.com",
            "sections": "tests.djangoproject.shop.bad_sections.sections",
        }
    )
    assert [message.id for message in found] == ["sitemap_middleware.E001"]
    assert "nullable" in found[0].msg


def test_manage_py_sitemap_check_and_export_ask_the_project(tmp_path: Any) -> None:
    """``manage.py sitemap check|export`` are the CLI's commands on the project's own
    WSGI app, in process (its URLconf, its database, its middleware)."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(SystemExit) as done:
        call_command("sitemap", "check", "--no-progress", "--max-urls", "5")
    assert done.value.code == 0
    with pytest.raises(SystemExit) as done:
        call_command("sitemap", "export", str(tmp_path / "out"))
    assert done.value.code == 0
    assert (tmp_path / "out" / "sitemap_index.xml").is_file()
    with pytest.raises(CommandError, match="use one of check, export, notify, explain"):
        call_command("sitemap", "explode")


def test_manage_py_sitemap_explain_asks_the_project(capsys: pytest.CaptureFixture[str]) -> None:
    from django.core.management import call_command

    with pytest.raises(SystemExit) as done:
        call_command("sitemap", "explain", "/about/", "/nowhere/")
    assert done.value.code == 1  # one of them is not listed
    text = capsys.readouterr().out
    assert "/nowhere/\n  not listed: no section yields it" in text


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ({"base_url": "https://example.com", "bogus": 1}, "unknown keys 'bogus'"),
        ({"base_url": "https://example.com", 1: 2}, "unknown keys 1"),
        ({"base_url": "https://example.com", "sections": [1, 2]}, "'sections'] must be a dict"),
        ({"base_url": "https://example.com", "sections": "os.path.join"}, "must be a dict"),
        ({"sitemaps": {"a": 1}}, "TypeError: DjangoSitemapProvider needs"),
        ({"sitemaps": "tests.djangoproject.raises_on_import.sitemaps"}, "RuntimeError: this"),
    ],
    ids=["unknown-key", "non-str-key", "sections-list", "sections-path", "junk", "import-raises"],
)
def test_a_setting_of_the_wrong_shape_is_an_error_not_a_crash(setting: Any, says: str) -> None:
    """Hostile review: these raised TypeError/AttributeError/RuntimeError out of the
    check, so ``manage.py check`` (and migrate, runserver) died with a traceback."""
    found = _check(SITEMAP_MIDDLEWARE=setting)
    assert [message.id for message in found] == ["sitemap_middleware.E001"], found
    assert says in found[0].msg


def test_manage_py_sitemap_without_a_command_names_the_commands() -> None:
    """Hostile review: it said "invalid choice: '<this Django project>:app'"."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="name a command: one of check, export"):
        call_command("sitemap")


def test_a_missing_setting_names_the_django_setting(tmp_path: Any) -> None:
    """Newcomer pass: `manage.py sitemap notify` without a key said only
    "SitemapConfig.indexnow_key is not set"; in Django it is a key of SITEMAP_MIDDLEWARE."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    snapshot = str(tmp_path / "snapshot.json")
    with pytest.raises(CommandError, match=r"SITEMAP_MIDDLEWARE\['indexnow_key'\]"):
        call_command("sitemap", "notify", "--snapshot", snapshot)


def test_no_sitemap_anywhere_says_where_to_name_them() -> None:
    """A URLconf passing no sitemaps to Django's views, and a setting naming none: the
    error says which keys to add, not only that the sections are empty."""
    found = _check(
        ROOT_URLCONF="tests.djangoproject.routes_urls",
        SITEMAP_MIDDLEWARE={"base_url": "https://example.com"},
    )
    assert [message.id for message in found] == ["sitemap_middleware.E001"], found
    assert "django.contrib.sitemaps" in found[0].msg
    assert '"sitemaps"' in found[0].msg and '"sections"' in found[0].msg
