"""The demo shop: every feature of the package on one site (``sitemap-middleware demo``).

Not part of the library's API; its modules depend on one another in one direction:

* ``planted.py``: the pages planted for the sitemaps to leave out, and the deals page;
* ``site.py``: the data (SQLite, docs, landing pages), the configuration and the options;
* ``shop.py``: what each URL answers, whichever framework routes to it;
* ``apps.py``: the two flavours (Starlette under uvicorn, Flask under werkzeug), and
  ``apps:asgi`` / ``apps:wsgi``, the demo as a ``module:app``;
* ``serve.py``: ``run``, what ``python -m sitemap_middleware demo`` starts.
"""
