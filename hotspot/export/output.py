"""Where `report` / `export` write: never clobber a user's file by default, never an input at all
(not even with --force), write atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from hotspot.capture.session import input_clash
from hotspot.errors import InputError, os_fault

STDOUT = "-"


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
    default name: it may be the user's earlier report. An input is never replaced at all.
    """
    if output == STDOUT:
        return None
    path = Path(output or default)
    check_not_input(path, inputs)
    if path.exists() and not path.is_dir() and not force:
        raise InputError(f"{path}: already exists; not overwritten",
                         f"pass -o NEW_FILE, or --force to replace {path}")
    if path.is_dir():
        raise InputError(f"{path}: is a directory", "pass -o with a file name")
    if not path.parent.is_dir():
        raise InputError(f"{path.parent}: no such directory for the output file",
                         "create the directory or pass another -o")
    return path


def write_atomically(path: Path, write: Callable[[BinaryIO], None]) -> int:
    """Write through a temporary file in the same directory and rename it into place, so an
    interrupted run or a full disk never leaves a truncated file behind (nor touches an existing
    one). Returns the size in bytes. Disk full, permission denied, a read-only file system: exit 3
    naming the file."""
    check_not_input(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _fault(exc, path, exc.filename) from None  # names the temporary: say the output
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600; give the file the usual permissions
        check_not_input(path)  # the inputs read while writing count too
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _fault(exc, path, tmp) from None
        raise
    return path.stat().st_size


def _fault(exc: OSError, path: Path, tmp: str | None = None) -> BaseException:
    """Name the output (not its temporary name); an input that failed while being read keeps its own."""
    reading = exc.filename is not None and exc.filename not in (tmp, str(path))
    err = os_fault(exc, exc.filename if reading else path, "" if reading else "cannot write")
    if err is None:
        return exc
    if not reading:
        err.hint = f"{err.hint}; nothing was written to {path}"
    return err
