"""Command-line words every layer agrees on. Standard library only and nothing else: the launcher,
the help snapshot and the output cache read argv with them before typer is imported."""

from __future__ import annotations

PRETTY, QUIET, NO_CACHE = "--pretty", "--quiet", "--no-cache"
GLOBAL_FLAGS = (PRETTY, QUIET, NO_CACHE)  # accepted by every command, anywhere before `--`
COMPLETION_ENV = "_HOTSPOT_COMPLETE"  # typer's shell-completion protocol (argv is empty then)


def take(flag: str, args: list[str]) -> tuple[bool, list[str]]:
    """Whether `flag` appears before `--`, and `args` without it there."""
    end = args.index("--") if "--" in args else len(args)
    if flag not in args[:end]:
        return False, args
    return True, [a for a in args[:end] if a != flag] + args[end:]
