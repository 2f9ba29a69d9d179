"""`hotspot plan`: the prioritized optimization plan for one ATT dispatch (thin adapter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import (
    ArchOpt,
    BriefOpt,
    ExampleOpt,
    KernelOpt,
    MetaOpt,
    PmcOpt,
    SectionOpt,
    capture_path,
    chosen_sections,
    format_option,
    list_sections_option,
)

SPEC = CommandSpec(
    "plan", rank=80,
    help=("What to change next: rules over the analysis, each item with location, evidence, fix "
          "and estimated gain, in priority order."),
    cacheable=True,
    views={"plan": {**text_and_markdown("hotspot.render.plan", "render_text", "render_markdown"),
                    "csv": "hotspot.render.csv_views:render_plan"},
           "plan detail": {**text_and_markdown("hotspot.render.plan", "render_text_detail", "render_markdown_detail"),
                           "csv": "hotspot.render.csv_views:plan_detail"},
           # `--brief` of plan and analyze
           "brief": {**text_and_markdown("hotspot.render.plan", "render_brief"),
                     "csv": "hotspot.render.csv_views:render_brief"}},
    tools=(ToolSpec("plan",
                    "What to change next in one ATT dispatch: prioritized plan items with location, "
                    "evidence, fix and estimated gain. detail_level brief (default, under 4 KB) or full.",
                    paths=frozenset({"path", "pmc", "meta"}), detail=True,
                    hidden=frozenset({"detail", "example", "section", "list_sections"}),
                    required=frozenset({"path"}), rank=2),),
    sections={
        "verdict": "trust, where the cycles go, the top plan items",
        "dispatch": "dispatch dir, arch, why it was chosen, the counters",
        "summary": "with --detail: stall cycles and the top categories",
        "plan": "trust reasons, then every item: location, fix, estimate",
        "gap": "the stall class the items leave mostly unexplained",
    },
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
    ListSectionsOpt = bool
else:
    FormatOpt = format_option("plan", SPEC)
    ListSectionsOpt = list_sections_option(SPEC)


def register(app: typer.Typer) -> None:
    @app.command("plan", no_args_is_help=True,
                 help=SPEC.help)
    def plan(
        path: Annotated[Optional[str], typer.Argument(
            metavar="[PATH]", help="ui_output_agent_*_dispatch_* dir, a folder holding several (the "
                                   "busiest is chosen), or a saved `hotspot analyze --format json` file "
                                   "(the plan made from it)")] = None,
        example: ExampleOpt = False,
        pmc: PmcOpt = None,
        kernel: KernelOpt = None,
        arch: ArchOpt = None,
        meta: MetaOpt = None,
        brief: BriefOpt = False,
        detail: Annotated[bool, typer.Option(
            "--detail", help="Every item in full: evidence, all sites, the stall summary and the "
                             "priority table (text and markdown; JSON always has everything).")] = False,
        section: SectionOpt = None,
        list_sections: ListSectionsOpt = False,
        fmt: FormatOpt = "text",
    ) -> None:
        shown: list[tuple[str, ...] | None] = [None]

        def produce() -> Result[object]:
            from pathlib import Path

            shown[0] = chosen_sections(SPEC, section)
            from hotspot.att.model import PLAN_ALONE, AnalyzeOptions
            from hotspot.plan.entry_point import analyze

            result = analyze(Path(capture_path(path, example)), AnalyzeOptions(topk=0, kernel=kernel, arch=arch, meta=tuple(meta or ()),
                                                        plan=PLAN_ALONE, pmc=tuple(pmc or ())))
            if brief and fmt == "json":
                from hotspot.plan.brief import brief_result, repeated_options

                return brief_result(result, repeated_options(kernel=kernel, arch=arch, pmc=pmc, meta=meta))
            return result

        raise typer.Exit(run("plan", fmt, produce, "brief" if brief else "plan detail" if detail else None,
                             sections=lambda: shown[0]))
