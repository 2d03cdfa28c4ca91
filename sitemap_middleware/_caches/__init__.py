"""Render caches: in-process and Redis."""
