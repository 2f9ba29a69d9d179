"""Read-only SQLite access shared by the rocpd and rocm-trace-lite readers."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hotspot.errors import InputError, bad_file

SQLITE_MAGIC = b"SQLite format 3\x00"

# Every read of a database is bounded: a view is a query the file's author wrote, and a recursive
# CTE that never ends or a cross join of 10**12 rows would otherwise hang the command. A connection
# stops (sqlite3.OperationalError "interrupted", reported as exit 3 naming the file) after this many
# SQLite VM steps or this much wall time, whichever comes first; a real rocpd database of a million
# dispatches reads in ~1e8 steps. Memory stays bounded without a limit of ours: SQLite's sorter
# keeps cache_size pages (2 MiB by default) in memory and spills the rest to temporary files, which
# it deletes when the statement ends.
SQL_STEP_LIMIT = 2_000_000_000
SQL_TIME_LIMIT_S = 20.0
PROGRESS_EVERY = 10_000  # VM steps between two checks of the bound


class _Cursor(sqlite3.Cursor):
    """Re-raises an exception that arrived inside the progress handler: SQLite discards what a
    callback raises, so a Ctrl-C or SIGTERM delivered while the handler ran (Python runs signal
    handlers at the next bytecode, often there) would otherwise be lost."""

    def _guard(self, call: Callable[..., Any], *args: object) -> Any:
        try:
            return call(*args)
        except sqlite3.Error as exc:
            conn = self.connection
            assert isinstance(conn, BoundedConnection)  # the only connection that makes this cursor
            pending = conn.pending
            if pending is not None:
                conn.pending = None
                raise pending from None
            if "interrupted" in str(exc) and not conn.over_budget:
                # the progress handler raised before its own try (a signal handler ran on entry)
                from hotspot.signals import lost_interrupt

                raise lost_interrupt() from None
            raise

    def execute(self, sql: str, parameters: Any = ()) -> _Cursor:
        cursor: _Cursor = self._guard(super().execute, sql, parameters)
        return cursor

    def fetchone(self) -> Any:
        return self._guard(super().fetchone)

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        rows: list[Any] = self._guard(super().fetchmany, size)
        return rows

    def fetchall(self) -> list[Any]:
        rows: list[Any] = self._guard(super().fetchall)
        return rows


class BoundedConnection(sqlite3.Connection):
    """A connection whose statements stop after SQL_STEP_LIMIT steps or SQL_TIME_LIMIT_S
    seconds; `over_budget` says which bound stopped it ("" while within them); `pending` holds an
    exception (a signal) raised while the progress handler ran, re-raised by the cursor."""

    over_budget: str = ""
    pending: BaseException | None = None

    def cursor(self, factory: Any = _Cursor) -> Any:  # a _Cursor unless told otherwise
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = ()) -> _Cursor:
        cursor: _Cursor = self.cursor().execute(sql, parameters)
        return cursor

    def bound(self) -> "BoundedConnection":
        started = time.monotonic()
        steps = 0
        step_limit, time_limit = SQL_STEP_LIMIT, SQL_TIME_LIMIT_S

        def check() -> int:
            nonlocal steps
            try:
                steps += PROGRESS_EVERY
                if steps > step_limit:
                    self.over_budget = f"more than {step_limit:,} query steps"
                elif time.monotonic() - started > time_limit:
                    self.over_budget = f"more than {time_limit:g} s"
                return 1 if self.over_budget else 0
            except BaseException as exc:  # a signal's exception: stop the query, raise it after
                self.pending = exc
                return 1

        self.set_progress_handler(check, PROGRESS_EVERY)
        return self


class QueryBudgetError(InputError):
    """A statement stopped by the read bound: exit 3 naming the file. Readers that fall back to
    other sources on a bad database (the arch hints) let this one through: the user asked for a
    file that cannot be read in bounded time, and is told so."""


def budget_error(conn: sqlite3.Connection, path: Path, exc: BaseException) -> BaseException:
    """The error to raise for a failed statement: a bound that stopped it is named as such."""
    over = getattr(conn, "over_budget", "")
    if over:
        return QueryBudgetError(f"{path}: reading it took {over}: a view that never ends (a recursive "
                                "query) or a join far larger than any profile",
                                "pass the database rocprofv3 wrote, or export its tables to CSV with rocpd")
    return exc


def _connect(target: str) -> BoundedConnection:
    return sqlite3.connect(target, uri=True, factory=BoundedConnection).bound()


def is_sqlite(path: Path) -> bool:
    from hotspot.capture.files import open_input
    from hotspot.errors import InputError

    try:
        fd = open_input(path, confine=False)  # a FIFO or device is refused, not read
    except InputError:
        return False
    try:
        return os.read(fd, len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)


# Beside a database in WAL mode, or one with an unfinished transaction, these hold data the main
# file does not have yet.
_HOT_SIDE_FILES = ("-wal", "-journal")


def _uri(path: Path) -> str:
    return f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"


def open_readonly(path: Path) -> sqlite3.Connection:
    """Open a database without writing anything beside it. `mode=ro` alone is not enough: on a
    WAL-mode database in a writable folder SQLite still creates `-shm`/`-wal` there. `immutable=1`
    makes SQLite read the file as it is, with no locks and no side files. When a non-empty
    `-wal`/`-journal` is beside it (the writer crashed or is still running), the main file alone
    is not the whole database: the files are copied to a private folder, the copy is brought up
    to date there, and that is what is read. Raises sqlite3.Error."""
    hot = [path.with_name(path.name + s) for s in _HOT_SIDE_FILES]
    if not any(_nonempty(h) for h in hot):
        return _connect(_uri(path))
    private = Path(tempfile.mkdtemp(prefix="hotspot-sqlite-"))
    try:
        copy = private / path.name
        shutil.copyfile(path, copy)
        for h in hot:
            if _nonempty(h):
                shutil.copyfile(h, private / h.name)
        # Replays the WAL (or rolls the journal back) into the copy, then leaves one plain file.
        with sqlite3.connect(str(copy)) as rw:
            rw.execute("PRAGMA journal_mode=DELETE").fetchone()
        rw.close()
        # The connection keeps its descriptor: the private folder can go at once (nothing to clean
        # up later, even if the command is killed while reading).
        return _connect(_uri(copy))
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _nonempty(path: Path) -> bool:
    try:
        return os.stat(path).st_size > 0
    except OSError:
        return False


def connect_ro(path: Path) -> sqlite3.Connection:
    """Open read-only (never creates or modifies the user's file, nor anything beside it)."""
    if not path.is_file():
        raise bad_file(path, "does not exist or is not a file", "check the path")
    try:
        conn = open_readonly(path)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise bad_file(path, f"cannot open as SQLite ({exc})") from exc
    except OSError as exc:  # the private copy of a database with a hot -wal/-journal
        raise bad_file(path, f"cannot copy it to read it with its -wal/-journal ({exc.strerror})",
                       "free space in the temporary folder (TMPDIR)") from exc
    return conn


def object_names(conn: sqlite3.Connection) -> set[str]:
    """Lower-case names of all tables and views."""
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
    return {str(r[0]).lower() for r in rows}


def columns(conn: sqlite3.Connection, name: str) -> set[str]:
    """Lower-case column names of a table or view (empty when it does not exist)."""
    try:
        rows = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
    except sqlite3.Error:
        return set()
    return {str(r[1]).lower() for r in rows}


def query(conn: sqlite3.Connection, path: Path, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.Error as exc:
        err = budget_error(conn, path, exc)
        if err is not exc:
            raise err from None
        raise bad_file(path, f"query failed ({exc})", "the database may be from an unsupported "
                       "profiler version or damaged") from exc


# rocpd stores ids, nanosecond timestamps, sizes and counts as 64-bit integers, never negative.
INTEGER_LIMIT = 1 << 64


def as_int(path: Path, value: object, field: str, minimum: int = 0) -> int | None:
    """An INTEGER column value, validated (SQLite is dynamically typed): a whole number in
    `minimum`..2**64-1, else the file and field are named (exit 3)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int):
        raise bad_file(path, f"column {field} holds {value!r}, expected an integer", code="bad-value")
    if not minimum <= value < INTEGER_LIMIT:
        raise bad_file(path, f"column {field} holds {value}, outside {minimum}..2**64-1 (no profiler "
                       "writes such an id, timestamp or count)", "pass the database rocprofv3 wrote",
                       code="bad-value")
    return value
