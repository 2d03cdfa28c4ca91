"""Pages the demo plants for its sitemaps to leave out, and the one kept for the ledger.

Its providers list each of them (the route providers list every parameterless route, the
landing-page file names ``/about`` again); the configuration keeps them out:

* ``/preview`` says ``noindex`` (``X-Robots-Tag``), ``/old-about`` redirects to
  ``/about``, ``/about/print`` declares ``/about`` its canonical: the guard
  (``Guard(action="exclude")``) probes them in the background and leaves them out;
* ``/admin/`` is disallowed for ``*`` by the demo's robots.txt: never listed;
* ``/about`` is listed by the pages section and by the landing-page file: with
  ``dedupe=True`` the first listing (pages) is the one served.

``/deals/today`` is listed with a fixed ``lastmod`` from its provider, though the deal it
shows changes every ``DEAL_SECONDS``: the content ledger (``Ledger(source="digest",
sections=["deals"])``, the provider giving the deal as the digest) writes the time the
deal on show was first seen instead.
"""

from __future__ import annotations

import logging
import shlex
import sys
import time
from typing import Any, NamedTuple
from urllib.parse import urlsplit

__all__ = [
    "DEALS",
    "DEALS_LASTMOD",
    "DEAL_SECONDS",
    "OFFERS",
    "DEMO_ARGS_ENV",
    "PLANTED",
    "PLANTED_ROUTES",
    "PlantedWarnings",
    "deal_now",
    "deals_entries",
    "left_out_message",
    "planted_answer",
    "planted_title",
]

#: The deal on show: it changes every DEAL_SECONDS, its provider lastmod never.
DEALS = "/deals/today"
#: The lastmod its provider reports, whatever the page says (the ledger dates the deal).
DEALS_LASTMOD = "2024-06-01T09:00:00+00:00"
DEAL_SECONDS = 60
OFFERS = ("Darjeeling, 20% off", "Sencha, two for one", "Oolong sampler, 15% off")
#: The environment variable ``apps:asgi`` / ``:wsgi`` read the demo's options from.
DEMO_ARGS_ENV = "SITEMAP_DEMO_ARGS"


class Planted(NamedTuple):
    path: str
    kind: str  # what it is, one word
    why: str  # what keeps it out, in words


#: Listed by a provider, kept out by the configuration (see the module's docstring).
PLANTED = (
    Planted("/preview", "noindex", "X-Robots-Tag: noindex; the guard leaves it out"),
    Planted("/old-about", "redirect", "a 301 to /about; the guard leaves it out"),
    Planted("/about/print", "canonical", "canonical is /about; the guard leaves it out"),
    Planted("/admin/", "robots", "robots.txt disallows /admin/ for *; never listed"),
    Planted("/about", "duplicate", "also in landing.txt; dedupe keeps the pages listing"),
)
#: The planted routes each flavour serves (``/about`` is a page of its own).
PLANTED_ROUTES = tuple(p.path for p in PLANTED if p.kind != "duplicate")


class PlantedWarnings(logging.Filter):
    """The guard's WARNING about a page the demo planted for it is the demo working, not a
    problem to look into: it is logged at INFO, saying so (installed on the library's
    logger by ``serve.run``; a real site's quarantines stay WARNINGs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if (
            record.levelno == logging.WARNING
            and isinstance(record.msg, str)
            and record.msg.startswith("sitemap guard:")
            and any(isinstance(a, str) and urlsplit(a).path in PLANTED_ROUTES for a in args)
        ):
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg += " (planted by the demo, as intended)"
        return True


def deal_now() -> str:
    """The deal on show now (one of OFFERS, in turn, every DEAL_SECONDS)."""
    return OFFERS[int(time.time() // DEAL_SECONDS) % len(OFFERS)]


def deals_entries() -> list[dict[str, Any]]:
    """The deals section: one page whose provider lastmod is fixed, and the deal it shows
    as its content digest (the ledger's ``digest`` key)."""
    return [{"loc": DEALS, "lastmod": DEALS_LASTMOD, "changefreq": "daily", "digest": deal_now()}]


def planted_answer(path: str, page: str) -> tuple[int, dict[str, str], str]:
    """(status, headers, body) of a planted route or the deals page; ``page`` is the
    shop's page for it, rendered by the caller."""
    if path == "/preview":
        return 200, {"X-Robots-Tag": "noindex"}, page
    if path == "/old-about":
        return 301, {"Location": "/about"}, "Moved to /about"
    return 200, {}, page


def planted_title(path: str) -> tuple[str, str, str]:
    """(title, body, extra head) of a planted page or the deals page."""
    if path == "/about/print":
        return "About (print)", "The printable About page.", '<link rel="canonical" href="/about">'
    if path == "/admin/":
        return "Admin", "Disallowed for crawlers by robots.txt.", ""
    if path == "/preview":
        return "Preview", "A page not ready to be found (X-Robots-Tag: noindex).", ""
    if path == DEALS:  # the content changes, the provider's lastmod does not
        return "Deal of the day", f"{deal_now()}.", ""
    return "Moved", "Moved to /about.", ""


def left_out_message(base_url: str, argv: list[str], flavour: str) -> list[str]:
    """The start-up lines naming what the sitemaps leave out and how to ask why."""
    lines = [
        "Listed by its providers, left out of its sitemaps (the guard probes in the"
        " background: the HTML view lists what it quarantined):"
    ]
    lines += [f"  {p.kind:<10} {base_url}{p.path}  ({p.why})" for p in PLANTED]
    lines.append(
        f"  (listed: {base_url}{DEALS}: its deal changes every {DEAL_SECONDS} s, its"
        " provider's lastmod never; the content ledger dates the deal)"
    )
    env = f"{DEMO_ARGS_ENV}={shlex.quote(shlex.join(argv))} " if argv else ""
    paths = " ".join(p.path for p in PLANTED)
    lines.append("Ask why:")
    lines.append(
        f"  {env}{shlex.quote(sys.executable)} -m sitemap_middleware explain"
        f" --app sitemap_middleware.demo.apps:{flavour} {paths}"
    )
    return lines
