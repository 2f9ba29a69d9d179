"""The complete code table of a dispatch dir: its code.json, with the columns an early
format-3.0.0 file lacks rebuilt from the dir's wave files (hotspot/capture/early_layout.py)."""

from __future__ import annotations

from pathlib import Path

from hotspot.capture.codejson import read_code_json
from hotspot.capture.model import CodeTable
from hotspot.capture.session import memoized


def read_code_table(dispatch_dir: Path, max_bytes: int | None = None) -> CodeTable:
    """The code table of a dispatch dir (its code.json), complete (once per capture session). Only
    ranking reads code.json alone (capture/select.py: it needs no Stall or Idle)."""
    table = read_code_json(dispatch_dir / "code.json", max_bytes)
    if not table.missing:
        return table
    return memoized("code table", str(dispatch_dir), lambda: _rebuilt(dispatch_dir, table, max_bytes))


def _rebuilt(dispatch_dir: Path, table: CodeTable, max_bytes: int | None) -> CodeTable:
    from hotspot.capture.early_layout import rebuild_columns
    from hotspot.capture.layout import open_dispatch

    return rebuild_columns(table, open_dispatch(dispatch_dir).wave_files, max_bytes)
