"""`hotspot doctor`: check rocprofv3, the trace decoder library and the GPUs, with the fix for each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option

SPEC = CommandSpec(
    "doctor", rank=60,
    help=("Check rocprofv3, the ATT trace decoder and the GPUs; print the fix for each problem and "
          "whether analysis and collection are ready here. Exit 5 when a tool collection requires "
          "is missing (0 with --for analyze: analysis needs none)."),
    views={"doctor": {**text_and_markdown("hotspot.render.collect", "render_doctor", "render_doctor_markdown"),
                      "csv": "hotspot.render.csv_views:render_doctor"}},
    tools=(ToolSpec("doctor", remembered=False, rank=7),),
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
else:
    FormatOpt = format_option("doctor")


def register(app: typer.Typer) -> None:
    @app.command("doctor", help=SPEC.help)
    def doctor(
        rocprofv3: Annotated[Optional[str], typer.Option("--rocprofv3", help="Path to rocprofv3 "
                                                         "(default: PATH, $ROCM_PATH/bin, /opt/rocm/bin).")] = None,
        att_library_path: Annotated[Optional[str], typer.Option(
            "--att-library-path", help="Folder holding librocprof-trace-decoder.so.")] = None,
        for_: Annotated[Optional[str], typer.Option(
            "--for", metavar="<analyze|collect>",
            help="Check one use: analyze (exit 0 without rocprofv3 when analyze, plan, report, diff "
                 "and export work here) or collect. Default: both verdicts, exit 5 when collection "
                 "is not ready.")] = None,
        fmt: FormatOpt = "text",
    ) -> None:
        from hotspot.render.registry import renderer

        def produce() -> Result[object]:
            from hotspot.collect.doctor_checks import PURPOSES, run_doctor
            from hotspot.errors import ToolMissingError, UsageError

            if for_ is not None and for_ not in PURPOSES:
                raise UsageError(f"--for {for_}: expected {' or '.join(PURPOSES)}")
            result = run_doctor(rocprofv3, att_library_path, for_ or "both")
            report = result.data
            if report.ok or (for_ == "analyze" and report.analysis_ready):
                return result
            failed = [c for c in report.checks if c.required and c.status == "fail"]
            if fmt.value != "json":  # the full table first, then the one-line error
                from hotspot.outfile import write_stdout

                view = renderer("doctor", fmt.value)  # text, markdown or csv: the checks as that format shows them
                assert view is not None
                write_stdout(view(result))
            from hotspot.result import Result

            details = {"doctor": Result("doctor", report).plain_data()}
            if fmt.value != "json":  # the table above holds each detail and fix: do not repeat them
                raise ToolMissingError(
                    "required check failed: " + ", ".join(c.name for c in failed),
                    "apply the fix shown for it above, then rerun hotspot doctor", details=details)
            raise ToolMissingError("; ".join(c.detail for c in failed), "; then ".join(c.fix for c in failed),
                                   details=details)

        raise typer.Exit(run("doctor", fmt, produce))
