"""``manage.py sitemap check|export|notify|explain``: the CLI's commands on the project itself.

The app they ask in-process is the project's ``WSGI_APPLICATION`` when the sitemap
middleware wraps it (as the docs' migration does), else Django's WSGI app wrapped
with the configuration ``SITEMAP_MIDDLEWARE`` describes (see ``project.py``).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["project_app", "run"]

#: The CLI's commands a Django project takes here.
COMMANDS = ("check", "export", "notify", "explain")
#: What ``--app`` says until the project's app is built (never imported).
_PROJECT = "<this Django project>:app"


def project_app() -> Any:
    """The project's WSGI app with the sitemap middleware around it."""
    from django.conf import settings
    from django.core.wsgi import get_wsgi_application
    from django.utils.module_loading import import_string

    from .. import WSGISitemapMiddleware
    from .._ops.export import find_config
    from .project import settings_config

    path = getattr(settings, "WSGI_APPLICATION", None)
    app = import_string(path) if path else get_wsgi_application()
    try:
        find_config(app)
    except ValueError:  # configured in settings, not in wsgi.py
        app = WSGISitemapMiddleware(app, config=settings_config())
    return app


def run(argv: list[str]) -> int:
    """Run ``sitemap-middleware <command> <argv…>`` against the project; the exit status.

    ``--app`` defaults to the project (:func:`project_app`); errors the CLI reports as
    usage errors raise ``CommandError`` (exit 2 under ``manage.py``).
    """
    from django.core.management.base import CommandError

    from ..__main__ import build_parser

    if not argv:
        raise CommandError(f"name a command: one of {', '.join(COMMANDS)}")
    if argv[0] not in COMMANDS and not argv[0].startswith("-"):
        raise CommandError(f"unknown command {argv[0]!r}: use one of {', '.join(COMMANDS)}")
    parser = build_parser()
    parser.prog = "manage.py sitemap"
    parser.exit_on_error = False
    given = any(arg == "--app" or arg.startswith("--app=") for arg in argv)
    try:  # export requires --app: the project stands in until it is built below
        namespace = parser.parse_args(argv if given else [*argv, "--app", _PROJECT])
    except argparse.ArgumentError as exc:
        raise CommandError(str(exc)) from None
    if namespace.command not in COMMANDS:
        raise CommandError(f"use one of {', '.join(COMMANDS)}")
    if namespace.app == _PROJECT:
        namespace.app = project_app()
        namespace.interface = "wsgi"
    try:
        status: int = namespace.handler(namespace)
    except ValueError as exc:
        message = str(exc)
        if message.startswith("SitemapConfig."):  # in Django, a key of the setting
            name = message.split()[0].removeprefix("SitemapConfig.")
            message += f" (set SITEMAP_MIDDLEWARE[{name!r}] in settings.py)"
        raise CommandError(message) from None
    return status
