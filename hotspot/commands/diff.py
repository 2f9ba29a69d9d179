"""`hotspot diff`: did the fix work? Same code or not, then each row tested against noise (thin adapter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option, KernelOpt, MaxWavesOpt

SPEC = CommandSpec(
    "diff", rank=70,
    help=("Compare BEFORE and AFTER (dispatch dirs or saved analyze JSON): same code or not, "
          "then totals, categories, source lines and blamed loads, each tested against capture "
          "noise."),
    cacheable=True,
    views={"diff": {**text_and_markdown("hotspot.render.diff", "render_text", "render_markdown"),
                    "csv": "hotspot.render.csv_views:render_diff"}},
    tools=(ToolSpec("diff", paths=frozenset({"before", "after"}), rank=3),),
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
else:
    FormatOpt = format_option("diff")


def register(app: typer.Typer) -> None:
    @app.command("diff", help=SPEC.help,
                 no_args_is_help=True)
    def diff(
        before: Annotated[str, typer.Argument(metavar="BEFORE", help="Dispatch dir (or folder of them) or a saved "
                                              "`hotspot analyze --format json` file.")],
        after: Annotated[str, typer.Argument(metavar="AFTER", help="Same, for the changed kernel.")],
        kernel: KernelOpt = None,
        max_waves: MaxWavesOpt = None,
        seed: Annotated[int, typer.Option(
            "--seed", help="Seed of the bootstrap (the same seed gives the same intervals).")] = 29,
        fmt: FormatOpt = "text",
    ) -> None:
        def produce() -> Result[object]:
            from pathlib import Path

            from hotspot.diff.api import diff_paths

            return diff_paths(Path(before), Path(after), kernel, max_waves, seed)

        raise typer.Exit(run("diff", fmt, produce))
