"""`hotspot occupancy`: what-if theoretical occupancy for a register/LDS/workgroup configuration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option

SPEC = CommandSpec(
    "occupancy", rank=20,
    help=("Waves per SIMD for a register/LDS/workgroup configuration, what limits it, and how "
          "far each limit must move to gain a wave."),
    cacheable=True,
    views={"occupancy": {**text_and_markdown("hotspot.render.occupancy", "render_text", "render_markdown"),
                         "csv": "hotspot.render.csv_views:render_occupancy"}},
    tools=(ToolSpec("occupancy", rank=6),),
)

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
else:
    FormatOpt = format_option("occupancy")


def register(app: typer.Typer) -> None:
    @app.command("occupancy", no_args_is_help=True,
                 help=SPEC.help)
    def occupancy(
        arch: Annotated[str, typer.Option("--arch", help="gfx908, gfx90a, gfx942, gfx950 (or a product "
                                                         "name such as MI300X)")],
        vgpr: Annotated[int, typer.Option("--vgpr", help="arch VGPRs per wave")],
        agpr: Annotated[int, typer.Option("--agpr", help="AGPRs per wave (or Accum_VGPR_Count)")] = 0,
        sgpr: Annotated[Optional[int], typer.Option("--sgpr", help="SGPRs per wave, without the "
                                                                   "implicit VCC/FLAT_SCRATCH/XNACK")] = None,
        sgpr_includes_implicit: Annotated[bool, typer.Option(
            "--sgpr-includes-implicit",
            help="--sgpr is an allocation that already includes the implicit SGPRs (a profiler's "
                 "SGPR_Count / rocpd sgpr_count)")] = False,
        lds: Annotated[int, typer.Option("--lds", help="LDS bytes per workgroup (static + dynamic)")] = 0,
        wg: Annotated[Optional[int], typer.Option("--wg", help="work-items per workgroup")] = None,
        fmt: FormatOpt = "text",
    ) -> None:
        from hotspot.arch.what_if import what_if

        raise typer.Exit(run("occupancy", fmt, lambda: what_if(arch, vgpr, agpr, sgpr, lds, wg,
                                                               sgpr_includes_implicit)))
