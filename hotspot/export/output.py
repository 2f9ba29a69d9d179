"""Where `report` / `export` write: never clobber a user's file by default, never an input at all
(not even with --force), write atomically."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from hotspot.capture import input_clash
from hotspot import outfile
from hotspot.errors import InputError
from hotspot.outfile import STDOUT, check_target


def output_is_input(path: Path, source: str | os.PathLike) -> InputError:
    return InputError(f"{path}: is an input of this command ({os.fspath(source)}); not overwritten, "
                      "even with --force", "write the output elsewhere: -o NEW_FILE", code="output-is-input",
                      details={"output": str(path), "input": os.fspath(source)})


def check_not_input(path: Path, inputs: Sequence[Path] = ()) -> None:
    """Refuse an output that is (symlink, `..`, hard link: the same file) a named input, or a file
    this command has read (hotspot/capture/session.py records them)."""
    for source in inputs:
        try:
            if path.exists() and source.is_file() and os.path.samefile(path, source):
                raise output_is_input(path, source)
        except OSError:
            continue
    clash = input_clash(path)
    if clash is not None:
        raise output_is_input(path, clash)


def resolve_output(output: str | None, default: str, force: bool,
                   inputs: Sequence[Path] = ()) -> Path | None:
    """The file to write (None = stdout).

    An existing file is never replaced without `--force`, whether it was named with `-o` or is the
    default name: it may be the user's earlier report. An input is never replaced at all, nor
    anything that is not a regular file (a device, FIFO, folder or symlink: hotspot/outfile.py).
    """
    if output == STDOUT:
        return None
    path = Path(output or default)
    check_not_input(path, inputs)
    if path.is_dir() and not path.is_symlink():
        raise InputError(f"{path}: is a directory", "pass -o with a file name")
    check_target(path, force, links_later=True)
    return path


def write_atomically(path: Path, write: Callable[[BinaryIO], None]) -> int:
    """hotspot/outfile.py's atomic write, refusing an input before and after writing (the inputs
    read while writing count too). Returns the size in bytes."""
    check_not_input(path)
    return outfile.write_atomically(path, write, before_replace=lambda: check_not_input(path))
