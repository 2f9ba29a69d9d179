"""The `hotspot` command line: mounts one thin adapter per command (see hotspot/commands/)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import typer

from hotspot._version import __version__
# The commands (name -> adapter module, help, group, cacheable): the command index, each adapter's
# SPEC (hotspot/commandspec.py) collected by scripts/gen_help.py. Every adapter defines
# `register(app)` and imports only typer at import time (fast --help).
from hotspot.clihelp.index import COMMANDS
from hotspot.globalflags import COMPLETION_ENV, NO_CACHE, NO_COLOR, PRETTY, requested_format, take
from hotspot.globalflags import QUIET as QUIET_FLAG

if TYPE_CHECKING:
    from types import ModuleType

    from typer._click import ClickException

def _version(value: bool) -> None:
    if value:
        typer.echo(f"hotspot {__version__}")
        raise typer.Exit(0)


def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit."),
          pretty: bool = typer.Option(False, PRETTY,
                                      help="Indent JSON output (any command; compact by default)."),
          quiet: bool = typer.Option(False, QUIET_FLAG,
                                     help="No progress lines on stderr (any command)."),
          no_cache: bool = typer.Option(False, NO_CACHE,
                                        help="Neither reuse nor store cached results (any "
                                        "command; also HOTSPOT_CACHE=off)."),
          no_color: bool = typer.Option(False, NO_COLOR,
                                        help="No colors on a terminal (any command; also NO_COLOR "
                                        "set to any value).")
          ) -> None:
    """hotspot: ATT stall analysis for AMD CDNA GPUs."""


# What `hotspot --help` lists, in typer's order (commands, then command groups), so that the
# top-level help does not import and build every command (~60 ms): (name, help, is a group).
# tests/test_cli_surface.py checks that this is exactly what the real commands register.
LISTING: tuple[tuple[str, str, bool], ...] = tuple(
    (name, text, group) for grouped in (False, True)
    for name, (_, text, group, _) in COMMANDS.items() if group == grouped)


def build_app(only: str | None = None, listing_only: bool = False,
              commands: Mapping[str, str] | None = None) -> typer.Typer:
    """The typer app with every command, or with just `only`: typer builds the click command of
    every mounted command on each call (~80 ms for all of them), so a call that names its
    command mounts that one alone. Help and errors for it read the same either way. With
    `listing_only` (no command named: top-level help, --version, an unknown command) the commands
    are mounted as empty stubs carrying their help from LISTING. `commands` (name -> adapter
    module) replaces the index's (scripts/gen_help.py, writing the index, mounts what it found)."""
    import importlib

    app = typer.Typer(
        name="hotspot",
        help="Which instruction is waiting, for what, and what to change: AMD GPU (gfx942/gfx950) "
        "ATT and counter analysis.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        add_completion=True,  # --install-completion / --show-completion (shellingham on use only)
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    if listing_only and only not in COMMANDS:
        for name, text, group in LISTING:
            if group:
                app.add_typer(typer.Typer(), name=name, help=text)
            else:
                app.command(name, help=text)(_stub)
        return app
    modules = commands if commands is not None else {name: entry[0] for name, entry in COMMANDS.items()}
    for module in [modules[only]] if only is not None and only in modules else modules.values():
        importlib.import_module(module).register(app)
    _global_flags_in_help(app)
    return app


GLOBAL_EPILOG = ("Global options (any command, anywhere before --): --pretty indents JSON, --quiet "
                 "drops progress lines on stderr, --no-cache neither reuses nor stores cached "
                 "results (also HOTSPOT_CACHE=off), --no-color prints no colors on a terminal "
                 "(also NO_COLOR).")


def _global_flags_in_help(app: typer.Typer) -> None:
    """Every command's help names the global options (they are taken out of argv before typer
    parses it, so typer would show them only in the top-level help)."""
    apps = [app]
    while apps:
        current = apps.pop()
        for info in current.registered_commands:
            if info.epilog is None:
                info.epilog = GLOBAL_EPILOG
        for group in current.registered_groups:
            if group.typer_instance is not None:
                apps.append(group.typer_instance)


def _stub() -> None:  # pragma: no cover - never invoked: a named command mounts the real one
    raise typer.Exit(2)


def _take_global_flags(args: list[str]) -> list[str]:
    """`--pretty` (indent JSON), `--quiet` (no progress on stderr), `--no-cache` and `--no-color`
    are accepted by every command, anywhere before `--`: they are taken out here and set their
    process-wide mode, so no command has to thread them through. Each call sets all four (an in-process caller may
    run several command lines)."""
    from hotspot.cache.store import DISABLED
    from hotspot.diagnostics import COLOR, QUIET

    pretty, args = take(PRETTY, args)
    QUIET["on"], args = take(QUIET_FLAG, args)
    DISABLED["on"], args = take(NO_CACHE, args)
    COLOR["off"], args = take(NO_COLOR, args)
    if pretty:
        from hotspot.result import PRETTY as PRETTY_MODE

        PRETTY_MODE["on"] = True
    else:  # reset an earlier call's --pretty; not loaded yet means off (help stays light)
        result = sys.modules.get("hotspot.result")
        if result is not None:
            result.PRETTY["on"] = False
    return args


def _usage_error(exc: "ClickException", fmt: str | None) -> int:
    """A parse/usage error: click's message on stderr and, under --format json, one error envelope
    on stdout (error.code = "usage", exit 2) so a caller that reads JSON always gets a document."""
    from hotspot.errors import EXIT_USAGE
    from hotspot.result import dumps, error_envelope

    exc.show()
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else "hotspot"
    command = path.split(" ", 1)[1] if " " in path else ""
    if fmt == "json":
        from hotspot.errors import StdoutError
        from hotspot.outfile import quiet_stdout, write_stdout

        hint = f"run 'hotspot {command} --help' for the options".replace("  ", " ")
        try:
            write_stdout(dumps(error_envelope(command, "usage", EXIT_USAGE, exc.format_message(), hint)))
        except (BrokenPipeError, StdoutError):  # the usage message on stderr said it all
            quiet_stdout()
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code instead of raising SystemExit (testable)."""
    try:  # typer >= 0.26 vendors click; older releases depend on it
        from typer import _click as click
    except ImportError:  # pragma: no cover
        import click  # type: ignore[no-redef]  # typer releases that depend on click

    args = list(argv) if argv is not None else sys.argv[1:]
    # What answers without the command (a usage error, an interrupt) answers in this format; the
    # command itself gets its --format from its parsed options.
    fmt = requested_format(args)
    from hotspot.signals import signals_as_interrupts

    with signals_as_interrupts():
        try:
            return _main(args, fmt, click)
        except KeyboardInterrupt as exc:  # before or after a command ran (parsing, importing)
            return _interrupted(exc, args, fmt)
        except OSError as exc:
            # Commands report their own failures (commands/_run.py); what reaches here is click
            # or typer printing (--version, a usage message) to a stdout that cannot take it.
            return _stdout_failed(exc)


def _stdout_failed(exc: OSError) -> int:
    from hotspot.errors import StdoutError
    from hotspot.outfile import quiet_stdout

    quiet_stdout()
    if isinstance(exc, BrokenPipeError):
        return 1  # as click ends on a closed pipe: nothing said
    err = StdoutError.of(exc)
    try:
        sys.stderr.write(f"hotspot: {err.message} (next: {err.hint})\n")
    except (OSError, AttributeError):
        pass
    return err.exit_code


def _interrupted(exc: BaseException, args: Sequence[str], fmt: str | None) -> int:
    """Ctrl-C/SIGTERM/SIGHUP outside a command's own handling: one line, and the JSON envelope."""
    from hotspot.commands._run import interrupted_error
    from hotspot.result import dumps, error_envelope

    err = interrupted_error(exc)
    sys.stderr.write(f"hotspot: {err.message}\n")
    if fmt == "json":
        from hotspot.errors import StdoutError
        from hotspot.outfile import quiet_stdout, write_stdout

        command = next((a for a in args if not a.startswith("-")), "")
        try:
            write_stdout(dumps(error_envelope(command, err.code, err.exit_code, err.message, err.hint,
                                              details=err.details)))
        except (BrokenPipeError, StdoutError):
            quiet_stdout()
    return err.exit_code


def _main(args: list[str], fmt: str | None, click: ModuleType) -> int:  # typer's vendored click or click
    args = _take_global_flags(args)
    import os

    completing = any(k.startswith(COMPLETION_ENV) for k in os.environ)
    app = build_app(args[0] if args else None, listing_only=not completing)
    try:
        command = typer.main.get_command(app)
        code = command.main(args=args, prog_name="hotspot", standalone_mode=False)
    except click.exceptions.UsageError as exc:
        return _usage_error(exc, fmt)
    except click.ClickException as exc:
        exc.show()
        exit_code: int = exc.exit_code
        return exit_code
    except (typer.Abort, getattr(click.exceptions, "Abort", typer.Abort)) as exc:
        # click turns a KeyboardInterrupt into Abort; the signal is in its cause
        return _interrupted(exc.__cause__ or exc.__context__ or exc, args, fmt)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(f"{code}\n")
        return 1
    return code if isinstance(code, int) else 0
