"""One blocking portal (event loop thread) per process, for the WSGI side, and the
WSGI body that crosses it."""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

__all__ = ["PortalBody", "get_portal"]

_lock = threading.Lock()
_current: tuple[BlockingPortal, AbstractContextManager[BlockingPortal]] | None = None
#: Portals inherited through fork(): their loop thread does not exist in this process.
#: Kept referenced forever, because finalizing the context manager would stop the
#: portal and join its thread -- a wait that never ends in the child.
_inherited: list[object] = []


def get_portal() -> BlockingPortal:
    """The process's portal, started lazily (after a pre-fork server has forked).

    One long-lived loop lets providers keep loop-bound clients and pools between
    requests; a forked worker gets its own loop (see _after_fork_in_child).
    """
    global _current
    with _lock:
        if _current is None:
            manager = start_blocking_portal()
            _current = (manager.__enter__(), manager)
        return _current[0]


@atexit.register  # inherited by forked children, where it stops the child's own portal
def _stop() -> None:
    global _current
    with _lock:
        if _current is not None:
            _current[1].__exit__(None, None, None)
        _current = None


def _after_fork_in_child() -> None:
    # Another thread may have held the lock when the parent forked; it never releases
    # it here. The parent's portal is set aside, never finalized (see _inherited).
    global _lock, _current
    _lock = threading.Lock()
    if _current is not None:
        _inherited.append(_current)
        _current = None


os.register_at_fork(after_in_child=_after_fork_in_child)


#: A request thread sleeps until this many bytes wait for it (or the end), and its task
#: stops reading once they do, until the thread takes them: one wake-up per ~256 KiB
#: however many requests read one render (not one portal call per chunk), and about
#: twice this in memory per response (a batch being sent, the next one waiting).
BATCH_BYTES = 256 * 1024


class PortalBody:
    """A WSGI body fed by one task on the portal's loop: no portal call per chunk.

    The first ``next`` starts a task that reads the async body into a buffer; the
    request thread sleeps until ``BATCH_BYTES`` wait (at the first chunk at once, for a
    quick first byte), takes them in one wake-up and yields them as they are (joining
    them would copy every byte once more, per request) while the task reads the next
    batch. A failure reaches the thread after the chunks produced before it. ``close()``
    (called by every WSGI server, also when the client hung up) cancels the task, which
    closes the async body, so the provider's ``finally`` has run when ``close()`` returns.
    """

    def __init__(self, portal: BlockingPortal, body: AsyncIterator[bytes]) -> None:
        self._portal = portal
        self._body = body
        self._ready = threading.Condition()  # guards the fields below
        self._chunks: list[bytes] = []
        self._held = 0
        self._wanted = 1  # bytes the thread sleeps for: 1 for the first wake-up
        self._room: anyio.Event | None = None  # the task waits on it while the buffer is full
        self._started = False
        self._ended = False  # the task has stopped reading and closed the body
        self._error: BaseException | None = None
        self._task: Future[None] | None = None
        self._soon: Callable[[Callable[[], object]], object] | None = None
        #: Times the request thread woke up for chunks: for tests.
        self.wakeups = 0

    def __iter__(self) -> Iterator[bytes]:
        with self._ready:
            if self._started:
                raise RuntimeError("this WSGI body was already iterated or closed")
            self._started = True
        self._task = self._portal.start_task_soon(self._pump)
        while True:
            with self._ready:
                while self._held < self._wanted and not self._ended:
                    self._ready.wait()
                chunks, self._chunks, self._held = self._chunks, [], 0
                self._wanted = BATCH_BYTES
                room, self._room = self._room, None
                ended, error = self._ended, self._error
                self.wakeups += 1
            if room is not None and self._soon is not None:  # the task waits for room
                self._soon(room.set)  # without waiting for the loop to run it
            yield from chunks
            del chunks  # what the server sent is not held while it waits for more
            if ended:
                if error is not None:
                    raise error
                return

    async def _pump(self) -> None:
        error: BaseException | None = RuntimeError("the body was closed before its end")
        self._soon = _soon_from_threads()
        try:
            async for chunk in self._body:
                with self._ready:
                    self._chunks.append(chunk)
                    self._held += len(chunk)
                    if self._held >= self._wanted:
                        self._ready.notify()
                    room = self._room = anyio.Event() if self._held >= BATCH_BYTES else None
                if room is not None:
                    await room.wait()
            error = None
        except Exception as exc:  # the thread raises it: the server aborts the response
            error = exc
        finally:
            try:
                with anyio.CancelScope(shield=True):
                    await _aclose(self._body)
            except Exception as exc:
                error = error or exc
            finally:
                with self._ready:
                    self._ended, self._error = True, error
                    self._ready.notify()

    def close(self) -> None:
        with self._ready:
            started, self._started = self._started, True
            ended = self._ended
        if not started:
            self._portal.call(_aclose, self._body)
        elif not ended and self._task is not None:
            self._task.cancel()  # cancels the task (anyio); its finally closes the body
            with self._ready:
                while not self._ended:
                    self._ready.wait()


def _soon_from_threads() -> Callable[[Callable[[], object]], object]:
    """The running loop's "call this soon", safe from other threads and without waiting
    (a portal call would wait for the loop to run it)."""
    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:  # trio, anyio's other backend
        import trio

        return trio.lowlevel.current_trio_token().run_sync_soon


async def _aclose(body: AsyncIterator[bytes]) -> None:
    aclose = getattr(body, "aclose", None)
    if aclose is not None:
        await aclose()
