"""Warm serving against the limit: a stored page beside the same bytes as a static file.

``python -m benchmarks.warm [--seconds S] [--rounds R] [--redis URL] [--json PATH]``

An 8 MB, 50,000-URL page (``&`` in every URL) is rendered once and stored; then, on
uvicorn (ASGI) and gunicorn (WSGI, gthread), each of identity, gzip (what crawlers send)
and 304 (If-None-Match) is timed in alternation with the same bytes served as static
files by the same server (Starlette's ``StaticFiles``, werkzeug's
``SharedDataMiddleware``; ``.xml.gz`` for gzip): requests/s at concurrency 16, p50
latency at concurrency 1, and the server's highest RSS under that load. Ratios are ours / static, the
median of the rounds. The client reads into one buffer per connection with
``sock_recv_into``, so its own cost is the same for both and small next to either.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.common import free_port, markdown_table, rss_kib
from benchmarks.server import ROOT

PAGE = "/sitemap-products-1.xml"
CONCURRENCY = 16


# -- the client --------------------------------------------------------------------------


async def _request(sock: socket.socket, data: bytes, buf: bytearray) -> int:
    """One request on a keep-alive connection; returns the status. Reads the body into
    ``buf`` (overwritten: nothing kept), by Content-Length or chunked."""
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(sock, data)
    view = memoryview(buf)
    have = 0
    while (end := buf.find(b"\r\n\r\n", 0, have)) < 0:
        got = await loop.sock_recv_into(sock, view[have:])
        if not got:
            raise ConnectionError("closed before the headers")
        have += got
    head = bytes(buf[:end]).decode("latin-1").lower().split("\r\n")
    status = int(head[0].split()[1])
    fields = dict(line.split(": ", 1) for line in head[1:])
    rest = have - end - 4
    if status == 304 or status == 204:
        return status
    if "content-length" in fields:
        left = int(fields["content-length"]) - rest
        while left > 0:
            got = await loop.sock_recv_into(sock, view[: min(left, len(buf))])
            if not got:
                raise ConnectionError("closed mid-body")
            left -= got
        return status
    # chunked: keep the unparsed tail at the front of the buffer
    buf[:rest] = buf[end + 4 : have]
    have = rest
    while True:
        while (line_end := buf.find(b"\r\n", 0, have)) < 0:
            have += await _recv(sock, view, have)
        size = int(bytes(buf[:line_end]).split(b";")[0], 16)
        need = line_end + 2 + size + 2
        if need <= have:
            buf[: have - need] = buf[need:have]
            have -= need
        else:
            left = need - have
            while left > 0:
                left -= await _recv(sock, view[: min(left, len(buf))], 0)
            have = 0
        if size == 0:
            return status


async def _recv(sock: socket.socket, view: memoryview, at: int) -> int:
    got = await asyncio.get_running_loop().sock_recv_into(sock, view[at:])
    if not got:
        raise ConnectionError("closed mid-body")
    return got


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


def _raw(path: str, headers: dict[str, str]) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _throughput(port: int, data: bytes, seconds: float, expect: int) -> float:
    deadline = time.perf_counter() + seconds
    done = 0

    async def worker() -> None:
        nonlocal done
        sock, buf = _connect(port), bytearray(1 << 20)
        try:
            while time.perf_counter() < deadline:
                status = await _request(sock, data, buf)
                assert status == expect, (status, expect)
                done += 1
        finally:
            sock.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return done / (time.perf_counter() - started)


async def _p50(port: int, data: bytes, count: int, expect: int) -> float:
    sock, buf = _connect(port), bytearray(1 << 20)
    times = []
    try:
        for _ in range(count):
            started = time.perf_counter()
            status = await _request(sock, data, buf)
            times.append(time.perf_counter() - started)
            assert status == expect, (status, expect)
    finally:
        sock.close()
    return statistics.median(times)


# -- the servers -------------------------------------------------------------------------


def _argv(server: str, factory: str, port: int) -> list[str]:
    if server == "uvicorn":
        return [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            f"benchmarks.warm_apps:{factory}",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--lifespan",
            "off",
        ]
    return [sys.executable, "-m", "gunicorn", "-w", "1", "-k", "gthread", "--threads",
            str(CONCURRENCY), "-b", f"127.0.0.1:{port}", "--log-level", "warning",
            f"benchmarks.warm_apps:{factory}()"]  # fmt: skip


@contextmanager
def _serving(server: str, factory: str, env: dict[str, str]) -> Iterator[tuple[int, int]]:
    port = free_port()
    process = subprocess.Popen(_argv(server, factory, port), cwd=ROOT, env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{server} {factory} did not start") from None
                time.sleep(0.1)
        yield port, process.pid
    finally:
        process.terminate()
        process.wait(20)


def _worker_pid(pid: int) -> int:
    """gunicorn's worker (the master's child), or the process itself."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return pid
    return int(children[0]) if children else pid


class _RSSSampler:
    """The highest RSS of each server seen while the load runs (VmHWM would count the
    warm-up render, which is not what serving a stored page costs)."""

    def __init__(self, *pids: int) -> None:
        import threading

        self._pids = pids
        self._high = [0] * len(pids)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(0.05):
            for i, pid in enumerate(self._pids):
                self._high[i] = max(self._high[i], rss_kib(pid))

    def stop(self) -> tuple[int, ...]:
        self._done.set()
        self._thread.join()
        return tuple(self._high)


