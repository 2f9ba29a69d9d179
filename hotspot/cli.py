"""The `hotspot` command line: mounts one thin adapter per command (see hotspot/commands/)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from hotspot import __version__

# Every command module defines `register(app)` and imports only typer at import time (fast --help).
COMMANDS = ("analyze", "occupancy", "pmc", "kernels", "collect", "doctor", "diff", "plan", "report",
            "export", "skill", "sweep")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hotspot {__version__}")
        raise typer.Exit(0)


def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """hotspot: ATT stall analysis for AMD CDNA GPUs."""


def build_app(only: str | None = None) -> typer.Typer:
    """The typer app with every command, or with just `only`: typer builds the click command of
    every mounted command on each call (~80 ms for all of them), so a call that names its
    command mounts that one alone. Help and errors for it read the same either way."""
    import importlib

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
    app.callback()(_root)
    for name in (only,) if only in COMMANDS else COMMANDS:
        importlib.import_module(f"hotspot.commands.{name}").register(app)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code instead of raising SystemExit (testable)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    app = build_app(args[0] if args else None)
    try:
        app(args=args, prog_name="hotspot")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(f"{code}\n")
        return 1
    return 0
