"""Where `report` / `export` write: never clobber a user's file by default, write atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from hotspot.errors import InputError

STDOUT = "-"


def resolve_output(output: str | None, default: str, force: bool) -> Path | None:
    """The file to write (None = stdout).

    An existing file is never replaced without `--force`, whether it was named with `-o` or is the
    default name: it may be the user's earlier report.
    """
    if output == STDOUT:
        return None
    path = Path(output or default)
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
    interrupted run never leaves a truncated report behind. Returns the size in bytes."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path.stat().st_size
