"""Reader for rocprofv3 `*_marker_api_trace.csv` (roctx ranges: Domain,Function,...,Start/End)."""

from __future__ import annotations

from pathlib import Path

from hotspot.capture.trace._csv import Rows
from hotspot.capture.trace.records import MarkerRecord
from hotspot.errors import bad_file

SOURCE_KIND = "marker_api_trace.csv"


def read_marker_trace_csv(path: Path | str) -> list[MarkerRecord]:
    path = Path(path)
    rows = Rows(path)
    out: list[MarkerRecord] = []
    for row in rows:
        if not out:
            rows.require("Function", "Start_Timestamp", "End_Timestamp")
        start = rows.integer(row, "Start_Timestamp")
        end = rows.integer(row, "End_Timestamp")
        if start is None or end is None:
            raise bad_file(path, f"line {rows.line}: empty Start_Timestamp/End_Timestamp")
        if end < start:
            raise bad_file(path, f"line {rows.line}: End_Timestamp {end} is before Start_Timestamp {start}")
        out.append(MarkerRecord(name=row["function"], start_ns=start, end_ns=end,
                                source=f"{SOURCE_KIND}:{path}"))
    return out
