"""Django's host model as our host policy: the Sites framework or ``ALLOWED_HOSTS``.

Our policy only ever answers for exact host names (a forged ``Host`` must never reach a
sitemap), so this module turns Django's settings into such a list, and refuses the
patterns that cannot be one.
"""

from __future__ import annotations

from typing import Literal

from .._exceptions import ConfigurationError
from .._settings import is_exact_host  # the one rule TrustedHosts applies
from .orm import run_orm_blocking

__all__ = ["django_trusted_hosts", "site_base_url"]

HostSource = Literal["auto", "sites", "allowed_hosts"]


def _sites_installed() -> bool:
    from django.apps import apps

    return bool(apps.is_installed("django.contrib.sites"))


def _site_domains() -> list[str]:
    from django.contrib.sites.models import Site

    return [
        domain.lower() for domain in Site.objects.order_by("pk").values_list("domain", flat=True)
    ]


def _allowed_hosts() -> list[str]:
    from django.conf import settings

    if not settings.ALLOWED_HOSTS:
        # Django itself then serves nobody (or, with DEBUG, only localhost variants).
        raise ConfigurationError(
            "settings.ALLOWED_HOSTS is empty: there is no host to serve sitemaps for. Set it "
            "to the exact host names your site serves, e.g. ALLOWED_HOSTS = ['example.com'] "
            "(with ':port' where clients send one), or use the Sites framework "
            "(source='sites')"
        )
    hosts = []
    for entry in settings.ALLOWED_HOSTS:
        host = entry.lower()
        if host == "*" or host.startswith("."):
            raise ConfigurationError(
                f"ALLOWED_HOSTS entry {entry!r} is a pattern; sitemap hosts must be exact "
                "names, or a forged Host header could reach a sitemap. List them yourself "
                "(TrustedHosts(hosts=[...])) or use the Sites framework (source='sites')"
            )
        hosts.append(host)
    return hosts


def django_trusted_hosts(source: HostSource = "auto") -> tuple[str, ...]:
    """The hosts Django serves, for ``SitemapConfig(hosts=TrustedHosts(hosts=...))``.

    :param source: ``"sites"``: the domain of every ``Site`` (the Sites framework is
        Django's own list of the domains a project serves); ``"allowed_hosts"``: the
        exact names in ``settings.ALLOWED_HOSTS``; ``"auto"``: the Sites framework when
        it is installed, else ``ALLOWED_HOSTS``.

    Raises :class:`~sitemap_middleware.ConfigurationError` for an empty
    ``ALLOWED_HOSTS``, an ``ALLOWED_HOSTS`` pattern (``"*"``, ``".example.com"``) or a
    host our policy cannot match. IPv6 hosts are written as in ``ALLOWED_HOSTS``:
    ``"[::1]"``. Django ignores the port when it checks ``ALLOWED_HOSTS``; our policy
    compares ``host[:port]`` as sent, so list ports where clients send them. Reading
    ``Site`` objects touches the database (in a short-lived thread, so ``asgi.py`` may call
    it under uvicorn): call it at start-up, not per request.
    """
    if source not in ("auto", "sites", "allowed_hosts"):
        raise ConfigurationError(
            f"source must be 'auto', 'sites' or 'allowed_hosts', got {source!r}"
        )
    use_sites = source == "sites" or (source == "auto" and _sites_installed())
    if use_sites and not _sites_installed():
        raise ConfigurationError("source='sites' needs 'django.contrib.sites' in INSTALLED_APPS")
    hosts = run_orm_blocking(_site_domains) if use_sites else _allowed_hosts()
    for host in hosts:
        if not is_exact_host(host):
            raise ConfigurationError(
                f"host {host!r} cannot be matched exactly by the sitemap host policy "
                "(lower-case name, IPv4 address or bracketed IPv6 address, optional :port)"
            )
    return tuple(dict.fromkeys(hosts))


def site_base_url(scheme: str = "https", *, site_id: int | None = None) -> str:
    """``scheme://domain`` of the current ``Site`` (``SITE_ID``), for ``base_url``."""
    if scheme not in ("http", "https"):
        raise ConfigurationError(f"scheme must be 'http' or 'https', got {scheme!r}")
    if not _sites_installed():
        raise ConfigurationError(
            "site_base_url needs 'django.contrib.sites' in INSTALLED_APPS; pass base_url instead"
        )
    from django.contrib.sites.models import Site

    def domain() -> str:
        site = Site.objects.get(pk=site_id) if site_id is not None else Site.objects.get_current()
        return str(site.domain).lower()

    return f"{scheme}://{run_orm_blocking(domain)}"
