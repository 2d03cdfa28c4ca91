"""Django's ``sitemap``/``index`` views answered by the middleware, for Django's own tests.

Imported by :mod:`tests.django_suite.settings` in the process that runs Django's
``runtests.py sitemaps_tests``, before any test URLconf imports the views, it replaces
``django.contrib.sitemaps.views.index`` and ``.sitemap`` with views that hand the request
to a :class:`~sitemap_middleware.WSGISitemapMiddleware` configured, as a user would, with
``sitemap_config(<the view's sitemaps>)``, and return the middleware's answer (status,
headers, body) unchanged. Django's URL names the document; the middleware's own name for
it is what the request is translated to, at the base URL's root, where the middleware
serves its documents (``/simple/index.xml`` is asked as ``/index.xml``):

* ``index`` at ``.../<name>`` -> the index, ``index_name=<name>``;
* ``sitemap`` with a section at ``.../<prefix><section>.xml?p=N`` -> the page
  ``/<prefix><section>-N.xml`` (``p`` passed on as written: ``?p=test`` names no page);
* ``sitemap`` without a section at ``.../<name>`` -> ``sitemap_name=<name>``, a urlset
  of every section while everything fits in one (as Django's view answers).

``base_url`` is what a site serving these views would configure: the current ``Site``'s
domain (``RequestSite`` without the Sites framework) under the scheme the sitemaps force,
else the request's, as Django's views build their URLs per request.

With ``SITEMAP_DJANGO_SUITE_DECLARE_XHTML=1`` (a diagnostic pass, not the middleware's
answer) a urlset without ``xmlns:xhtml`` is given one. With
``SITEMAP_DJANGO_SUITE_DJANGO_SETTINGS=1`` (the settings pass) the config is built with
the settings a user wanting Django's behaviour sets (:data:`DJANGO_SETTINGS`): the
middleware's own answers, under those settings.

Django's ``TestCase`` keeps each test's rows in an open transaction of the main thread's
connection, which the middleware's ORM worker threads would not see; as Django's
``LiveServerTestCase`` does for its server thread, those threads are given the main
thread's connections (and do not close them).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

__all__ = ["django_settings", "install"]

_shared: dict[str, Any] = {}
_URLSET = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
#: The diagnostic pass (``SITEMAP_DJANGO_SUITE_DECLARE_XHTML=1``) adds the declaration
#: Django's template always writes and the middleware writes only with ``<xhtml:link>``s,
#: to show which tests differ by nothing else.
_URLSET_XHTML = _URLSET[:-1] + b' xmlns:xhtml="http://www.w3.org/1999/xhtml">'


def django_settings() -> dict[str, Any]:
    """``sitemap_config()`` keywords that give Django's behaviour where a setting can
    (docs, *Differences from django.contrib.sitemaps*): a plain ``Sitemap``'s ``Last-Modified`` from its items'
    lastmods, ``If-Modified-Since`` answered from it, and Django's ``X-Robots-Tag``."""
    from sitemap_middleware import HTTPSettings

    return {
        "item_dates": True,
        "http": HTTPSettings(trust_provider_times=True, x_robots_tag="noindex, noodp, noarchive"),
    }


def _not_ours(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    """What a request the middleware does not answer meets: no Django view serves it."""
    start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
    return [b"not a sitemap document\n"]


def _base_url(request: Any, sitemaps: Mapping[str, Any]) -> str:
    from django.contrib.sites.shortcuts import get_current_site

    from sitemap_middleware._django.sitemaps import sitemap_protocols

    forced = sitemap_protocols(sitemaps.values())
    scheme = next(iter(forced)) if len(forced) == 1 else request.scheme
    return f"{scheme}://{get_current_site(request).domain}"


def _answer(request: Any, sitemaps: Mapping[str, Any], path: str, names: dict[str, Any]) -> Any:
    from django.db import connections
    from django.http import HttpResponse

    from sitemap_middleware import WSGISitemapMiddleware
    from sitemap_middleware.django import sitemap_config

    if os.environ.get("SITEMAP_DJANGO_SUITE_DJANGO_SETTINGS"):
        names = {**names, **django_settings()}
    config = sitemap_config(sitemaps, base_url=_base_url(request, sitemaps), **names)
    environ = dict(request.environ)
    environ.update(PATH_INFO="/" + path, QUERY_STRING="", SCRIPT_NAME="")
    status: list[str] = []
    headers: list[tuple[str, str]] = []

    def start_response(line: str, sent: list[tuple[str, str]], *exc: object) -> Any:
        status.append(line)
        headers.extend(sent)

    middleware = WSGISitemapMiddleware(_not_ours, config=config)
    for connection in connections.all():
        _shared[connection.alias] = connection
        connection.inc_thread_sharing()
    try:
        body = middleware(environ, start_response)
        try:
            data = b"".join(body)
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
    finally:
        for connection in connections.all():
            connection.dec_thread_sharing()
        _shared.clear()
        middleware.close()
    if os.environ.get("SITEMAP_DJANGO_SUITE_DECLARE_XHTML"):
        data = data.replace(_URLSET, _URLSET_XHTML, 1)
    response = HttpResponse(data, status=int(status[0].split(" ", 1)[0]))
    for name in {name.lower() for name, _ in headers}:
        values = [value for key, value in headers if key.lower() == name]
        response.headers[name] = ", ".join(values)
    return response


def _names(taken: str, default: str, other: str) -> str:
    return other if taken == default else default


def index(request: Any, sitemaps: Mapping[str, Any], **_django_options: object) -> Any:
    """Django's ``index`` view, answered by the middleware's sitemap index."""
    name = request.path.rsplit("/", 1)[1]
    names = {"index_name": name, "sitemap_name": _names(name, "sitemap.xml", "root.xml")}
    return _answer(request, sitemaps, name, names)


def sitemap(
    request: Any,
    sitemaps: Mapping[str, Any],
    section: str | None = None,
    **_django_options: object,
) -> Any:
    """Django's ``sitemap`` view: a section's page, or every section at once."""
    name = request.path.rsplit("/", 1)[1]
    if section is None:
        names = {"sitemap_name": name, "index_name": _names(name, "sitemap_index.xml", "index.xml")}
        return _answer(request, sitemaps, name, names)
    prefix, found, _ = name.rpartition(f"{section}.xml")
    prefix = prefix if found and prefix else "sitemap-"
    page = request.GET.get("p", "1")
    return _answer(request, sitemaps, f"{prefix}{section}-{page}.xml", {"page_prefix": prefix})


def _share_connections(original: Any) -> Any:
    def close_old_connections(**kwargs: object) -> None:
        if threading.current_thread() is threading.main_thread():
            original(**kwargs)
            return
        from django.db import connections

        for alias, connection in _shared.items():
            connections[alias] = connection

    return close_old_connections


def _keep_shared(original: Any) -> Any:
    def close_all() -> None:
        if threading.current_thread() is threading.main_thread():
            original()

    return close_all


def install() -> None:
    """Replace Django's two sitemap views; share the test connections with ORM threads."""
    import django.db
    from django.contrib.sitemaps import views

    views.index = index
    views.sitemap = sitemap
    # sitemap_middleware._django.orm imports these from django.db on every call.
    django.db.close_old_connections = _share_connections(django.db.close_old_connections)
    django.db.connections.close_all = _keep_shared(django.db.connections.close_all)
