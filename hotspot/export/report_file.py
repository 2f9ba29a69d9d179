"""Use case of `hotspot report`: build the report data, render the page, write the file."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from hotspot.errors import UsageError
from hotspot.outfile import resolve_output, write_output
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
    source_files: int = 0        # distinct source files the hot lines name
    source_files_found: int = 0  # of those, read from a snapshot or a --source-map checkout


def write_report(path: Path, output: str | None, force: bool,
                 opts: ReportOptions = ReportOptions()) -> Result:
    target = resolve_output(output, DEFAULT_REPORT, force, inputs=[Path(path)])  # fail before the analysis, not after
    from hotspot.render.html import page_chunks

    data_result = report_data(path, opts)
    if target is None:
        raise UsageError("write_report writes a file; render_html(report_data(...)) gives the page")
    data = data_result.data

    def write(fh: BinaryIO) -> None:
        # The page as render_html(data_result) gives it, written as it is rendered: report data is
        # plain JSON data already, and the page (~6x a code.json) is never held whole.
        for chunk in page_chunks(data, list(data_result.warnings)):
            fh.write(chunk.encode("utf-8"))

    size = write_output(target, write)
    one = data if isinstance(data, dict) and "dispatch" in data else (data.get("dispatches") or [{}])[0]
    listing = one.get("listing")
    timelines = one.get("wave_timelines") or {}
    written = ReportWritten(
        output=str(target), bytes=size, kernel=str(one.get("dispatch", {}).get("kernel", "")),
        dispatch=str(one.get("dispatch", {}).get("path", "")),
        isa_rows=len(listing) if isinstance(listing, list) else len(one.get("instructions") or []),
        source_lines=len(one.get("source_lines") or []),
        waves_shown=len(timelines.get("waves") or []), full_listing=isinstance(listing, list),
        **_sources(one))
    warnings = list(data_result.warnings)
    if written.source_files_found < written.source_files:
        warnings.append(f"report: source text of {written.source_files - written.source_files_found} of "
                        f"{written.source_files} files not found (no snapshot in the capture); pass "
                        "--source-map OLD=NEW to read them from a local checkout")
    return Result("report", written, warnings)


def _sources(one: dict) -> dict[str, int]:
    found: dict[str, bool] = {}
    for d in one.get("detail") or []:
        if isinstance(d, dict) and d.get("file"):
            found[d["file"]] = found.get(d["file"], False) or bool(d.get("source_found"))
    return {"source_files": len(found), "source_files_found": sum(found.values())}
