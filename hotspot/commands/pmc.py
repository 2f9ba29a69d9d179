"""`hotspot pmc`: L2 hit rate, L2→fabric bytes and achieved bandwidth from counter files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import SectionOpt, chosen_sections, format_option, list_sections_option

SPEC = CommandSpec(
    "pmc", rank=30,
    help=("L2 hit rate, L2→fabric bytes, achieved bandwidth and verdicts from counters "
          "(rocprofv3 counter_collection CSVs, rocprof-compute workloads, rocpd dbs)."),
    cacheable=True,
    views={"pmc": {**text_and_markdown("hotspot.render.pmc", "render_text", "render_markdown"),
                   "csv": "hotspot.render.csv_views:render_pmc"}},
    tools=(ToolSpec("pmc", paths=frozenset({"paths"}), hidden=frozenset({"section", "list_sections"}), rank=4),),
    sections={
        "inputs": "the files read, how they were joined, arch, peak bandwidth",
        "kernels": "per kernel: L2 hit, L2->fabric bytes, time, GB/s, % of peak",
        "verdicts": "per kernel: what the counters say, and what to do next",
        "counters": "every counter read, summed per kernel",
        "dispatches": "with --per-dispatch: the same per dispatch",
    },
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
    ListSectionsOpt = bool
else:
    FormatOpt = format_option("pmc", SPEC)
    ListSectionsOpt = list_sections_option(SPEC)

GB = 1e9  # --ideal-gb is decimal gigabytes, like GB/s


def register(app: typer.Typer) -> None:
    @app.command("pmc", no_args_is_help=True,
                 help=SPEC.help)
    def pmc(
        paths: Annotated[list[str], typer.Argument(
            metavar="PATH...", help="Counter files or folders: *_counter_collection.csv (several passes are joined), "
                 "a rocprof-compute workload folder (pmc_perf.csv), or a rocpd *_results.db.")],
        kernel: Annotated[Optional[str], typer.Option(
            "--kernel", "-k", help="Only kernels whose name matches this regular expression.")] = None,
        dispatch: Annotated[Optional[list[int]], typer.Option(
            "--dispatch", "-d", help="Only this dispatch id (repeat for several).")] = None,
        ideal_bytes: Annotated[Optional[float], typer.Option(
            "--ideal-bytes", help="Bytes the algorithm must read per dispatch (enables over-fetch).")
        ] = None,
        ideal_gb: Annotated[Optional[float], typer.Option(
            "--ideal-gb", help="Same as --ideal-bytes, in GB (1e9 bytes) per dispatch.")] = None,
        arch: Annotated[Optional[str], typer.Option(
            "--arch", help="gfx target (e.g. gfx942) when the input does not say.")] = None,
        peak_gbps: Annotated[Optional[float], typer.Option(
            "--peak-gbps", help="Peak bandwidth in GB/s for percent of peak (overrides the "
                                "measured/recorded/product peak).")] = None,
        per_dispatch: Annotated[bool, typer.Option(
            "--per-dispatch", help="Also list every dispatch.")] = False,
        section: SectionOpt = None,
        list_sections: ListSectionsOpt = False,
        fmt: FormatOpt = "text",
    ) -> None:
        shown: list[tuple[str, ...] | None] = [None]

        def produce() -> Result[object]:
            from pathlib import Path

            shown[0] = chosen_sections(SPEC, section)
            from hotspot.errors import UsageError
            from hotspot.pmc.api import analyze_pmc

            if ideal_bytes is not None and ideal_gb is not None:
                raise UsageError("give --ideal-bytes or --ideal-gb, not both", "pick one unit")
            ideal = ideal_gb * GB if ideal_gb is not None else ideal_bytes
            return analyze_pmc([Path(p) for p in paths], kernel=kernel, dispatches=dispatch,
                               ideal_bytes=ideal, arch=arch, peak_gbps=peak_gbps,
                               per_dispatch=per_dispatch)


        raise typer.Exit(run("pmc", fmt, produce, sections=lambda: shown[0]))
