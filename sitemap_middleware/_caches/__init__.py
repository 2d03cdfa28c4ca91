"""Render stores: the protocol, in-process and Redis."""
