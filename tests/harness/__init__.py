"""The one test harness: what tests share, one module per role (import from the module).

* ``core.py``: a site's config and core (``make_config``, ``make_core``), requests to the
  core in process (``fetch``, ``collect``, ``header``).
* ``asgi.py`` / ``wsgi.py``: calling the middlewares as a server would, in process.
* ``documents.py``: sitemaps checked as a crawler reads them (and the XSDs), feeds.
* ``providers.py``: providers, a store and entries that tests serve.
* ``ports.py``: free ports and reserved sockets on 127.0.0.1.
* ``servers.py``: real servers, in a thread (uvicorn, hypercorn, werkzeug) or a process.
* ``processes.py``: a check in a forked child; ``sql.py``: the SQL a block runs.
* ``django.py``: the Django tests' project, in process and against Django's own views.
"""
