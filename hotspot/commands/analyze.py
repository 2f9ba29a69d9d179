"""`hotspot analyze`: stall analysis of an ATT dispatch dir (thin adapter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import (
    ArchOpt,
    BriefOpt,
    KernelOpt,
    MaxFileMbOpt,
    MaxWavesOpt,
    MetaOpt,
    PmcOpt,
    SectionOpt,
    SourceMapOpt,
    capture_path,
    chosen_sections,
    format_option,
    list_sections_option,
)

SPEC = CommandSpec(
    "analyze", rank=10,
    help=("Where the cycles of one ATT dispatch go: stall by category, hot instructions and "
          "source lines, findings."),
    cacheable=True,
    views={"analyze": {**text_and_markdown("hotspot.render.analyze", "render_text", "render_markdown"),
                       "html": "hotspot.render.html:render_html",
                       "csv": "hotspot.render.csv_views:render_analyze"}},
    tools=(ToolSpec("analyze",
                    "Where the cycles of one ATT dispatch go (stall by category, hot instructions and "
                    "source lines, findings), with the plan. detail_level brief (default): the verdict, "
                    "trust and the top plan items in under 4 KB; full: the whole analysis JSON (add "
                    "plan=true for the plan).",
                    paths=frozenset({"path", "dir", "pmc", "meta"}), detail=True,
                    hidden=frozenset({"section", "list_sections"}), rank=1),),
    sections={
        "ranking": "with --all: the dispatch dirs found, ranked",
        "verdict": "trust, where the cycles go, the top plan items",
        "summary": "dispatch dir, kernel, arch, waves, cycle totals",
        "occupancy": "resources, theoretical and achieved occupancy",
        "stall": "stall by category (PC sampling: stall reasons)",
        "lines": "top source lines by stall",
        "instructions": "top instructions by stall",
        "blamed-loads": "the loads the waits wait for",
        "waits": "each s_waitcnt and its producers",
        "lgkm": "lgkmcnt wait stall by producer class",
        "wave-states": "exec, wait, stall, idle cycles by source line",
        "loops": "loops: iterations, stall, hottest wait",
        "barriers": "barrier arrival spread, first to last wave",
        "hot-lines": "with --detail: source snippet per hot line",
        "representativeness": "does the capture represent the kernel",
        "findings": "findings with their next step",
        "plan": "every plan item: root cause, fix, estimate",
    },
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
    ListSectionsOpt = bool
else:
    FormatOpt = format_option("analyze", SPEC)
    ListSectionsOpt = list_sections_option(SPEC)


def register(app: typer.Typer) -> None:
    @app.command("analyze", help=SPEC.help)
    def analyze(
        path: Annotated[Optional[str], typer.Argument(metavar="[PATH]", help="ui_output_agent_*_dispatch_* dir, a "
                                                      "folder holding several, or a saved `hotspot analyze "
                                                      "--format json` file (shown again)")] = None,
        dir_: Annotated[Optional[str], typer.Option("--dir", help="Same as PATH.")] = None,
        example: Annotated[bool, typer.Option("--example", help="Analyze the bundled example "
                                              "dispatch.")] = False,
        topk: Annotated[Optional[int], typer.Option("--topk", help=(
            "Rows per table (0 = all). Default: 15 in text, markdown and html; every row in json and "
            "csv, so a saved analysis is complete (its tables_complete says so)."))] = None,
        mode: Annotated[str, typer.Option("--mode", metavar="<asm|src|both>", help=(
            "Which tables the text view shows: asm (instructions), src (source lines) or "
            "both."))] = "both",
        detail: Annotated[bool, typer.Option("--detail", help="Source snippet and worst "
                                             "instructions per hot line; with --plan also the full "
                                             "tables and every plan item in full.")] = False,
        context: Annotated[int, typer.Option("--context", help="Snippet lines around a hot "
                                             "line (with --detail).")] = 3,
        kernel: KernelOpt = None,
        arch: ArchOpt = None,
        all_: Annotated[bool, typer.Option("--all", help="Analyze every dispatch dir found under "
                                           "PATH.")] = False,
        max_file_mb: MaxFileMbOpt = None,
        max_waves: MaxWavesOpt = None,
        jobs: Annotated[str, typer.Option(
            "--jobs", help="Worker processes for reading wave files: auto (a pool only where it "
            "pays: many CPUs, a large capture) or N.")] = "auto",
        plan: Annotated[bool, typer.Option("--plan", help=(
            "Print the full plan section (trust reasons, every item with root cause, fix and "
            "estimate, as `hotspot plan`) after the verdict and summary, in place of the tables "
            "(with --detail: after them); with --format json: attach the plan to the data. The "
            "text view always opens with the verdict."))] = False,
        pmc: PmcOpt = None,
        brief: BriefOpt = False,
        meta: MetaOpt = None,
        source_map: SourceMapOpt = None,
        section: SectionOpt = None,
        list_sections: ListSectionsOpt = False,
        fmt: FormatOpt = "text",
    ) -> None:
        fmt_name = getattr(fmt, "value", fmt)
        shown: list[tuple[str, ...] | None] = [None]

        def produce() -> Result[object]:
            from pathlib import Path

            from hotspot.att.model import DEFAULT_MAX_FILE_MB, DEFAULT_TOPK, PLAN_ATTACHED, PLAN_NONE, AnalyzeOptions
            from hotspot.capture import parse_source_maps
            from hotspot.errors import UsageError

            shown[0] = _sections(chosen_sections(SPEC, section), plan or bool(pmc), detail)  # --pmc implies --plan
            target = path or dir_
            if example:
                target = capture_path(target, example)
            if not target:
                raise UsageError("give a dispatch dir (PATH or --dir), or --example")
            if path and dir_ and path != dir_:
                raise UsageError("PATH and --dir disagree; give one")
            from hotspot.att.engine.worker_count import parse_jobs

            try:
                n_jobs = parse_jobs(jobs)
            except ValueError:
                raise UsageError(f"--jobs {jobs}: expected auto or a number of processes >= 1") from None
            # a saved or tabulated analysis keeps every row; the views a person reads, the top ones
            rows = topk if topk is not None else (0 if fmt_name in ("json", "csv") else DEFAULT_TOPK)
            opts = AnalyzeOptions(topk=rows, mode=mode, detail=detail, context=context,
                                  kernel=kernel, arch=arch, all_dispatches=all_,
                                  max_file_mb=DEFAULT_MAX_FILE_MB if max_file_mb is None else max_file_mb,
                                  max_waves=max_waves, meta=tuple(meta or ()),
                                  source_map=parse_source_maps(source_map or ()),
                                  # the text views open with the verdict: the plan is made for them
                                  jobs=n_jobs, plan=PLAN_ATTACHED if plan or pmc or brief
                                  or fmt_name in ("text", "markdown", "csv") else PLAN_NONE,
                                  pmc=tuple(pmc or ()))
            from hotspot.plan.entry_point import analyze

            result = analyze(Path(target), opts)
            if brief and fmt == "json":
                from hotspot.plan.brief import brief_result, repeated_options

                return brief_result(result, repeated_options(kernel=kernel, arch=arch, pmc=pmc, meta=meta))
            return result

        raise typer.Exit(run("analyze", fmt, produce, "brief" if brief else None, sections=lambda: shown[0]))


def _sections(asked: tuple[str, ...] | None, plan: bool, detail: bool) -> tuple[str, ...]:
    """What the text view prints: the sections asked by --section; else the verdict and every
    table (no plan section), with --plan the verdict, the summary and the plan (the tables too
    with --detail)."""
    if asked is not None:
        return asked
    every = tuple(SPEC.sections)
    if not plan:
        return tuple(n for n in every if n != "plan")
    return every if detail else ("ranking", "verdict", "summary", "plan")