def _get(port: int, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    import httpx

    reply = httpx.get(f"http://127.0.0.1:{port}{path}", headers=headers, timeout=120)
    return reply.status_code, dict(reply.headers), reply.read()


# -- the run -----------------------------------------------------------------------------


def measure(server: str, store: str, seconds: float, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as static_dir:
        env = {"WARM_STORE": store, "WARM_STATIC_DIR": static_dir, "PYTHONPATH": str(ROOT)}
        with _serving(server, "asgi_ours" if server == "uvicorn" else "wsgi_ours", env) as ours:
            import gzip as gzip_module

            _, _, identity = _get(ours[0], PAGE, {"Accept-Encoding": "identity"})
            _get(ours[0], PAGE, {"Accept-Encoding": "gzip"})
            time.sleep(0.5)  # the render is stored (with its gzip body) as it completes
            status, headers, raw = _raw_get(ours[0], PAGE, {"Accept-Encoding": "gzip"})
            assert status == 200 and gzip_module.decompress(raw) == identity
            Path(static_dir, "page.xml").write_bytes(identity)
            Path(static_dir, "page.xml.gz").write_bytes(raw)
            etags = {
                "identity": _raw_get(ours[0], PAGE, {"Accept-Encoding": "identity"})[1]["etag"],
                "gzip": headers["etag"],
            }
            static_app = "asgi_static" if server == "uvicorn" else "wsgi_static"
            with _serving(server, static_app, env) as static:
                static_etag = _get(static[0], "/static/page.xml", {})[1]["etag"]
                cases = {
                    "identity": (
                        (PAGE, {"Accept-Encoding": "identity"}, 200),
                        ("/static/page.xml", {}, 200),
                    ),
                    "gzip": (
                        (PAGE, {"Accept-Encoding": "gzip"}, 200),
                        ("/static/page.xml.gz", {}, 200),
                    ),
                    "304": (
                        (PAGE, {"If-None-Match": etags["identity"]}, 304),
                        ("/static/page.xml", {"If-None-Match": static_etag}, 304),
                    ),
                }
                rows = []
                sampler = _RSSSampler(_worker_pid(ours[1]), _worker_pid(static[1]))
                for case, ((path, hdrs, code), (s_path, s_hdrs, s_code)) in cases.items():
                    ratios_rps, ratios_p50, ours_rps, static_rps, ours_p50, static_p50 = (
                        [], [], [], [], [], []
                    )  # fmt: skip
                    for _ in range(rounds):
                        a = asyncio.run(_throughput(ours[0], _raw(path, hdrs), seconds, code))
                        b = asyncio.run(
                            _throughput(static[0], _raw(s_path, s_hdrs), seconds, s_code)
                        )
                        c = asyncio.run(_p50(ours[0], _raw(path, hdrs), 30, code))
                        d = asyncio.run(_p50(static[0], _raw(s_path, s_hdrs), 30, s_code))
                        ours_rps.append(a)
                        static_rps.append(b)
                        ours_p50.append(c)
                        static_p50.append(d)
                        ratios_rps.append(a / b)
                        ratios_p50.append(c / d)
                    rows.append(
                        {
                            "server": server,
                            "store": "memory" if store == "memory" else "redis",
                            "request": case,
                            "ours_rps": round(statistics.median(ours_rps), 1),
                            "static_rps": round(statistics.median(static_rps), 1),
                            "rps_ratio": round(statistics.median(ratios_rps), 3),
                            "ours_p50_ms": round(statistics.median(ours_p50) * 1000, 2),
                            "static_p50_ms": round(statistics.median(static_p50) * 1000, 2),
                            "p50_ratio": round(statistics.median(ratios_p50), 3),
                        }
                    )
                rss = sampler.stop()
    for row in rows:
        row["ours_peak_rss_mib"] = round(rss[0] / 1024, 1)
        row["static_peak_rss_mib"] = round(rss[1] / 1024, 1)
    return {"rows": rows, "page_bytes": len(identity), "gzip_bytes": len(raw)}


def _raw_get(port: int, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """A GET whose body is returned as sent (httpx would decode the gzip)."""
    import httpx

    url = f"http://127.0.0.1:{port}{path}"
    with httpx.stream("GET", url, headers=headers, timeout=120) as reply:
        return reply.status_code, dict(reply.headers), b"".join(reply.iter_raw())


def report(results: list[dict[str, Any]]) -> str:
    header = [
        "server",
        "store",
        "request",
        "ours req/s",
        "static req/s",
        "ratio",
        "ours p50 ms",
        "static p50 ms",
        "p50 ratio",
        "RSS under load ours / static MiB",
    ]
    rows = [
        [
            r["server"],
            r["store"],
            r["request"],
            str(r["ours_rps"]),
            str(r["static_rps"]),
            f"**{r['rps_ratio']}×**",
            str(r["ours_p50_ms"]),
            str(r["static_p50_ms"]),
            f"{r['p50_ratio']}×",
            f"{r['ours_peak_rss_mib']} / {r['static_peak_rss_mib']}",
        ]
        for result in results
        for r in result["rows"]
    ]
    return markdown_table(header, rows)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--servers", default="uvicorn,gunicorn")
    parser.add_argument("--redis", help="also measure a RedisRenderStore at this URL")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    stores = ["memory"] + ([args.redis] if args.redis else [])
    results = [
        measure(server, store, args.seconds, args.rounds)
        for store in stores
        for server in args.servers.split(",")
    ]
    print(f"page: {results[0]['page_bytes']:,} bytes, gzip {results[0]['gzip_bytes']:,} bytes")
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
