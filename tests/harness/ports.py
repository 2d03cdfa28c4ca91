"""Ports on 127.0.0.1 for the servers tests start."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on now (for a server in another process to bind)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bound_socket() -> socket.socket:
    """A socket bound to a free port, for a server in this process to take over."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock
