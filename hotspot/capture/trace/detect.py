"""Recognise a kernel-level input from its content (CSV header names, SQLite tables), not its name."""

from __future__ import annotations

import os
from pathlib import Path

from hotspot.capture.files import open_input
from hotspot.capture.trace._csv import read_header
from hotspot.capture.trace._sqlite import connect_ro, is_sqlite, object_names
from hotspot.errors import InputError

KERNEL_TRACE = "kernel_trace_csv"
KERNEL_STATS = "kernel_stats_csv"
COUNTER_COLLECTION = "counter_collection_csv"
MARKER_TRACE = "marker_trace_csv"
ROCPD = "rocpd"
RTL = "rocm_trace_lite"
ROCPROF_V1 = "rocprof_v1"

# When a directory holds several kinds, the richest one wins (per-dispatch data with resources first).
PREFERENCE = (ROCPD, KERNEL_TRACE, RTL, KERNEL_STATS, COUNTER_COLLECTION)
# Legacy rocprof (v1) SQLite output: one table per trace domain.
_V1_TABLES = {"kern", "ops"}
_SNIFF_BYTES = 4096
_SEARCH_DEPTH = 2  # rocprofv3 puts files in <dir>/<hostname>/ by default


def detect_kind(path: Path) -> str | None:
    """The input kind of one file, or None when it is none of the kernel-level formats."""
    if not path.is_file():
        return None
    if is_sqlite(path):
        conn = connect_ro(path)
        try:
            names = object_names(conn)
        finally:
            conn.close()
        if "kernels" in names and any(n.startswith("rocpd_kernel_dispatch") for n in names):
            return ROCPD
        if {"rocpd_op", "rocpd_string"} <= names:
            return RTL
        if names & _V1_TABLES:
            return ROCPROF_V1
        return None
    try:
        fd = open_input(path, confine=False)  # a FIFO or device is refused, not read
    except InputError:
        return None
    try:
        head = os.read(fd, _SNIFF_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    if b"\x00" in head:
        return None
    cols = {c.strip().lower() for c in read_header(path)}
    if "kernel_name" in cols and "counter_name" in cols:
        return COUNTER_COLLECTION
    if "kernel_name" in cols:
        return KERNEL_TRACE
    if {"name", "calls", "totaldurationns"} <= cols:
        return KERNEL_STATS
    if {"function", "start_timestamp", "end_timestamp"} <= cols:
        return MARKER_TRACE
    return None


def scan_directory(root: Path) -> dict[str, list[Path]]:
    """Kernel-level files under `root` (up to two levels deep), grouped by kind, sorted by path."""
    found: dict[str, list[Path]] = {}
    level = [root]
    for _ in range(_SEARCH_DEPTH + 1):
        nxt: list[Path] = []
        for folder in level:
            try:
                entries = sorted(folder.iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir():
                    nxt.append(entry)
                elif entry.suffix.lower() in (".csv", ".db", ".sqlite", ".sqlite3", ".rpd"):
                    kind = detect_kind(entry)
                    if kind is not None:
                        found.setdefault(kind, []).append(entry)
        level = nxt
    return found


def sibling_marker_traces(path: Path) -> list[Path]:
    """Marker trace CSVs beside a kernel trace CSV (rocprofv3 writes them into the same folder)."""
    return [p for p in sorted(path.parent.glob("*.csv")) if p != path and detect_kind(p) == MARKER_TRACE]
