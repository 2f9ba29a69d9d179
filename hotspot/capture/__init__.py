"""The capture layer: the only package that knows rocprofv3's output layouts and opens input files.

Readers for the ATT ui_output dispatch dir (code.json, wave files, occupancy.json, realtime.json,
snapshots.json), the side files rocprofv3 writes beside it (sidefiles.py SIDE_FILES: agent info,
kernel trace, counter collection, rocpd and results.json), the kernel-level traces of `kernels`
(trace/), the counter files of `pmc` (counters/), saved hotspot JSON (saved.py), dispatch discovery
and selection. `open_capture(dir)` gives the `Capture` an analysis starts from (open.py).

Code outside this package imports only the names below, from `hotspot.capture` itself
(tests/test_layering.py checks it). They are imported on first use: a command answered from the
result cache, or one that never reads a rocpd database, does not pay for the readers it skips.
"""

from __future__ import annotations

import importlib

# public name -> the module of this package that defines it
_PUBLIC: dict[str, str] = {
    # the Capture of one dispatch dir, and its parts
    "Capture": "open", "open_capture": "open",
    "CodeRow": "model", "CodeTable": "model", "KernelSymbol": "model",
    "DispatchDir": "layout", "WaveFile": "layout", "find_dispatch_dirs": "layout",
    "open_dispatch": "layout", "parse_dir_name": "layout", "require_dispatch_dirs": "layout",
    "EMPTY_TRACE_HINT": "codejson", "read_code_table": "code_table",
    "SourceLoc": "source", "SourceRef": "source", "NO_SOURCE": "source", "parse_source": "source",
    "SourceMap": "snapshots", "load_source_map": "snapshots", "parse_source_maps": "snapshots",
    "read_source_lines": "snapshots",
    "detect_arch": "target",
    "read_dispatch_realtime": "realtime",
    "KernelRows": "dispatch_rows", "kernel_names": "dispatch_rows", "pick_row": "dispatch_rows",
    "same_kernel": "dispatch_rows",
    "check_meta": "sidefiles",
    "ISSUED_COLUMNS": "pcsampling", "NOT_ISSUED_REASONS": "pcsampling",
    "REASON_COLUMNS": "pcsampling", "STALLED_COLUMNS": "pcsampling", "first_present": "pcsampling",
    "is_runtime_kernel": "runtime_kernels",
    # wave files (the wave pass reads their bytes in worker processes)
    "DECODER_CATEGORIES": "waves", "SHORT_WAVE_MAX_RECORDS": "waves", "WAVE_STATES": "waves",
    "Wave": "waves", "WaveTotals": "waves", "read_wave": "waves", "read_wave_bytes": "waves",
    "wave_from_doc": "waves", "wave_of_bytes": "waves", "WaitcntEdges": "waves",
    "check_wave": "wavecheck", "record_ranges": "wavecheck", "scanned_ranges": "wavecheck",
    "arch_hints": "target",
    "parse_json": "files",
    # choosing among dispatch dirs
    "DispatchCandidate": "select", "IDLE_SLICE_EXECUTED_SHARE": "select", "OK": "select",
    "choose_dispatch": "select", "kernel_name": "select", "pct": "select",
    "raise_none_usable": "select", "rank_dispatches": "select", "selection_reason": "select",
    "usable_ranking": "select",
    # one command, one read of each file
    "capture_session": "session", "keep_bytes": "session", "share": "session", "shared": "session",
    "note_inputs": "session",
    # kernel-level traces (`kernels`, the sweep's traced duration)
    "DispatchRecord": "trace.records", "KernelStatRecord": "trace.records",
    "MarkerRecord": "trace.records",
    "KERNEL_STATS": "trace.detect", "KernelInputs": "trace.inputs", "load_markers": "trace.inputs",
    "read_dispatches": "trace.inputs", "resolve_kernel_inputs": "trace.inputs",
    "read_kernel_stats_csv": "trace.kernel_stats", "read_kernel_trace_csv": "trace.kernel_trace",
    # counter files (`pmc`)
    "CounterFile": "counters.model", "DispatchCounters": "counters.model",
    "PeakHint": "counters.model", "load_counter_files": "counters.discover",
    # saved hotspot JSON (diff and report read a saved analyze output)
    "read_saved_json": "saved",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> object:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'hotspot.capture' has no public name {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
