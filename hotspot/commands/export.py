"""`hotspot export`: traces for other viewers (thin adapter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import ExampleOpt, MaxFileMbOpt, capture_path, format_option

SPEC = CommandSpec(
    "export", rank=100,
    help="Export a dispatch for other viewers (Perfetto).",
    group=True,
    cacheable=True,
    views={"export": text_and_markdown("hotspot.render.written", "render_export_written"),
           # `export perfetto -o -`: the trace was streamed to stdout while it was made
           "export stream": {"text": "hotspot.render.written:render_streamed"}},
    tools=(ToolSpec("export",
                    "Write one ATT dispatch's wave-state timelines (instructions: true adds a slice per "
                    "executed instruction) as a Chrome trace-event JSON file for ui.perfetto.dev, to "
                    "output, a file inside a root; answers its path and what it holds.",
                    words=("perfetto",),
                    help={"output": "The trace file to write (inside a root; an existing file only "
                                    "with force)."},
                    paths=frozenset({"path", "output"}), outputs=frozenset({"output"}),
                    required=frozenset({"path", "output"}), hidden=frozenset({"example"}), rank=12),),
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from hotspot.export.perfetto import PerfettoOptions
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
else:
    FormatOpt = format_option("export")


def register(app: typer.Typer) -> None:
    export_app = typer.Typer(name="export", help=SPEC.help,
                             no_args_is_help=True, rich_markup_mode=None, add_completion=False)

    @export_app.command("perfetto", help="Wave-state timelines (and optionally instructions) as "
                        "Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing.",
                        no_args_is_help=True)
    def perfetto(
        path: Annotated[Optional[str], typer.Argument(
            metavar="[PATH]", help="ui_output_agent_*_dispatch_* dir (or a folder holding several: the "
                                   "one with most waves)")] = None,
        example: ExampleOpt = False,
        output: Annotated[Optional[str], typer.Option(
            "-o", "--output", help="Trace file to write; '-' writes it to stdout. Default "
            "trace.json, an existing file is never overwritten without --force.")] = None,
        instructions: Annotated[bool, typer.Option(
            "--instructions", help="Add a track per wave with one slice per executed "
            "instruction (stall in its args).")] = False,
        force: Annotated[bool, typer.Option("--force", help="Replace an existing output "
                                            "file.")] = False,
        max_file_mb: MaxFileMbOpt = None,
        fmt: FormatOpt = "text",
    ) -> None:
        from pathlib import Path

        from hotspot.export.perfetto import PerfettoOptions
        from hotspot.outfile import STDOUT

        opts = PerfettoOptions(instructions=instructions, max_file_mb=max_file_mb)
        if output == STDOUT:
            raise typer.Exit(_to_stdout(lambda: Path(capture_path(path, example)), opts, fmt))

        def produce() -> Result[object]:
            from hotspot.export.perfetto import export_perfetto

            return export_perfetto(Path(capture_path(path, example)), output, force, opts)

        raise typer.Exit(run("export", fmt, produce))

    app.add_typer(export_app, name="export")


def _to_stdout(path_of: Callable[[], Path], opts: PerfettoOptions, fmt: Any) -> int:
    """The trace itself on stdout; errors still go through the one-line error path. `path_of`
    gives the input (inside the run: a usage error about it is reported like the others)."""

    from hotspot.errors import UsageError
    from hotspot.export.perfetto import select_dispatch, write_trace

    def produce() -> Result[object]:
        if fmt.value != "text":
            raise UsageError("-o - prints the trace itself; it takes no --format")
        warnings: list[str] = []
        ddir = select_dispatch(path_of(), warnings)
        from hotspot.errors import StdoutError
        from hotspot.outfile import quiet_stdout, stdout_binary

        try:
            write_trace(ddir, stdout_binary(), opts, warnings)
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.filename is not None:  # an input that failed while being read
                raise
            quiet_stdout()
            raise StdoutError.of(exc) from None
        from hotspot.result import Result

        return Result("export", None, warnings)

    return run("export", fmt, produce, "export stream")
