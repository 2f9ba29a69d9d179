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
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the checker sees the real names (re-exported); at run time they are imported on first use
    from hotspot.capture.codejson import (
        EMPTY_TRACE_HINT as EMPTY_TRACE_HINT,
    )
    from hotspot.capture.code_table import read_code_table as read_code_table
    from hotspot.capture.counters.discover import load_counter_files as load_counter_files
    from hotspot.capture.counters.model import (
        CounterFile as CounterFile, DispatchCounters as DispatchCounters, PeakHint as PeakHint,
    )
    from hotspot.capture.dispatch_rows import (
        KernelRows as KernelRows, kernel_names as kernel_names, pick_row as pick_row,
        same_kernel as same_kernel,
    )
    from hotspot.capture.files import parse_json as parse_json
    from hotspot.capture.layout import (
        DispatchDir as DispatchDir, WaveFile as WaveFile, WaveFiles as WaveFiles,
        find_dispatch_dirs as find_dispatch_dirs,
        open_dispatch as open_dispatch, parse_dir_name as parse_dir_name,
        require_dispatch_dirs as require_dispatch_dirs,
    )
    from hotspot.capture.model import (
        CodeRow as CodeRow, CodeTable as CodeTable, KernelSymbol as KernelSymbol,
    )
    from hotspot.capture.open import Capture as Capture, open_capture as open_capture
    from hotspot.capture.pcsampling import (
        ISSUED_COLUMNS as ISSUED_COLUMNS, NOT_ISSUED_REASONS as NOT_ISSUED_REASONS,
        REASON_COLUMNS as REASON_COLUMNS, STALLED_COLUMNS as STALLED_COLUMNS,
        first_present as first_present,
    )
    from hotspot.capture.realtime import read_dispatch_realtime as read_dispatch_realtime
    from hotspot.capture.runtime_kernels import is_runtime_kernel as is_runtime_kernel
    from hotspot.capture.saved import (
        is_saved_input as is_saved_input, neither as neither, read_saved_json as read_saved_json,
    )
    from hotspot.capture.select import (
        DispatchCandidate as DispatchCandidate,
        IDLE_SLICE_EXECUTED_SHARE as IDLE_SLICE_EXECUTED_SHARE, OK as OK,
        choose_dispatch as choose_dispatch, kernel_name as kernel_name, pct as pct,
        raise_none_usable as raise_none_usable, rank_dispatches as rank_dispatches,
        selection_reason as selection_reason, usable_ranking as usable_ranking,
    )
    from hotspot.capture.session import (
        capture_session as capture_session, keep_bytes as keep_bytes, kept_paths as kept_paths,
        note_inputs as note_inputs,
        share as share, shared as shared,
    )
    from hotspot.capture.sidefiles import check_meta as check_meta
    from hotspot.capture.snapshots import (
        SourceMap as SourceMap, load_source_map as load_source_map,
        parse_source_maps as parse_source_maps, read_source_lines as read_source_lines,
    )
    from hotspot.capture.source import (
        NO_SOURCE as NO_SOURCE, SourceLoc as SourceLoc, SourceRef as SourceRef,
        parse_source as parse_source,
    )
    from hotspot.capture.target import arch_hints as arch_hints, detect_arch as detect_arch
    from hotspot.capture.trace.detect import KERNEL_STATS as KERNEL_STATS
    from hotspot.capture.trace.inputs import (
        KernelInputs as KernelInputs, load_markers as load_markers,
        read_dispatches as read_dispatches, resolve_kernel_inputs as resolve_kernel_inputs,
    )
    from hotspot.capture.trace.kernel_stats import read_kernel_stats_csv as read_kernel_stats_csv
    from hotspot.capture.trace.kernel_trace import read_kernel_trace_csv as read_kernel_trace_csv
    from hotspot.capture.trace.records import (
        DispatchRecord as DispatchRecord, KernelStatRecord as KernelStatRecord,
        MarkerRecord as MarkerRecord,
    )
    from hotspot.capture.wavecheck import (
        WAVE_STATES as WAVE_STATES, check_wave as check_wave, record_ranges as record_ranges, scanned_ranges as scanned_ranges,
    )
    from hotspot.capture.waves import (
        DECODER_CATEGORIES as DECODER_CATEGORIES, SHORT_WAVE_MAX_RECORDS as SHORT_WAVE_MAX_RECORDS,
        WaitcntEdges as WaitcntEdges, Wave as Wave,
        WaveTotals as WaveTotals, read_natively as read_natively, read_wave as read_wave,
        read_wave_bytes as read_wave_bytes,
        wave_from_doc as wave_from_doc, wave_of_bytes as wave_of_bytes,
    )

# public name -> the module of this package that defines it
_PUBLIC: dict[str, str] = {
    # the Capture of one dispatch dir, and its parts
    "Capture": "open", "open_capture": "open",
    "CodeRow": "model", "CodeTable": "model", "KernelSymbol": "model",
    "DispatchDir": "layout", "WaveFile": "layout", "WaveFiles": "layout", "find_dispatch_dirs": "layout",
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
    "parse_json": "files", "read_natively": "waves",
    # choosing among dispatch dirs
    "DispatchCandidate": "select", "IDLE_SLICE_EXECUTED_SHARE": "select", "OK": "select",
    "choose_dispatch": "select", "kernel_name": "select", "pct": "select",
    "raise_none_usable": "select", "rank_dispatches": "select", "selection_reason": "select",
    "usable_ranking": "select",
    # one command, one read of each file
    "capture_session": "session", "keep_bytes": "session", "share": "session", "shared": "session",
    "note_inputs": "session", "kept_paths": "session",
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
    "read_saved_json": "saved", "is_saved_input": "saved", "neither": "saved",
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
