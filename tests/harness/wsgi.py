"""Calling a WSGI app as a server would, in process, under werkzeug's lint and wsgiref's
validator."""

from __future__ import annotations

from typing import Any
from wsgiref.validate import validator

from werkzeug.middleware.lint import LintMiddleware
from werkzeug.test import Client


class BufferedClient(Client):
    """A test client that reads and closes every app iterator (validator insists)."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("buffered", True)
        return super().open(*args, **kwargs)


def linted_client(app: Any) -> BufferedClient:
    """A client of ``app`` checked by werkzeug's lint and wsgiref's validator."""
    return BufferedClient(validator(LintMiddleware(app)))
