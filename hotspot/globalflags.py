"""Command-line words every layer agrees on. Standard library only and nothing else: the launcher,
the help snapshot and the output cache read argv with them before typer is imported."""

from __future__ import annotations

PRETTY, QUIET, NO_CACHE, NO_COLOR = "--pretty", "--quiet", "--no-cache", "--no-color"
GLOBAL_FLAGS = (PRETTY, QUIET, NO_CACHE, NO_COLOR)  # accepted by every command, anywhere before `--`
COMPLETION_ENV = "_HOTSPOT_COMPLETE"  # typer's shell-completion protocol (argv is empty then)


def take(flag: str, args: list[str]) -> tuple[bool, list[str]]:
    """Whether `flag` appears before `--`, and `args` without it there."""
    end = args.index("--") if "--" in args else len(args)
    if flag not in args[:end]:
        return False, args
    return True, [a for a in args[:end] if a != flag] + args[end:]


def requested_format(args: list[str]) -> str | None:
    """The `--format` the command line asks for (`--format X` or `--format=X` before `--`; the
    last one wins, as in the parser), read from the raw words: the one reading of it outside the
    command's own options, for what answers before or without the command (a usage error, which
    can stop parsing before `--format` is reached; an interrupt while the CLI loads)."""
    end = args.index("--") if "--" in args else len(args)
    found = None
    for i, arg in enumerate(args[:end]):
        if arg.startswith("--format="):
            found = arg[len("--format="):]
        elif arg == "--format" and i + 1 < end:
            found = args[i + 1]
    return found
