"""`hotspot cache info|clear`: the result cache in the user cache dir (thin adapter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from hotspot.commandspec import CommandSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option

SPEC = CommandSpec(
    "cache", rank=130,
    help="The result cache ($XDG_CACHE_HOME/hotspot): what it holds, and clearing it.",
    group=True,
    views={"cache info": text_and_markdown("hotspot.render.cache", "render_info"),
           "cache clear": text_and_markdown("hotspot.render.cache", "render_clear")},
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    InfoFormatOpt = Any
    ClearFormatOpt = Any
else:
    InfoFormatOpt = format_option("cache info")
    ClearFormatOpt = format_option("cache clear")


def register(app: typer.Typer) -> None:
    cache_app = typer.Typer(help=SPEC.help, no_args_is_help=True)

    @cache_app.command("info", help="Where the cache is, whether it is on, and what it holds.")
    def info(fmt: InfoFormatOpt = "text") -> None:
        def produce() -> Result[object]:
            from hotspot.cache.manage import cache_info

            return cache_info()

        raise typer.Exit(run("cache info", fmt, produce))

    @cache_app.command("clear", help="Remove every cached result (captures are never touched).")
    def clear(fmt: ClearFormatOpt = "text") -> None:
        def produce() -> Result[object]:
            from hotspot.cache.manage import cache_clear

            return cache_clear()

        raise typer.Exit(run("cache clear", fmt, produce))

    app.add_typer(cache_app, name="cache")
