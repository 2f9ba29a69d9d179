"""`hotspot analyze`: stall analysis of an ATT dispatch dir (thin adapter)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from hotspot.commands._run import FormatWithHtml, lazy, run


def register(app: typer.Typer) -> None:
    @app.command("analyze", help="Where the cycles of one ATT dispatch go: stall by category, hot "
                 "instructions and source lines, findings.")
    def analyze(
        path: Annotated[Optional[str], typer.Argument(help="ui_output_agent_*_dispatch_* dir, or a "
                                                      "folder holding several")] = None,
        dir_: Annotated[Optional[str], typer.Option("--dir", help="Same as PATH.")] = None,
        example: Annotated[bool, typer.Option("--example", help="Analyze the bundled example "
                                              "dispatch.")] = False,
        topk: Annotated[int, typer.Option("--topk", help="Rows per table (0 = all).")] = 15,
        mode: Annotated[str, typer.Option("--mode", help="asm, src or both.")] = "both",
        detail: Annotated[bool, typer.Option("--detail", help="Source snippet and worst "
                                             "instructions per hot line.")] = False,
        context: Annotated[int, typer.Option("--context", help="Snippet lines around a hot "
                                             "line (with --detail).")] = 3,
        kernel: Annotated[Optional[str], typer.Option("--kernel", help="Regex selecting a kernel "
                                                      "when code.json holds several.")] = None,
        arch: Annotated[Optional[str], typer.Option("--arch", help="Override the detected arch "
                                                    "(gfx942, gfx950, ...).")] = None,
        all_: Annotated[bool, typer.Option("--all", help="Analyze every dispatch dir found under "
                                           "PATH.")] = False,
        max_file_mb: Annotated[float, typer.Option(
            "--max-file-mb", help="Refuse a code.json or wave file larger than this many MB "
            "(0 = no cap).")] = 1024.0,
        max_waves: Annotated[Optional[int], typer.Option(
            "--max-waves", help="Read at most N wave files, sampled evenly across SEs/SIMDs (for "
            "very large captures).")] = None,
        jobs: Annotated[Optional[int], typer.Option(
            "--jobs", help="Worker processes for reading wave files (default: CPU count; large "
            "captures only).")] = None,
        plan: Annotated[bool, typer.Option("--plan", help="Add the prioritized optimization plan "
                                           "(as `hotspot plan`).")] = False,
        pmc: Annotated[Optional[list[str]], typer.Option(
            "--pmc", help="Counter files for the plan's memory verdicts (implies --plan; "
                          "repeatable).")] = None,
        fmt: Annotated[FormatWithHtml, typer.Option("--format", help="text, json, markdown or "
                                                    "html.")] = FormatWithHtml.text,
    ) -> None:
        def produce():
            import os
            from pathlib import Path

            from hotspot.att.analyze import AnalyzeOptions, analyze_path
            from hotspot.errors import UsageError

            target = path or dir_
            if example:
                if target:
                    raise UsageError("--example takes no PATH")
                from hotspot.examples import example_dispatch_dir

                target = str(example_dispatch_dir())
            if not target:
                raise UsageError("give a dispatch dir (PATH or --dir), or --example")
            if path and dir_ and path != dir_:
                raise UsageError("PATH and --dir disagree; give one")
            opts = AnalyzeOptions(topk=topk, mode=mode, detail=detail, context=context,
                                  kernel=kernel, arch=arch, all_dispatches=all_,
                                  max_file_mb=max_file_mb, max_waves=max_waves,
                                  jobs=jobs if jobs is not None else (os.cpu_count() or 1))
            if plan or pmc:
                from hotspot.plan.api import analyze_with_plan

                return analyze_with_plan(Path(target), opts, [Path(p) for p in pmc] if pmc else None)
            return analyze_path(Path(target), opts)

        raise typer.Exit(run("analyze", fmt, produce,
                             {"text": lazy("hotspot.render.analyze", "render_text"),
                              "markdown": lazy("hotspot.render.analyze", "render_markdown"),
                              "html": lazy("hotspot.render.html", "render_html")}))
