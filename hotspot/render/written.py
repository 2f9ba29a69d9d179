"""The confirmation `report` and `export` print after writing a file (text and markdown)."""

from __future__ import annotations

from typing import Any

from hotspot.kernel_names import short_kernel_name
from hotspot.result import Result


def render_written(result: Result[Any]) -> str:  # a ReportWritten (export/, a layer above)
    w = result.data
    kb = w.bytes / 1024
    """After `hotspot report`."""
    # the kernel's short form: a CK name alone is thousands of characters (the page has it whole)
    return (f"wrote {w.output} ({kb:,.0f} KB): {short_kernel_name(w.kernel)}; {w.isa_rows:,} ISA rows, "
            f"{w.source_lines:,} source lines"
            + (f" (source text of {w.source_files_found} of {w.source_files} files)" if w.source_files else "")
            + f", {w.waves_shown} wave timelines. Open it in a browser "
            "(works offline; copy the one file anywhere).")


def render_export_written(result: Result[Any]) -> str:  # a TraceWritten (export/)
    """After `hotspot export perfetto`."""
    w = result.data
    unit = "wall-clock µs from realtime.json" if w.time_base == "realtime" else "shader cycles"
    return (f"wrote {w.output} ({w.bytes / 1024:,.0f} KB): {w.waves:,} waves on {w.tracks:,} tracks, "
            f"{w.events:,} events, time in {unit}. Open it at https://ui.perfetto.dev (Open trace "
            "file) or chrome://tracing.")


def render_streamed(result: Result[object]) -> str:
    """After `hotspot export perfetto -o -`: the trace itself went to stdout; nothing to add."""
    return ""
