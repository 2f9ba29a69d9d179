"""Reader for rocprofv3 `*_kernel_stats.csv` (Name,Calls,TotalDurationNs,AverageNs,Percentage,
MinNs,MaxNs,StdDev); numbers may be written in scientific notation."""

from __future__ import annotations

from pathlib import Path

from hotspot.capture.trace._csv import Rows
from hotspot.capture.trace.records import KernelStatRecord
from hotspot.errors import bad_file

SOURCE_KIND = "kernel_stats.csv"
COLUMNS = ("Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage", "MinNs", "MaxNs")


def read_kernel_stats_csv(path: Path | str) -> list[KernelStatRecord]:
    path = Path(path)
    rows = Rows(path)
    source = f"{SOURCE_KIND}:{path}"
    out: list[KernelStatRecord] = []
    for row in rows:
        if not out:
            rows.require(*COLUMNS)
        values = {}
        for col in COLUMNS[1:]:
            value = rows.number(row, col)
            if value is None:
                raise bad_file(path, f"line {rows.line}: column {col} is empty")
            if value < 0:
                raise bad_file(path, f"line {rows.line}: column {col} = {value} is negative")
            values[col] = value
        name = row["name"]
        if not name.strip():
            raise bad_file(path, f"line {rows.line}: empty Name")
        calls = rows.integer(row, "Calls")
        assert calls is not None
        out.append(KernelStatRecord(
            name=name,
            calls=calls,
            total_ns=rows.integer(row, "TotalDurationNs") or 0,
            avg_ns=values["AverageNs"],
            pct=values["Percentage"],
            min_ns=rows.integer(row, "MinNs") or 0,
            max_ns=rows.integer(row, "MaxNs") or 0,
            stddev_ns=rows.number(row, "StdDev") or 0.0,
            source=source,
        ))
    if not out and rows.columns:
        rows.require(*COLUMNS)
    return out
