"""Messages a newcomer meets first: a shadowed ``--app`` module, a store's refusal, and
``manage.py sitemap``'s help."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitemap_middleware._ops.apps import load_app
from sitemap_middleware._ops.store_sink import store_error

# What obstore raised for a PUT into a bucket that does not exist (moto; S3 says the same).
NO_SUCH_BUCKET = (
    "Object at location site/sitemap.xml not found: Error performing PUT "
    "http://127.0.0.1:5055/my-bucket/site/sitemap.xml in 3.6ms - Server returned non-2xx "
    'status code: 404 Not Found: <?xml version="1.0" encoding="utf-8"?>\n'
    "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message>"
    "<BucketName>my-bucket</BucketName></Error>\n\nDebug source:\nNotFound {\n    path: ..."
)


def test_a_store_error_names_the_services_code_and_message() -> None:
    """It said only `... 404 Not Found: <?xml version="1.0" encoding="utf-8"?>`: the cause
    was on the next line, which was cut."""
    said = store_error(FileNotFoundError(NO_SUCH_BUCKET))
    assert said.endswith("404 Not Found: NoSuchBucket: The specified bucket does not exist")
    assert "\n" not in said and "<" not in said and "Debug source" not in said


def test_a_store_error_without_a_body_is_its_first_line() -> None:
    said = store_error(OSError("Generic S3 error: builder error\n\nDebug source:\nGeneric {"))
    assert said == "Generic S3 error: builder error"


def test_an_app_module_shadowed_by_pythons_own_says_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--app site:app` with a site.py in the current directory imported Python's own
    `site` module and said only "'site' has no attribute 'app'"."""
    (tmp_path / "site.py").write_text("app = None\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"imported from .*site\.py: is your file shadowed"):
        load_app("site:app")


def test_a_local_module_without_the_app_names_no_other_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "newcomer_local_app.py").write_text("application = None\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError) as raised:
        load_app("newcomer_local_app:app")
    assert str(raised.value).endswith("'newcomer_local_app' has no attribute 'app'")


def test_manage_py_sitemaps_help_names_every_command() -> None:
    """Its help said `check|export|notify`, leaving out explain."""
    pytest.importorskip("django")
    from sitemap_middleware._django.command import COMMANDS
    from sitemap_middleware.django.management.commands.sitemap import Command

    parser = Command().create_parser("manage.py", "sitemap")
    text = parser.format_help()
    assert "|".join(COMMANDS) in text
    for command in COMMANDS:
        assert command in Command.help
