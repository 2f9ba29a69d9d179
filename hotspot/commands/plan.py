"""`hotspot plan`: the prioritized optimization plan for one ATT dispatch (thin adapter)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from hotspot.commands._run import Format, lazy, run


def register(app: typer.Typer) -> None:
    @app.command("plan", no_args_is_help=True,
                 help="What to change next: rules over the analysis, each item with location, "
                      "evidence, fix and estimated gain, in priority order.")
    def plan(
        path: Annotated[str, typer.Argument(help="ui_output_agent_*_dispatch_* dir, or a folder "
                                                  "holding several (the busiest is chosen)")],
        pmc: Annotated[Optional[list[str]], typer.Option(
            "--pmc", help="Counter files for memory verdicts (as `hotspot pmc` reads them); "
                          "repeat for several.")] = None,
        kernel: Annotated[Optional[str], typer.Option(
            "--kernel", help="Regex selecting a kernel when code.json holds several.")] = None,
        arch: Annotated[Optional[str], typer.Option(
            "--arch", help="Override the detected arch (gfx942, gfx950, ...).")] = None,
        fmt: Annotated[Format, typer.Option("--format", help="text, json or markdown")] = Format.text,
    ) -> None:
        def produce():
            from pathlib import Path

            from hotspot.att.analyze import AnalyzeOptions
            from hotspot.plan.api import plan_path

            return plan_path(Path(path), AnalyzeOptions(topk=0, kernel=kernel, arch=arch),
                             [Path(p) for p in pmc] if pmc else None)


        raise typer.Exit(run("plan", fmt, produce, {"text": lazy("hotspot.render.plan", "render_text"),
                                                  "markdown": lazy("hotspot.render.plan", "render_markdown")}))
