"""Nothing committed since a version was read: that version stands, no aggregate.

A version is an aggregate over rows; without a revision column it reads every row.
Where the database tells cheaply that no transaction has committed anywhere in it since
that aggregate was read, the answer is reused as it is. The rules, shared by the
SQLAlchemy provider (``sql_commits.py``) and the Django QuerySet provider
(``_django/commits.py``), which differ only in how they name a source's tables and run
a statement:

* SQLite: ``PRAGMA data_version`` on one connection of the provider's own, opened on
  the database's file outside the engine's pool (or Django's connections) and never
  written through. Its value changes when any other connection (of this process or
  another) commits to the file, so every write counts. It is read just before the
  aggregate.
* PostgreSQL: the snapshot (``pg_current_snapshot()``, ``txid_current_snapshot()``
  before 13) as ``xmin:xmax:xip``, read in the aggregate's own statement (so it is the
  very snapshot the aggregate saw, on the same server; a version read in several
  statements reads it in the first). A transaction id below ``xmax`` not listed in
  ``xip`` has completed, and ``xmax`` is one past the newest completed one: two equal
  snapshots have seen exactly the same commits. Any commit in the cluster (any
  database, a subtransaction's parent, ``COMMIT PREPARED``) moves it.

It falls back to the aggregate, every time, when it cannot hold: SQLite in memory or a
temporary database (no file), a source naming another schema (an attached database), a
view or a virtual table, or SQL the provider cannot see through (a textual ``FROM``;
Django's ``extra()``, ``RawSQL``, ``Now()``, ``Random()``, a function of the user's);
PostgreSQL on a hot standby (``pg_is_in_recovery()``: its snapshots list no transaction
in progress), after a server restart, a source naming a view or a foreign table, or
where the snapshot function is missing or refused; any error reading the signal.
SQLite's connection is opened again (and forgets what it saw) after ``fork()``; once
the file at the path is another one (a new file renamed over it), SQLite reads the
rows every time in this process.
Data a source reads from outside the database (a function reading files or another
server) is not covered: use ``metadata_ttl`` and ``forget()`` there.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Awaitable, Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .._logs import logger

__all__ = [
    "CATALOG_KINDS",
    "DataVersion",
    "KeptCommits",
    "Signal",
    "Snapshot",
    "postgresql_snapshot_function",
    "sqlite_path",
]

_T = TypeVar("_T")
#: Answers kept per key (a key range's version): clients can name ranges without end.
_MOST = 1024
#: Runs ``sql`` (``%s`` placeholders) with its parameters: the rows.
Run = Callable[[str, tuple[Any, ...]], Awaitable[Sequence[Sequence[Any]]]]
#: PostgreSQL: the kinds of a table and of every partition or child it reads (``r``
#: table, ``p`` partitioned, ``m`` materialized view: this server's rows only).
CATALOG_KINDS = (
    "WITH RECURSIVE tree(oid) AS (SELECT c.oid FROM pg_class c JOIN pg_namespace n "
    "ON n.oid = c.relnamespace WHERE c.relname = %s AND (n.nspname = CAST(%s AS text) "
    "OR (CAST(%s AS text) IS NULL AND pg_table_is_visible(c.oid))) UNION ALL SELECT "
    "i.inhrelid FROM pg_inherits i JOIN tree t ON i.inhparent = t.oid) "
    "SELECT c.relkind::text FROM tree t JOIN pg_class c ON c.oid = t.oid"
)


class Signal:
    """A value that changes whenever anything is committed (None: cannot tell now)."""

    #: Read in the aggregate's own statement; empty: read just before it.
    columns: tuple[Any, ...] = ()

    async def now(self) -> Hashable | None:
        raise NotImplementedError

    def of(self, values: Sequence[Any]) -> Hashable | None:
        return None


class DataVersion(Signal):
    """SQLite's ``PRAGMA data_version`` on a connection of our own (see the module)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()  # (a sync engine's provider serves several threads)
        self._db: sqlite3.Connection | None = None
        self._pid = 0
        self._file: tuple[int, int] = (0, 0)
        self._opened = 0  # values of two connections never compare equal
        self._inherited: list[sqlite3.Connection] = []  # a parent's: never used nor closed
        self._closing: weakref.finalize[Any, Any] | None = None
        #: Another file renamed over the path: the pool's connections may still read the
        #: old one (and later the new one, with no commit to tell), so never again.
        self._replaced = False

    async def now(self) -> Hashable | None:
        with self._lock:
            try:
                found = os.stat(self._path)
                file = (found.st_dev, found.st_ino)
                if self._db is not None and self._file != file:
                    self._replaced = True
                    self._drop()  # (the old file's space is freed only once closed)
                if self._replaced:
                    return None
                if self._db is None or self._pid != os.getpid() or self._file != file:
                    self._open(file)
                assert self._db is not None
                value = self._db.execute("PRAGMA data_version").fetchone()[0]
            except (OSError, sqlite3.Error):
                return None  # (busy while a writer commits, say): the aggregate answers
            return self._opened, value

    def _drop(self) -> None:
        if self._db is not None:
            if self._closing is not None:
                self._closing.detach()
            if self._pid == os.getpid():
                self._db.close()
            else:
                self._inherited.append(self._db)  # SQLite forbids using it across fork()
        self._db = None

    def _open(self, file: tuple[int, int]) -> None:
        self._drop()
        # Autocommit (no transaction held open), never waiting on a writer's lock; mode=rw
        # never creates the file (gone since the stat: a deploy removing it).
        self._db = sqlite3.connect(
            f"{Path(self._path).absolute().as_uri()}?mode=rw",
            timeout=0,
            isolation_level=None,
            check_same_thread=False,
            uri=True,
        )
        self._pid, self._file = os.getpid(), file
        self._opened += 1
        # Closed with this object (Python 3.13 warns of a connection left to the collector).
        self._closing = weakref.finalize(self, _close, self._db, self._pid)


