"""Thin ASGI and WSGI adapters: translate, decide nothing."""
