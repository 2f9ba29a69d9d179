"""The `hotspot` command line: mounts one thin adapter per command (see hotspot/commands/)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from hotspot import __version__

app = typer.Typer(
    name="hotspot",
    help="Which instruction is waiting, for what, and what to change: AMD GPU (gfx942/gfx950) "
    "ATT and counter analysis.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hotspot {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """hotspot: ATT stall analysis for AMD CDNA GPUs."""


def _mount() -> None:
    # Each module defines `register(app)` and imports only typer at import time (fast --help).
    import importlib

    for name in ("analyze", "occupancy", "pmc", "kernels", "collect", "doctor", "diff", "plan",
                 "report", "export", "skill"):
        importlib.import_module(f"hotspot.commands.{name}").register(app)


_mount()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code instead of raising SystemExit (testable)."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name="hotspot")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(f"{code}\n")
        return 1
    return 0
