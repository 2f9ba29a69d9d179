"""rocpd SQLite (`*_results.db`) counter reader: the `counters_collection` view (FORMATS.md §4)."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

from hotspot.capture.counters.model import ArchHint, CounterFile
from hotspot.capture.counters.read_csv import (
    DispatchAccumulator,
    canonical_counter,
    finish_dispatches,
)
from hotspot.capture.trace._sqlite import budget_error, open_readonly
from hotspot.errors import bad_file

VALUE_LIMIT = 1 << 64  # counters, timestamps and dispatch ids are unsigned 64-bit values
_NEEDED = ("dispatch_id", "kernel_name", "counter_name", "value", "start", "end", "agent_id")


def _connect(path: Path) -> sqlite3.Connection:
    try:
        # Read-only and immutable: nothing is created or modified beside the file, even in WAL mode.
        con = open_readonly(path)
        con.execute("select count(*) from sqlite_master").fetchone()
        return con
    except sqlite3.DatabaseError as exc:
        raise bad_file(path, f"not a readable SQLite database ({exc})",
                       "pass a rocpd *_results.db written by rocprofv3 --output-format rocpd") from None
    except OSError as exc:  # the private copy of a database with a hot -wal/-journal
        raise bad_file(path, f"cannot copy it to read it with its -wal/-journal ({exc.strerror})",
                       "free space in the temporary folder (TMPDIR)") from None


def read_rocpd(path: Path) -> CounterFile:
    con = _connect(path)
    try:
        has_view = con.execute("select 1 from sqlite_master where name = 'counters_collection'"
                               ).fetchone()
        if not has_view:
            raise bad_file(path, "not a rocpd counter database (no counters_collection view)",
                           "pass a rocpd *_results.db from a run with counter collection")
        columns = {r[1].lower() for r in con.execute("pragma table_info(counters_collection)")}
        for col in _NEEDED:
            if col not in columns:
                raise bad_file(path, f"counters_collection has no column {col}",
                               "unsupported rocpd schema version; export CSV with rocpd instead")
        try:
            rows = con.execute(
                "select dispatch_id, kernel_name, counter_name, value, start, end, agent_id "
                "from counters_collection order by dispatch_id").fetchall()
        except sqlite3.DatabaseError as exc:
            err = budget_error(con, path, exc)
            if err is not exc:
                raise err from None
            raise bad_file(path, f"cannot query counters_collection ({exc})",
                           "the database may be incomplete; re-run the profile") from None
        accs: dict[int, DispatchAccumulator] = {}
        names: set[str] = set()
        agents: set[int] = set()
        any_nonzero = False
        for dispatch, kernel, name, value, start, end, agent in rows:
            if not isinstance(dispatch, int) or not 0 <= dispatch < VALUE_LIMIT:
                raise bad_file(path, f"field dispatch_id is not a dispatch id ({dispatch!r})",
                               "the database is malformed", code="bad-value")
            if value is None:
                continue
            if not isinstance(value, (int, float)) or not math.isfinite(float(value)) \
                    or not 0 <= value < VALUE_LIMIT:
                raise bad_file(path, f"field value of counter {name} (dispatch {dispatch}) is not a "
                               f"number ({value!r})", "the database is malformed")
            names.add(str(name))
            agents.add(agent)
            any_nonzero = any_nonzero or value != 0
            acc = accs.get(dispatch)
            if acc is None:
                acc = accs[dispatch] = DispatchAccumulator(str(kernel or ""), _num(start), _num(end))
            canon = canonical_counter(str(name))
            if canon:
                acc.add(canon[0], canon[1], float(value))
        if not names:
            raise bad_file(path, "no counter rows (counters_collection is empty)",
                           "the run collected no counters; run rocprofv3 with --pmc")
        hints = _agent_hints(con, path, agents)
    finally:
        con.close()
    return CounterFile(path=path, layout="rocpd", dispatches=finish_dispatches(accs),
                       counter_names=frozenset(names), all_zero=not any_nonzero,
                       arch_hints=tuple(ArchHint(a, "rocpd rocpd_info_agent.name", p) for a, p in hints),
                       product_names=tuple(p for _, p in hints if p))


def _num(value: object) -> float | None:
    """A timestamp: None when absent or not a 64-bit nanosecond count (no bandwidth from it)."""
    if isinstance(value, (int, float)) and math.isfinite(float(value)) and 0 <= value < VALUE_LIMIT:
        return float(value)
    return None


def _agent_hints(con: sqlite3.Connection, path: Path, agents: set[int]) -> list[tuple[str, str | None]]:
    """(gfx name, product name) of the agents the counters were collected on."""
    try:
        rows = con.execute("select id, name, product_name from rocpd_info_agent").fetchall()
    except sqlite3.DatabaseError as exc:
        if getattr(con, "over_budget", ""):
            raise budget_error(con, path, exc) from None
        return []
    found: dict[str, str | None] = {}
    for agent_id, name, product in rows:
        if agent_id in agents and isinstance(name, str) and name.startswith("gfx"):
            found.setdefault(name, product if isinstance(product, str) else None)
    return sorted(found.items())
