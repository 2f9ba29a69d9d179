"""Opening capture files: every read of an input file goes through here, so that size caps and
failures (missing, directory, permission, FIFOs, devices, symlinks leaving the capture, loops) are
handled once and always name the file."""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path

import orjson

from hotspot.capture.session import kept_bytes, remember_bytes
from hotspot.errors import InputError, bad_file
from hotspot.result import JsonValue

# O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer (the type
# check below then refuses it); it changes nothing for regular files.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# orjson refuses deeper documents itself (1024); the Python code walking snapshots.json and
# friends recurses, so a nesting no decoder writes is refused before that.
MAX_JSON_DEPTH = 64
# csv's default field cap (128 KiB) refuses real kernel names: templated CK names reach ~200k
# characters. Every CSV reader sets this before reading.
CSV_FIELD_LIMIT = 64 * 1024 * 1024


def open_input(path: Path | str, confine: bool = True) -> int:
    """A read-only descriptor on a regular file, or an InputError naming it: FIFOs, sockets and
    devices are refused by type (never read, so never a hang or an endless read), and a symlink is
    followed only when it resolves to a file inside the folder that holds it (`confine`; a user's
    source checkout, read through --source-map, may link anywhere)."""
    try:
        try:
            fd = os.open(path, _OPEN_FLAGS | (_NOFOLLOW if confine else 0))
        except OSError as exc:
            if exc.errno != errno.ELOOP or not _NOFOLLOW or not confine:
                raise
            # the last component is a symlink (O_NOFOLLOW refuses it): check where it leads
            _check_link(path)
            fd = os.open(path, _OPEN_FLAGS)
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise _not_regular(path, mode)
        except BaseException:
            os.close(fd)
            raise
        return fd
    except FileNotFoundError:
        raise bad_file(Path(path), "file not found",
                       "pass an ATT ui_output_agent_*_dispatch_* directory")
    except IsADirectoryError:
        raise bad_file(Path(path), "is a directory, expected a file")
    except PermissionError:
        raise bad_file(Path(path), "permission denied",
                       "make the file readable (chmod u+r) or run as its owner",
                       code="permission-denied")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise bad_file(Path(path), "symbolic link loop", "replace the link by the file it names",
                           code="bad-link")
        raise bad_file(Path(path), f"cannot read ({exc.strerror or exc})", "check the file",
                       code="io-error")


def _check_link(path: Path | str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    try:
        target = os.path.realpath(path, strict=True)
    except FileNotFoundError:
        raise bad_file(Path(path), f"symbolic link to a missing file ({os.readlink(path)})",
                       "restore the file or remove the link", code="bad-link")
    inside = os.path.realpath(folder)
    if os.path.commonpath([target, inside]) != inside:
        raise bad_file(Path(path), f"symbolic link leaves the capture folder (to {target})",
                       "copy the file into the capture folder instead of linking to it",
                       code="bad-link")


def _not_regular(path: Path | str, mode: int) -> InputError:
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a directory" if stat.S_ISDIR(mode) else "not a regular file")
    return bad_file(Path(path), f"is {kind}, expected a regular file",
                    "replace it by the file the decoder wrote", code="not-a-file")


def open_text(path: Path | str, confine: bool = True) -> io.TextIOWrapper:
    """A text reader over `open_input` (CSV and source files): same refusals, same messages."""
    fd = open_input(path, confine)
    try:  # a regular file: O_NONBLOCK has no effect on its reads
        return io.open(fd, "r", newline="", encoding="utf-8", errors="replace")
    except BaseException:
        os.close(fd)
        raise


def is_regular_file(path: Path | str, confine: bool = True) -> bool:
    """`Path.is_file` that never raises (loops, permissions) and never follows a symlink out of
    the folder holding it: the existence checks agree with what `open_input` accepts. Stats only
    (the file is not opened, so a check does not count as a read)."""
    try:
        if confine and stat.S_ISLNK(os.lstat(path).st_mode):
            _check_link(path)
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError, InputError):
        return False


def load_json(path: Path, max_bytes: int | None = None) -> JsonValue:
    """Read and parse one JSON file; every failure names the file."""
    return parse_json(path, read_capped(path, max_bytes))


def read_capped(path: Path | str, max_bytes: int | None = None, confine: bool = True) -> bytes:
    """The bytes of one input file, refused when over `max_bytes`; every failure names the file.
    Plain os calls (`path` may be a str): the wave pass reads ~50,000 files on a large capture.
    Within a capture session, bytes another step asked to keep are served without a second read.
    `confine`: as `open_input`."""
    kept = kept_bytes(os.fspath(path))
    if kept is not None:
        return kept
    data = _read_capped(path, max_bytes, confine)
    remember_bytes(os.fspath(path), data)
    return data


def _read_capped(path: Path | str, max_bytes: int | None, confine: bool = True) -> bytes:
    fd = open_input(path, confine)
    try:
        size = os.fstat(fd).st_size
        if max_bytes is not None and size > max_bytes:
            raise _too_large(path, size, max_bytes)
        data = os.read(fd, size + 1)
        if len(data) != size:  # the file changed size, or a short read: read to the end
            parts = [data]
            total = len(data)
            while parts[-1]:
                parts.append(os.read(fd, 1 << 20))
                total += len(parts[-1])
                if max_bytes is not None and total > max_bytes:
                    raise _too_large(path, total, max_bytes)
            data = b"".join(parts)
        return data
    except OSError as exc:
        raise bad_file(Path(path), f"cannot read ({exc.strerror or exc})", "check the file",
                       code="io-error")
    finally:
        os.close(fd)


def _too_large(path: Path | str, size: int, max_bytes: int) -> InputError:
    return bad_file(Path(path), f"file is {size:,} bytes, over the {max_bytes:,}-byte limit",
                    "raise the limit with --max-file-mb if this file is expected",
                    code="file-too-large")


def parse_json(path: Path, data: bytes) -> JsonValue:
    try:
        doc: JsonValue = orjson.loads(data)
        return doc
    except orjson.JSONDecodeError as exc:
        raise bad_file(path, f"malformed JSON ({exc})",
                       "the file may be truncated; re-run the decoder or re-capture",
                       code="malformed-json")