def _close(db: sqlite3.Connection, pid: int) -> None:
    if pid == os.getpid():
        db.close()


class Snapshot(Signal):
    """PostgreSQL's snapshot, with what tells a standby or a restarted server apart.

    ``columns`` read, in this order, the snapshot as text, ``pg_is_in_recovery()`` and
    ``pg_postmaster_start_time()`` as text; ``read()`` runs them alone."""

    def __init__(
        self, columns: tuple[Any, ...], read: Callable[[], Awaitable[Sequence[Any]]]
    ) -> None:
        self.columns = columns
        self._read = read

    async def now(self) -> Hashable | None:
        try:
            values = await self._read()
        except Exception:  # (a failover under way, say): the aggregate answers
            return None
        return self.of(values)

    def of(self, values: Sequence[Any]) -> Hashable | None:
        if len(values) != 3:
            return None  # (an answer read without them: nothing to keep it by)
        snapshot, in_recovery, started = values
        return None if in_recovery else (str(snapshot), str(started))


async def sqlite_path(run: Run, tables: Sequence[tuple[str | None, str]]) -> str | None:
    """The file to watch when every ``(schema, name)`` is a real table of SQLite's main
    database (not attached, not a view, not virtual, not temporary); else None."""
    if not tables or any(schema not in (None, "main") for schema, _ in tables):
        return None  # an attached database: its commits are not main's data_version
    listed = await run("PRAGMA database_list", ())
    path = next((str(row[2]) for row in listed if row[1] == "main"), "")
    if not path:
        return None  # in memory, or a temporary database: no file to watch
    for _, name in tables:
        found = await run("SELECT type, sql FROM sqlite_master WHERE name = %s", (name,))
        if [row[0] for row in found] != ["table"]:
            return None  # a view, or not found (a temporary table)
        if str(found[0][1] or "").upper().startswith("CREATE VIRTUAL"):
            return None  # a virtual table may read anything
    return path


async def postgresql_snapshot_function(
    run: Run, tables: Sequence[tuple[str | None, str]]
) -> str | None:
    """The snapshot function, when every ``(schema, name)`` is a table of this server
    (partitions and children included); else None."""
    if not tables:
        return None
    for schema, name in tables:
        found = await run(CATALOG_KINDS, (name, schema, schema))
        if not found or any(str(row[0]) not in ("r", "p", "m") for row in found):
            return None  # a view or a foreign table (another server's commits)
    numbered = await run("SELECT current_setting('server_version_num')", ())
    modern = int(numbered[0][0]) >= 130000
    return "pg_current_snapshot" if modern else "txid_current_snapshot"


class KeptCommits:
    """Answers kept with the commit signal they were read at (see the module).

    A subclass finds the signal (:meth:`_probe`) and says which errors of it are
    passing (:meth:`_passing`)."""

    def __init__(self) -> None:
        self._signal: Signal | None = None
        self._resolved = False
        #: key -> (signal, answer), the most recent last
        self._seen: dict[Hashable, tuple[Hashable, Any]] = {}

    def clear(self) -> None:
        self._seen.clear()

    @property
    def applies(self) -> bool | None:
        """Whether the fast path is taken (None: not known before the first version)."""
        return self._signal is not None if self._resolved else None

    async def read(
        self,
        key: Hashable,
        query: Callable[[Sequence[Any]], Awaitable[tuple[_T, Sequence[Any]]]],
    ) -> _T:
        """``query(extra columns)``'s answer, or the kept one when nothing was committed
        since it was read. ``query`` gives its answer and the extra columns' values."""
        signal = await self._resolve()
        if signal is None:
            return (await query(()))[0]
        seen = self._seen.get(key)
        now = await signal.now() if seen is not None or not signal.columns else None
        # Still kept after the await (forget() may have dropped it): the most recent last.
        kept = seen is not None and now is not None and seen[0] == now
        if kept and self._seen.pop(key, None) is seen:
            assert seen is not None
            self._seen[key] = seen
            return seen[1]  # type: ignore[no-any-return]
        answer, values = await query(signal.columns)
        at = signal.of(values) if signal.columns else now
        self._seen.pop(key, None)
        if at is not None:
            self._seen[key] = (at, answer)
            while len(self._seen) > _MOST:
                del self._seen[next(iter(self._seen))]
        return answer

    async def _resolve(self) -> Signal | None:
        if not self._resolved:
            try:
                self._signal = await self._probe()
            except Exception as exc:
                if self._passing(exc):
                    return None  # (the server unreachable, say): asked again next time
                logger.info("version checks read the rows every time: %s", exc)
                self._signal = None
            self._resolved = True
        return self._signal

    async def _probe(self) -> Signal | None:
        raise NotImplementedError

    def _passing(self, exc: Exception) -> bool:
        """True: ``exc`` passes (ask again next time); False: never ask again (logged).
        Raises ``exc`` when it is no database error."""
        raise exc
