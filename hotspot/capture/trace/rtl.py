"""Reader for rocm-trace-lite `trace.db` files (the older RPD schema, FORMATS.md section 5).

`rocpd_op` holds GPU ops (`gpuId >= 0`; kernels have opType `KernelExecution`) and host roctx
markers (opType `UserMarker`, `gpuId = -1`). Names and op types are ids into `rocpd_string`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hotspot.capture.trace._sqlite import (
    as_int,
    columns,
    connect_ro,
    object_names,
    query,
)
from hotspot.capture.trace.records import DispatchRecord, MarkerRecord
from hotspot.errors import bad_file

SOURCE_KIND = "rocm-trace-lite"
KERNEL_OP_TYPE = "KernelExecution"
MARKER_OP_TYPE = "UserMarker"
HOST_GPU_ID = -1  # host-side ops (roctx markers) carry gpuId -1
_OP_COLUMNS = {"id", "gpuid", "start", "end", "description_id", "optype_id"}


def _triple(xyz: list[int | None]) -> tuple[int, int, int] | None:
    """(x, y, z) when all three are known."""
    x, y, z = xyz
    return (x, y, z) if x is not None and y is not None and z is not None else None


def _check(conn: sqlite3.Connection, path: Path) -> None:
    if not {"rocpd_op", "rocpd_string"} <= object_names(conn):
        raise bad_file(path, "has no rocpd_op/rocpd_string tables", "is this a rocm-trace-lite trace.db?")
    missing = _OP_COLUMNS - columns(conn, "rocpd_op")
    if missing:
        raise bad_file(path, f"rocpd_op lacks column(s) {', '.join(sorted(missing))}")


def _launch_join(conn: sqlite3.Connection) -> tuple[str, str]:
    """Optional join to the launching API's kernel record (grid, workgroup, kernel name)."""
    names = object_names(conn)
    if not {"rocpd_api_ops", "rocpd_kernelapi"} <= names:
        return "", "NULL AS kname, NULL AS gx, NULL AS gy, NULL AS gz, NULL AS wx, NULL AS wy, NULL AS wz"
    ka = columns(conn, "rocpd_kernelapi")
    api_col = "api_id" if "api_id" in ka else "api_ptr_id" if "api_ptr_id" in ka else None
    if api_col is None or not {"api_id", "op_id"} <= columns(conn, "rocpd_api_ops"):
        return "", "NULL AS kname, NULL AS gx, NULL AS gy, NULL AS gz, NULL AS wx, NULL AS wy, NULL AS wz"

    def col(name: str, alias: str) -> str:
        return f'ka."{name}" AS {alias}' if name.lower() in ka else f"NULL AS {alias}"

    join = (f' LEFT JOIN rocpd_api_ops ao ON ao.op_id = o.id'
            f' LEFT JOIN rocpd_kernelapi ka ON ka."{api_col}" = ao.api_id'
            + (' LEFT JOIN rocpd_string kn ON kn.id = ka.kernelName_id' if "kernelname_id" in ka else ""))
    select = ", ".join([
        "kn.string AS kname" if "kernelname_id" in ka else "NULL AS kname",
        col("gridX", "gx"), col("gridY", "gy"), col("gridZ", "gz"),
        col("workgroupX", "wx"), col("workgroupY", "wy"), col("workgroupZ", "wz"),
    ])
    return join, select


def read_rtl_dispatches(db_path: Path | str) -> list[DispatchRecord]:
    path = Path(db_path)
    conn = connect_ro(path)
    try:
        _check(conn, path)
        join, extra = _launch_join(conn)
        rows = query(conn, path,
                     f'SELECT o.id, o.gpuId, o."start", o."end", d.string AS descr, {extra} '
                     "FROM rocpd_op o JOIN rocpd_string t ON t.id = o.opType_id "
                     f"LEFT JOIN rocpd_string d ON d.id = o.description_id{join} "
                     'WHERE t.string = ? AND o.gpuId >= 0 ORDER BY o."start", o.id',
                     (KERNEL_OP_TYPE,))
    finally:
        conn.close()
    source = f"{SOURCE_KIND}:{path}"
    out: list[DispatchRecord] = []
    seen: set[int] = set()
    for r in rows:
        op_id = as_int(path, r["id"], "rocpd_op.id")
        if op_id in seen:  # several API rows may point at one op
            continue
        seen.add(op_id)  # type: ignore[arg-type]  # None (no id) is a member like any
        name = r["descr"] or r["kname"]
        if not name:
            raise bad_file(path, f"rocpd_op {op_id}: kernel op without a name")
        start = as_int(path, r["start"], "rocpd_op.start")
        end = as_int(path, r["end"], "rocpd_op.end")
        if start is not None and end is not None and end < start:
            raise bad_file(path, f"rocpd_op {op_id}: end {end} is before start {start}")
        gpu = as_int(path, r["gpuId"], "rocpd_op.gpuId", minimum=-1)  # -1: host-side markers
        grid = [as_int(path, r[k], "rocpd_kernelapi.grid") for k in ("gx", "gy", "gz")]
        wg = [as_int(path, r[k], "rocpd_kernelapi.workgroup") for k in ("wx", "wy", "wz")]
        out.append(DispatchRecord(
            kernel_name=str(name), dispatch_id=op_id, start_ns=start, end_ns=end,
            agent=f"GPU {gpu}", gpu_id=gpu, vgpr=None, accum_vgpr=None, sgpr=None, lds_bytes=None,
            lds_includes_dynamic=False, scratch_bytes=None,
            workgroup=_triple(wg), grid=_triple(grid),
            source=source,
        ))
    return out


def read_rtl_markers(db_path: Path | str) -> list[MarkerRecord]:
    path = Path(db_path)
    conn = connect_ro(path)
    try:
        _check(conn, path)
        rows = query(conn, path,
                     'SELECT o."start", o."end", d.string AS name FROM rocpd_op o '
                     "JOIN rocpd_string t ON t.id = o.opType_id "
                     "LEFT JOIN rocpd_string d ON d.id = o.description_id "
                     'WHERE t.string = ? AND o.gpuId = ? ORDER BY o."start", o.id',
                     (MARKER_OP_TYPE, HOST_GPU_ID))
    finally:
        conn.close()
    source = f"{SOURCE_KIND}:{path}"
    out = []
    for r in rows:
        s = as_int(path, r["start"], "rocpd_op.start")
        e = as_int(path, r["end"], "rocpd_op.end")
        if s is None or e is None:
            continue
        out.append(MarkerRecord(name=str(r["name"] or ""), start_ns=s, end_ns=e, source=source))
    return out
