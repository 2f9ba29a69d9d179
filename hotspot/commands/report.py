"""`hotspot report`: one self-contained HTML page of an ATT dispatch (thin adapter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import (
    ArchOpt,
    ExampleOpt,
    KernelOpt,
    MaxFileMbOpt,
    MetaOpt,
    SourceMapOpt,
    capture_path,
    format_option,
)

SPEC = CommandSpec(
    "report", rank=90,
    help=("Write a self-contained HTML report of one ATT dispatch (summary, stall chart, source "
          "and ISA views, wave timelines); opens offline in any browser."),
    cacheable=True,
    views={"report": text_and_markdown("hotspot.render.written", "render_written"),
           # `report -o -`: the page itself on stdout
           "report page": {"text": "hotspot.render.html:render_html"}},
    tools=(ToolSpec("report",
                    "Write the self-contained HTML report of one ATT dispatch (summary, stall chart, "
                    "source and ISA views, wave timelines) to output, a file inside a root; answers its "
                    "path, size and what it holds. An existing file is replaced only with force.",
                    help={"output": "The HTML file to write (inside a root; an existing file only "
                                    "with force)."},
                    paths=frozenset({"path", "output", "meta", "pmc"}), outputs=frozenset({"output"}),
                    required=frozenset({"path", "output"}), hidden=frozenset({"example"}), rank=11),),
)

if TYPE_CHECKING:
    from hotspot.result import Result

ReportPmcOpt = Annotated[Optional[list[str]], typer.Option(
    "--pmc", help="Counter files (as `hotspot pmc` reads them; repeatable): the plan's memory verdicts "
                  "(as analyze --pmc) and a second roofline point from the counters' bytes and time.")]

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
else:
    FormatOpt = format_option("report")


def register(app: typer.Typer) -> None:
    @app.command("report", help=SPEC.help,
                 no_args_is_help=True)
    def report(
        path: Annotated[Optional[str], typer.Argument(
            metavar="[PATH]", help="ui_output_agent_*_dispatch_* dir (or a folder holding several), or "
                                   "a saved `hotspot analyze --format json` file")] = None,
        example: ExampleOpt = False,
        output: Annotated[Optional[str], typer.Option(
            "-o", "--output", help="HTML file to write; '-' writes the page to stdout. Default "
            "report.html, an existing file is never overwritten without --force.")] = None,
        force: Annotated[bool, typer.Option("--force", help="Replace an existing output "
                                            "file.")] = False,
        kernel: KernelOpt = None,
        arch: ArchOpt = None,
        meta: MetaOpt = None,
        max_file_mb: MaxFileMbOpt = None,
        source_map: SourceMapOpt = None,
        pmc: ReportPmcOpt = None,
        fmt: FormatOpt = "text",
    ) -> None:
        from pathlib import Path

        from hotspot.export.report_data import ReportOptions
        from hotspot.outfile import STDOUT

        def options() -> ReportOptions:
            from hotspot.capture import parse_source_maps

            return ReportOptions(kernel=kernel, arch=arch, max_file_mb=max_file_mb,
                                 meta=tuple(meta or ()), source_map=parse_source_maps(source_map or ()),
                                 pmc=tuple(pmc or ()))

        if output == STDOUT:
            def page() -> Result[object]:
                from hotspot.errors import UsageError
                from hotspot.export.report_data import report_data

                if fmt.value != "text":
                    raise UsageError("-o - prints the HTML page itself; it takes no --format")
                return report_data(Path(capture_path(path, example)), options())

            raise typer.Exit(run("report", fmt, page, "report page"))

        def produce() -> Result[object]:
            from hotspot.export.report_file import write_report

            return write_report(Path(capture_path(path, example)), output, force, options())

        raise typer.Exit(run("report", fmt, produce))
