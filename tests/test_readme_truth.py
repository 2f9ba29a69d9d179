"""The README says only true things about the command line: every `hotspot WORD [WORD]` it names
is a command (or subcommand) that exists, and its sentence on which commands take `--format` names
exactly the commands whose help has no `--format`."""

from __future__ import annotations

import re
from pathlib import Path

from typing import Any

import typer

from hotspot.cli import build_app

README = Path(__file__).resolve().parent.parent / "README.md"


def _is_group(command: Any) -> bool:
    return isinstance(getattr(command, "commands", None), dict)


def _root() -> Any:
    """The click group of the whole app (typer's vendored click: typed by duck)."""
    command = typer.main.get_command(build_app())
    assert _is_group(command)
    return command


def _leaves(group: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every runnable command by its words (`("cache", "info")`)."""
    out: dict[tuple[str, ...], Any] = {}
    for name, command in group.commands.items():
        words = (*prefix, name)
        if _is_group(command):
            out.update(_leaves(command, words))
        else:
            out[words] = command
    return out


def test_every_command_the_readme_names_exists() -> None:
    root = _root()
    named = set(re.findall(r"`hotspot ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?", README.read_text()))
    assert named, "the README names no command?"
    for first, second in sorted(named):
        assert first in root.commands, f"README names `hotspot {first}`, which does not exist"
        sub = root.commands[first]
        if _is_group(sub) and second:
            assert second in sub.commands, f"README names `hotspot {first} {second}`, which does not exist"


def test_the_format_sentence_names_the_commands_without_format() -> None:
    m = re.search(r"Every command but (.+?) takes `--format", README.read_text(), re.S)
    assert m, "the README's sentence on --format is gone"
    excepted = {" ".join(words.split()) for words in re.findall(r"`([a-z ]+)`", m.group(1))}
    without = {" ".join(words) for words, command in _leaves(_root()).items()
               if not any("--format" in p.opts for p in command.params)}
    assert excepted == without
