"""Use case of `hotspot report`: build the report data, render the page, write the file."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from hotspot.att.model import DispatchAnalysis
from hotspot.errors import InputError, UsageError
from hotspot.outfile import resolve_output, write_output
from hotspot.export.report_data import ReportOptions, report_data
from hotspot.render.report_model import ReportPage
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
                 opts: ReportOptions = ReportOptions()) -> Result[ReportWritten]:
    if not Path(path).exists():  # a missing input is the error to report, not an existing report.html
        raise InputError(f"{path}: no such file or directory",
                         "pass an ATT ui_output_agent_*_dispatch_* directory, a folder holding them, "
                         "or a saved `hotspot analyze --format json` file")
    target = resolve_output(output, DEFAULT_REPORT, force, inputs=[Path(path)])  # fail before the analysis, not after
    from hotspot.render.html import page_chunks

    data_result = report_data(path, opts)
    if target is None:
        raise UsageError("write_report writes a file; render_html(report_data(...)) gives the page")
    page = data_result.data
    assert isinstance(page, ReportPage)

    def write(fh: BinaryIO) -> None:
        # The page as render_html(data_result) gives it, written as it is rendered: the page
        # (~6x a code.json) is never held whole.
        for chunk in page_chunks(page, list(data_result.warnings)):
            fh.write(chunk.encode("utf-8"))

    size = write_output(target, write)
    one = page.dispatches[0]
    a = one.analysis
    written = ReportWritten(
        output=str(target), bytes=size, kernel=a.dispatch.kernel, dispatch=a.dispatch.path,
        isa_rows=len(one.listing) if one.listing is not None else len(a.instructions),
        source_lines=len(a.source_lines),
        waves_shown=len(one.wave_timelines.waves) if one.wave_timelines is not None else 0,
        full_listing=one.listing is not None, **_sources(a))
    warnings = list(data_result.warnings)
    if written.source_files_found < written.source_files:
        warnings.append(f"report: source text of {written.source_files - written.source_files_found} of "
                        f"{written.source_files} files not found (no snapshot in the capture); pass "
                        "--source-map OLD=NEW to read them from a local checkout")
    return Result("report", written, warnings)


def _sources(a: DispatchAnalysis) -> dict[str, int]:
    found: dict[str, bool] = {}
    for d in a.detail or []:
        if d.file:
            found[d.file] = found.get(d.file, False) or bool(d.source_found)
    return {"source_files": len(found), "source_files_found": sum(found.values())}
