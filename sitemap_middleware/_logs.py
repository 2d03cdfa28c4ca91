"""The package's logging: one logger, and how a problem that recurs is said once.

Every module logs to the ``sitemap_middleware`` logger (the name users configure; see
the docs, *Logs and metrics*), imported from here. A problem seen on every request is not
logged on every request: a section-wide one once per process (:func:`report_once`), a
planning pass's report once per content, again when what it says changes
(:class:`OncePerContent`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict

__all__ = ["LOGGER_NAME", "LOG_ONCE", "OncePerContent", "logger", "report_once"]

#: The one logger name: documented, so users' logging configuration keeps working.
LOGGER_NAME = "sitemap_middleware"
logger = logging.getLogger(LOGGER_NAME)

LOG_ONCE = "sitemap section %r: %s (reported once per section)"
#: (section, kind) already reported; bounded, so made-up section names cannot grow it.
_REPORTED: set[tuple[str, str]] = set()
_MAX_REPORTED = 10_000


def report_once(section: str, kind: str, message: str) -> None:
    """Warn about a section-wide problem once per process, not once per entry."""
    if (section, kind) not in _REPORTED and len(_REPORTED) < _MAX_REPORTED:
        _REPORTED.add((section, kind))
        logger.warning(LOG_ONCE, section, message)


class OncePerContent:
    """Whether a report is news: once per name and content, again when the content
    changes or after :meth:`forget` (the problem went away, so its return is news).
    At most ``size`` names are remembered, the least recently reported forgotten first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._said: OrderedDict[str, str] = OrderedDict()

    def is_new(self, name: str, content: str) -> bool:
        """Whether ``content`` is not what was last said of ``name`` (it now is)."""
        if self._said.get(name) == content:
            return False
        self._said[name] = content
        self._said.move_to_end(name)
        while len(self._said) > self._size:
            self._said.popitem(last=False)
        return True

    def forget(self, name: str) -> None:
        """Nothing to say of ``name`` any more: the next report of it is news."""
        self._said.pop(name, None)
