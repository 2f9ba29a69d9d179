"""`hotspot diff`: did the fix work? Compare two analyses with a noise floor (thin adapter)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from hotspot.commands._run import Format, lazy, run


def register(app: typer.Typer) -> None:
    @app.command("diff", help="Compare BEFORE and AFTER (dispatch dirs or saved analyze JSON): "
                 "totals, categories, source lines and blamed loads, with a noise floor.",
                 no_args_is_help=True)
    def diff(
        before: Annotated[str, typer.Argument(help="Dispatch dir (or folder of them) or a saved "
                                              "`hotspot analyze --format json` file.")],
        after: Annotated[str, typer.Argument(help="Same, for the changed kernel.")],
        kernel: Annotated[Optional[str], typer.Option("--kernel", help="Regex selecting the "
                                                      "kernel when an input holds several.")] = None,
        threshold: Annotated[Optional[float], typer.Option(
            "--threshold", help="Relative change (percent) a row must exceed when no replicate "
            "dispatch gives the noise floor (default 5).")] = None,
        max_waves: Annotated[Optional[int], typer.Option(
            "--max-waves", help="Read at most N wave files per dispatch dir.")] = None,
        fmt: Annotated[Format, typer.Option("--format", help="text, json or markdown")] = Format.text,
    ) -> None:
        def produce():
            from pathlib import Path

            from hotspot.diff.api import diff_paths

            return diff_paths(Path(before), Path(after), kernel, threshold, max_waves)


        raise typer.Exit(run("diff", fmt, produce, {"text": lazy("hotspot.render.diff", "render_text"),
                                                  "markdown": lazy("hotspot.render.diff", "render_markdown")}))
