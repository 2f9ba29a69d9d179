"""Reader for rocprofv3 `*_kernel_trace.csv` (one row per dispatch).

Also accepts the long `counter_collection.csv` layouts (one row per dispatch x counter): those rows
are folded back to one record per dispatch. Older layouts lack `Accum_VGPR_Count`, `Kernel_Id` and
the timestamps; the missing fields become None.
"""

from __future__ import annotations

from pathlib import Path

from hotspot.capture.trace._csv import Rows
from hotspot.capture.trace.records import DispatchRecord
from hotspot.errors import bad_file

SOURCE_KIND = "kernel_trace.csv"


def _agent_label(raw: str | None) -> str | None:
    if raw is None or not raw.strip():
        return None
    raw = raw.strip()
    # Old layouts write the bare number; current ones "Agent 4". Keep one spelling.
    return f"Agent {raw}" if raw.isdigit() else raw


def _triple(rows: Rows, row: dict[str, str], base: str) -> tuple[int, int, int] | None:
    x, y, z = (rows.integer(row, f"{base}_{axis}") for axis in ("X", "Y", "Z"))
    if x is not None and y is not None and z is not None:
        return (x, y, z)
    total = rows.integer(row, base)
    # Older layouts give only the flattened size; (n, 1, 1) keeps the product, which is what
    # occupancy and wave counts depend on.
    return (total, 1, 1) if total is not None else None


def read_kernel_trace_csv(path: Path | str) -> list[DispatchRecord]:
    path = Path(path)
    rows = Rows(path)
    source = f"{SOURCE_KIND}:{path}"
    records: list[DispatchRecord] = []
    seen: set[tuple[object, ...]] = set()
    first: dict[tuple[int, str | None], tuple[int, str]] = {}  # (dispatch, agent) -> (line, kernel)
    checked = False
    for row in rows:
        if not checked:
            rows.require("Kernel_Name")
            checked = True
        name = row["kernel_name"]
        if not name.strip():
            raise bad_file(path, f"line {rows.line}: empty Kernel_Name")
        dispatch_id = rows.integer(row, "Dispatch_Id")
        agent = _agent_label(row.get("agent_id"))
        if "counter_name" in rows.columns:
            # Long counter layout: the same dispatch repeats once per counter.
            key = (dispatch_id, agent, rows.integer(row, "Correlation_Id"))
            if dispatch_id is not None and key in seen:
                continue
            seen.add(key)
        elif dispatch_id is not None:
            # one row per dispatch: a repeat would be counted twice downstream, so it is refused
            # with both rows named (two runs' files concatenated?), never summed
            prev = first.setdefault((dispatch_id, agent), (rows.line, name))
            if prev[0] != rows.line:
                what = (f"on two kernels ({prev[1][:60]!r} and {name[:60]!r})" if prev[1] != name
                        else "twice")
                raise bad_file(path, f"lines {prev[0]} and {rows.line}: Dispatch_Id {dispatch_id} "
                               f"appears {what}", "keep one run's rows per dispatch (files of two "
                               "runs may have been concatenated)", code="conflict")
        start = rows.integer(row, "Start_Timestamp")
        end = rows.integer(row, "End_Timestamp")
        if start is not None and end is not None and end < start:
            raise bad_file(path, f"line {rows.line}: End_Timestamp {end} is before Start_Timestamp {start}")
        records.append(DispatchRecord(
            kernel_name=name,
            dispatch_id=dispatch_id,
            start_ns=start,
            end_ns=end,
            agent=agent,
            gpu_id=None,
            vgpr=rows.integer(row, "VGPR_Count"),
            accum_vgpr=rows.integer(row, "Accum_VGPR_Count"),
            sgpr=rows.integer(row, "SGPR_Count"),
            lds_bytes=rows.integer(row, "LDS_Block_Size"),
            lds_includes_dynamic=False,
            scratch_bytes=rows.integer(row, "Scratch_Size"),
            workgroup=_triple(rows, row, "Workgroup_Size"),
            grid=_triple(rows, row, "Grid_Size"),
            source=source,
            row=rows.line,
        ))
    if not records and rows.columns:
        rows.require("Kernel_Name")
    return records
