"""Route providers: the parameterless GET routes of a Starlette/FastAPI or Flask app."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from .base import ProviderVersion

__all__ = ["FlaskRoutesProvider", "StarletteRoutesProvider"]


class _RoutesProvider:
    def __init__(
        self, app: Any, *, include: Sequence[str] = ("*",), exclude: Sequence[str] = ()
    ) -> None:
        self.app = app
        self.include = tuple(include)
        self.exclude = tuple(exclude)

    def _paths(self) -> Iterator[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def paths(self) -> list[str]:
        """Matching paths, sorted; read on every call so routes added later appear."""
        chosen = {
            path
            for path in self._paths()
            if any(fnmatch.fnmatchcase(path, p) for p in self.include)
            and not any(fnmatch.fnmatchcase(path, p) for p in self.exclude)
        }
        return sorted(chosen)

    async def entries(self) -> AsyncIterator[str]:
        for path in self.paths():
            yield path

    async def count(self) -> int:
        return len(self.paths())

    async def version(self) -> ProviderVersion:
        return ProviderVersion(
            token=hashlib.sha256("\n".join(self.paths()).encode()).hexdigest()[:32]
        )


class StarletteRoutesProvider(_RoutesProvider):
    """GET routes without path parameters of a Starlette or FastAPI app (mounts included).

    :param app: the Starlette/FastAPI application (or a ``Router``).
    :param include: glob patterns of paths to list (default: all).
    :param exclude: glob patterns of paths to leave out (e.g. ``"/admin*"``).
    """

    def _paths(self) -> Iterator[str]:
        yield from _starlette_paths(getattr(self.app, "routes", []), "")


def _starlette_paths(routes: Sequence[Any], prefix: str) -> Iterator[str]:
    from starlette.routing import Mount, Route

    for route in routes:
        if isinstance(route, Mount):
            # A Mount's own convertors include its catch-all "path"; look at its pattern.
            if "{" not in route.path:
                yield from _starlette_paths(route.routes or [], prefix + route.path)
        elif isinstance(route, Route):
            methods = route.methods or set()
            if (
                "GET" in methods
                and not route.param_convertors
                and route.include_in_schema is not False
            ):
                yield prefix + route.path


class FlaskRoutesProvider(_RoutesProvider):
    """Argument-free GET rules of a Flask app (the ``static`` endpoint is left out).

    :param app: the Flask application.
    :param include: glob patterns of paths to list (default: all).
    :param exclude: glob patterns of paths to leave out.
    """

    def _paths(self) -> Iterator[str]:
        for rule in self.app.url_map.iter_rules():
            if "GET" in (rule.methods or ()) and not rule.arguments and rule.endpoint != "static":
                yield rule.rule
