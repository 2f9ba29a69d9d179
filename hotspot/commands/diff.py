"""`hotspot diff`: did the fix work? Compare two analyses with a noise floor (thin adapter)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from hotspot.commands._run import run
from hotspot.commands.options import Format, FormatOpt, KernelOpt, MaxWavesOpt


def register(app: typer.Typer) -> None:
    @app.command("diff", help="Compare BEFORE and AFTER (dispatch dirs or saved analyze JSON): "
                 "totals, categories, source lines and blamed loads, with a noise floor.",
                 no_args_is_help=True)
    def diff(
        before: Annotated[str, typer.Argument(metavar="BEFORE", help="Dispatch dir (or folder of them) or a saved "
                                              "`hotspot analyze --format json` file.")],
        after: Annotated[str, typer.Argument(metavar="AFTER", help="Same, for the changed kernel.")],
        kernel: KernelOpt = None,
        threshold: Annotated[Optional[float], typer.Option(
            "--threshold", help="Relative change (percent) a row must exceed when no replicate "
            "dispatch gives the noise floor (default 5).")] = None,
        max_waves: MaxWavesOpt = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        def produce():
            from pathlib import Path

            from hotspot.diff.api import diff_paths

            return diff_paths(Path(before), Path(after), kernel, threshold, max_waves)

        raise typer.Exit(run("diff", fmt, produce))
