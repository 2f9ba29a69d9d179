"""Use case of `hotspot report`: build the report data, render the page, write the file."""

from __future__ import annotations

from pathlib import Path

from hotspot.errors import UsageError
from hotspot.export.output import resolve_output, write_atomically
from hotspot.export.report_data import ReportOptions, report_data
from hotspot.result import Result
from hotspot.record import record

DEFAULT_REPORT = "report.html"


@record
class ReportWritten:
    output: str
    bytes: int
    kernel: str
    dispatch: str
    isa_rows: int
    source_lines: int
    waves_shown: int
    full_listing: bool


def write_report(path: Path, output: str | None, force: bool,
                 opts: ReportOptions = ReportOptions()) -> Result:
    target = resolve_output(output, DEFAULT_REPORT, force)  # fail before the analysis, not after
    from hotspot.render.html import render_html

    data_result = report_data(path, opts)
    page = render_html(data_result).encode("utf-8")
    if target is None:
        raise UsageError("write_report writes a file; render_html(report_data(...)) gives the page")
    size = write_atomically(target, lambda fh: fh.write(page))
    data = data_result.data
    one = data if isinstance(data, dict) and "dispatch" in data else (data.get("dispatches") or [{}])[0]
    listing = one.get("listing")
    timelines = one.get("wave_timelines") or {}
    written = ReportWritten(
        output=str(target), bytes=size, kernel=str(one.get("dispatch", {}).get("kernel", "")),
        dispatch=str(one.get("dispatch", {}).get("path", "")),
        isa_rows=len(listing) if isinstance(listing, list) else len(one.get("instructions") or []),
        source_lines=len(one.get("source_lines") or []),
        waves_shown=len(timelines.get("waves") or []), full_listing=isinstance(listing, list))
    return Result("report", written, list(data_result.warnings))
