"""Read-only SQLite access shared by the rocpd and rocm-trace-lite readers."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from hotspot.errors import bad_file

SQLITE_MAGIC = b"SQLite format 3\x00"


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


def connect_ro(path: Path) -> sqlite3.Connection:
    """Open read-only (never creates or modifies the user's file)."""
    if not path.is_file():
        raise bad_file(path, "does not exist or is not a file", "check the path")
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise bad_file(path, f"cannot open as SQLite ({exc})") from exc
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


def query(conn: sqlite3.Connection, path: Path, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.Error as exc:
        raise bad_file(path, f"query failed ({exc})", "the database may be from an unsupported "
                       "profiler version or damaged") from exc


def as_int(path: Path, value: object, field: str) -> int | None:
    """An INTEGER column value, validated (SQLite is dynamically typed)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise bad_file(path, f"column {field} holds {value!r}, expected an integer")
