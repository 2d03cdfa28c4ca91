"""The indexability guard's settings (:class:`Guard`); the engine is ``_engine/guard.py``."""

from __future__ import annotations

from dataclasses import dataclass

from ._exceptions import ConfigurationError
from ._settings import check_int, check_positive

__all__ = ["Guard"]


@dataclass(frozen=True, slots=True)
class Guard:
    """Probe listed URLs through the wrapped app and leave out (or report) bad ones.

    After a document is planned or rendered, a background task GETs the URLs it read
    that have no fresh verdict, in process (the request ``check --app`` makes: no
    network), and keeps each verdict ``ttl`` seconds in ``Renders.store`` (a fleet
    sharing Redis probes each URL once). A URL that answers 3xx or 4xx, says
    ``noindex`` (``X-Robots-Tag`` or ``<meta name=robots>``) or declares another
    canonical is *quarantined*: left out of the sitemaps like an excluded URL (reason
    ``"guard"``) with ``action="exclude"``, only reported (HTML view, metrics, log) with
    ``action="report"``. A 5xx, 429 or no answer is reported and probed again after
    ``retry`` seconds, never left out. No response waits for a probe.

    :param action: ``"exclude"`` or ``"report"``.
    :param ttl: seconds a verdict is kept before the URL is probed again.
    :param concurrency: probes in flight at once (per instance).
    :param max_probes_per_minute: probes started per minute at most (per instance);
        ``None``: no limit beyond ``concurrency``.
    :param timeout: seconds a probe may take.
    :param retry: seconds before a URL that got no verdict (5xx, 429, no answer) is
        probed again.
    """

    action: str = "exclude"
    ttl: float = 3600.0
    concurrency: int = 4
    max_probes_per_minute: int | None = 600
    timeout: float = 10.0
    retry: float = 300.0

    def __post_init__(self) -> None:
        if self.action not in ("exclude", "report"):
            raise ConfigurationError(
                f"Guard.action must be 'exclude' or 'report', got {self.action!r}"
            )
        check_positive("Guard", "ttl", self.ttl, 86_400 * 365)
        check_int("Guard", "concurrency", self.concurrency, 1, 256)
        if self.max_probes_per_minute is not None:
            check_int("Guard", "max_probes_per_minute", self.max_probes_per_minute, 1, 10**7)
        check_positive("Guard", "timeout", self.timeout, 3600)
        check_positive("Guard", "retry", self.retry, 86_400 * 365)
