"""Reader for rocprofv3 rocpd SQLite databases (`*_results.db`), through their plain-named views.

Physical tables carry a UUID suffix; the views `kernels`, `regions` and `rocpd_info_agent` hide it.
`kernels.lds_size` is the dispatch's group segment size, which includes dynamic LDS.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hotspot.capture.trace._sqlite import as_int, columns, connect_ro, query
from hotspot.capture.trace.records import DispatchRecord, MarkerRecord
from hotspot.errors import bad_file

SOURCE_KIND = "rocpd"
# roctx ranges land in `regions` under these categories (push/pop and start/stop ranges);
# MARKER_CONTROL_API / MARKER_NAME_API are profiler controls and thread names, not phases.
MARKER_CATEGORIES = ("MARKER_CORE_API", "MARKER_CORE_RANGE_API")
_KERNEL_COLUMNS = ("name", "start", "end")


def read_rocpd_agents(db_path: Path | str) -> list[dict[str, Any]]:
    """Agents (CPU and GPU) as dicts: id, name (e.g. gfx942), product_name, type, absolute_index,
    logical_index, type_index (whatever of these the database has)."""
    path = Path(db_path)
    conn = connect_ro(path)
    try:
        have = columns(conn, "rocpd_info_agent")
        if not have:
            raise bad_file(path, "has no rocpd_info_agent view", "is this a rocpd database?")
        wanted = [c for c in ("id", "name", "product_name", "type", "absolute_index", "logical_index",
                              "type_index") if c in have]
        cols = ", ".join(f'"{c}"' for c in wanted)
        order = ' ORDER BY "absolute_index"' if "absolute_index" in have else ""
        return [dict(zip(wanted, tuple(r))) for r in
                query(conn, path, f"SELECT {cols} FROM rocpd_info_agent{order}")]
    finally:
        conn.close()


def read_rocpd_dispatches(db_path: Path | str) -> list[DispatchRecord]:
    path = Path(db_path)
    conn = connect_ro(path)
    try:
        have = columns(conn, "kernels")
        if not have:
            raise bad_file(path, "has no `kernels` view", "is this a rocprofv3 rocpd database?")
        missing = [c for c in _KERNEL_COLUMNS if c not in have]
        if missing:
            raise bad_file(path, f"`kernels` view lacks column(s) {', '.join(missing)}")
        agent_names = _agent_names(conn, path)
        rows = query(conn, path, 'SELECT * FROM kernels ORDER BY "start", "dispatch_id"')
    finally:
        conn.close()
    source = f"{SOURCE_KIND}:{path}"
    out: list[DispatchRecord] = []
    for r in rows:
        get = {k.lower(): r[k] for k in r.keys()}

        def num(field: str) -> int | None:
            return as_int(path, get.get(field), f"kernels.{field}")

        def triple(prefix: str) -> tuple[int, int, int] | None:
            x, y, z = (num(f"{prefix}_{a}") for a in "xyz")
            return (x, y, z) if x is not None and y is not None and z is not None else None

        name = get.get("name")
        if not isinstance(name, str) or not name:
            raise bad_file(path, f"kernels row {get.get('id')} has no kernel name")
        start, end = num("start"), num("end")
        if start is not None and end is not None and end < start:
            raise bad_file(path, f"kernels row {get.get('id')}: end {end} is before start {start}")
        abs_index = num("agent_abs_index")
        out.append(DispatchRecord(
            kernel_name=name,
            dispatch_id=num("dispatch_id"),
            start_ns=start,
            end_ns=end,
            agent=agent_names.get(abs_index) if abs_index is not None else None,
            gpu_id=num("agent_type_index"),
            vgpr=num("vgpr_count"),
            accum_vgpr=num("accum_vgpr_count"),
            sgpr=num("sgpr_count"),
            lds_bytes=num("lds_size"),
            lds_includes_dynamic="lds_size" in get,
            scratch_bytes=num("scratch_size"),
            workgroup=triple("workgroup"),
            grid=triple("grid"),
            source=source,
            row=num("id"),
        ))
    return out


def read_rocpd_markers(db_path: Path | str) -> list[MarkerRecord]:
    """roctx ranges from the `regions` view (empty when markers were not traced)."""
    path = Path(db_path)
    conn = connect_ro(path)
    try:
        have = columns(conn, "regions")
        if not {"category", "name", "start", "end"} <= have:
            return []
        marks = ", ".join("?" for _ in MARKER_CATEGORIES)
        rows = query(conn, path, f'SELECT name, "start", "end" FROM regions WHERE category IN ({marks}) '
                     'ORDER BY "start", name', MARKER_CATEGORIES)
    finally:
        conn.close()
    source = f"{SOURCE_KIND}:{path}"
    out = []
    for name, start, end in rows:
        s = as_int(path, start, "regions.start")
        e = as_int(path, end, "regions.end")
        if s is None or e is None:
            continue
        out.append(MarkerRecord(name=str(name), start_ns=s, end_ns=e, source=source))
    return out


def _agent_names(conn: sqlite3.Connection, path: Path) -> dict[int, str]:
    have = columns(conn, "rocpd_info_agent")
    if not {"absolute_index", "name"} <= have:
        return {}
    rows = query(conn, path, "SELECT absolute_index, name FROM rocpd_info_agent")
    return {int(a): str(n) for a, n in rows if a is not None}
