"""Which kernel-level inputs `hotspot kernels` reads from a path (a file recognised by its content, or
the richest kind a folder holds), and their readers by kind."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

from hotspot.capture.trace.detect import (
    COUNTER_COLLECTION,
    KERNEL_TRACE,
    MARKER_TRACE,
    PREFERENCE,
    ROCPD,
    ROCPROF_V1,
    RTL,
    detect_kind,
    scan_directory,
    sibling_marker_traces,
)
from hotspot.capture.trace.kernel_trace import read_kernel_trace_csv
from hotspot.capture.trace.marker_trace import read_marker_trace_csv
from hotspot.capture.trace.records import DispatchRecord, MarkerRecord
from hotspot.capture.trace.rocpd import read_rocpd_dispatches, read_rocpd_markers
from hotspot.capture.trace.rtl import read_rtl_dispatches, read_rtl_markers
from hotspot.errors import bad_file
from hotspot.record import record

_KINDS_HINT = ("pass a rocprofv3 *_kernel_stats.csv / *_kernel_trace.csv, a rocpd *_results.db, "
               "a rocm-trace-lite trace.db, or the folder holding them")
_DISPATCH_READERS = {
    KERNEL_TRACE: read_kernel_trace_csv,
    COUNTER_COLLECTION: read_kernel_trace_csv,
    ROCPD: read_rocpd_dispatches,
    RTL: read_rtl_dispatches,
}
_MARKER_READERS = {ROCPD: read_rocpd_markers, RTL: read_rtl_markers}


@record(frozen=False)
class KernelInputs:
    kind: str
    files: list[Path]
    marker_files: list[Path] = field(default_factory=list)  # separate marker CSVs (CSV inputs only)


def _refuse_v1(path: Path) -> None:
    raise bad_file(path, "is a legacy rocprof (v1) SQLite database (KERN/OPS tables), which hotspot "
                   "does not read", "re-run with rocprofv3 --kernel-trace --stats (CSV or rocpd output)",
                   code="unsupported-format")


def resolve_kernel_inputs(path: Path) -> KernelInputs:
    if not path.exists():
        raise bad_file(path, "does not exist", _KINDS_HINT)
    if path.is_dir():
        found = scan_directory(path)
        for preferred in PREFERENCE:
            if preferred in found:
                return KernelInputs(preferred, found[preferred], found.get(MARKER_TRACE, []))
        if ROCPROF_V1 in found:
            _refuse_v1(found[ROCPROF_V1][0])
        raise bad_file(path, "holds no kernel-level trace (searched two levels deep)", _KINDS_HINT)
    kind = detect_kind(path)
    if kind == ROCPROF_V1:
        _refuse_v1(path)
    if kind == MARKER_TRACE:
        raise bad_file(path, "is a marker (roctx) trace without kernels",
                       "pass the kernel trace beside it; --by-marker picks the markers up")
    if kind is None:
        raise bad_file(path, "is not a kernel stats/trace CSV, rocpd database or rocm-trace-lite "
                       "trace.db (recognised from the CSV header or the SQLite tables)", _KINDS_HINT,
                       code="unsupported-format")
    markers = sibling_marker_traces(path) if kind in (KERNEL_TRACE, COUNTER_COLLECTION) else []
    return KernelInputs(kind, [path], markers)


def read_dispatches(kind: str, path: Path) -> list[DispatchRecord]:
    """The dispatches of one file of a per-dispatch kind (not kernel stats)."""
    return _DISPATCH_READERS[kind](path)


def load_markers(inputs: KernelInputs, run: Path) -> list[MarkerRecord]:
    """The roctx ranges of one run: those in its database, or the marker CSVs in its folder."""
    reader = _MARKER_READERS.get(inputs.kind)
    markers: list[MarkerRecord] = []
    if reader is not None:
        markers.extend(reader(run))
    for f in inputs.marker_files:
        if f.parent == run.parent:
            markers.extend(read_marker_trace_csv(f))
    return markers
