"""`hotspot kernels`: kernel-level hotspots from the traces users already have."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option

SPEC = CommandSpec(
    "kernels", rank=40,
    help=("Rank kernels by GPU time from a rocprofv3 kernel stats/trace CSV, a rocpd results.db "
          "or a rocm-trace-lite trace.db (or the folder holding them), optionally split by "
          "roctx marker regions; each row has a ready --kernel regex."),
    cacheable=True,
    views={"kernels": {**text_and_markdown("hotspot.render.kernels", "render_text", "render_markdown"),
                       "csv": "hotspot.render.csv_views:render_kernels"}},
    tools=(ToolSpec("kernels", paths=frozenset({"path"}), rank=5),),
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
else:
    FormatOpt = format_option("kernels")

# typer has no optional-value options, so `--by-marker [REGEX]` is spelled `--by-marker` (all
# ranges) plus `--marker REGEX` (a filter that implies it).
ALL_MARKERS = ""


def register(app: typer.Typer) -> None:
    @app.command("kernels", no_args_is_help=True,
                 help=SPEC.help)
    def kernels(
        path: Annotated[str, typer.Argument(metavar="PATH", help="Kernel stats/trace CSV, rocpd *_results.db, "
                                                 "rocm-trace-lite trace.db, or a folder with them.")],
        top: Annotated[int, typer.Option("--top", help="Show the N most expensive kernels (0 = all).")] = 0,
        by_marker: Annotated[bool, typer.Option(
            "--by-marker", help="Add one table per roctx range name (prefill/decode phases).")] = False,
        marker: Annotated[Optional[str], typer.Option(
            "--marker", metavar="REGEX",
            help="Only ranges whose name matches REGEX (re.search); implies --by-marker.")] = None,
        gpu: Annotated[Optional[int], typer.Option(
            "--gpu", help="Only this GPU (rocpd/trace.db GPU index; Agent_Id number for CSV).")] = None,
        exclude_collectives: Annotated[bool, typer.Option(
            "--exclude-collectives", help="Leave RCCL/collective kernels out of the % of GPU time.")] = False,
        fmt: FormatOpt = "text",
    ) -> None:
        def produce() -> Result[object]:
            from hotspot.trace.api import kernel_table

            regions = marker if marker is not None else ALL_MARKERS if by_marker else None
            return kernel_table(path, top=top, by_marker=regions, gpu=gpu,
                                exclude_collectives=exclude_collectives)


        raise typer.Exit(run("kernels", fmt, produce))
