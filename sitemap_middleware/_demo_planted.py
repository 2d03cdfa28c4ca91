"""Pages the demo plants for its sitemaps to leave out, and the one kept for the ledger.

Its providers list each of them (the route providers list every parameterless route, the
landing-page file names ``/about`` again); the configuration keeps them out:

* ``/preview`` says ``noindex`` (``X-Robots-Tag``), ``/old-about`` redirects to
  ``/about``, ``/about/print`` declares ``/about`` its canonical: the guard
  (``Guard(action="exclude")``) probes them in the background and leaves them out;
* ``/admin/`` is disallowed for ``*`` by the demo's robots.txt: never listed;
* ``/about`` is listed by the pages section and by the landing-page file: with
  ``dedupe=True`` the first listing (pages) is the one served.

``/deals/today`` is listed, with a fixed ``lastmod``, though its body changes on every
request (a counter and the time): what the content ledger is for (LEDGER, see
``_demo.make_config``).
"""

from __future__ import annotations

import itertools
import shlex
import sys
from datetime import datetime, timezone
from typing import NamedTuple

from ._sansio.models import SitemapEntry

__all__ = [
    "DEALS",
    "DEALS_LASTMOD",
    "DEMO_ARGS_ENV",
    "PLANTED",
    "PLANTED_ROUTES",
    "deals_entries",
    "left_out_message",
    "planted_answer",
    "planted_title",
]

#: The deal of the day: its body changes on every request, its provider lastmod never.
DEALS = "/deals/today"
#: The lastmod its provider reports, whatever the page says (LEDGER: digests would move it).
DEALS_LASTMOD = "2024-06-01T09:00:00+00:00"
#: The environment variable ``_demo_apps:asgi`` / ``:wsgi`` read the demo's options from.
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

_views = itertools.count(1)


def deals_entries() -> list[SitemapEntry]:
    """The deals section: one page whose lastmod is fixed (the ledger's case)."""
    return [SitemapEntry(DEALS, lastmod=DEALS_LASTMOD, changefreq="daily")]


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
    if path == DEALS:
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        # LEDGER: this body changes on every request while the provider's lastmod stays
        # DEALS_LASTMOD; the content ledger will date it by its content instead.
        return "Deal of the day", f"View {next(_views)}, at {now}.", ""
    return "Moved", "Moved to /about.", ""


def left_out_message(base_url: str, argv: list[str], flavour: str) -> list[str]:
    """The start-up lines naming what the sitemaps leave out and how to ask why."""
    lines = [
        "Listed by its providers, left out of its sitemaps (the guard probes in the"
        " background: the HTML view lists what it quarantined):"
    ]
    lines += [f"  {p.kind:<10} {base_url}{p.path}  ({p.why})" for p in PLANTED]
    lines.append(
        f"  (listed: {base_url}{DEALS} changes on every request, its lastmod never:"
        " for the content ledger)"
    )
    env = f"{DEMO_ARGS_ENV}={shlex.quote(shlex.join(argv))} " if argv else ""
    paths = " ".join(p.path for p in PLANTED)
    lines.append("Ask why:")
    lines.append(
        f"  {env}{shlex.quote(sys.executable)} -m sitemap_middleware explain"
        f" --app sitemap_middleware._demo_apps:{flavour} {paths}"
    )
    return lines
