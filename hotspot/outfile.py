"""The one module that writes what the user asked for: standard output, and files (`-o`, run
directories, the skill, cache entries and replays). Layer 0, standard library only.

- `write_stdout`: a command's output; a closed stdout or a write error (a full disk, /dev/full) is
  `StdoutError` (exit 1, one line); BrokenPipeError (the reader left, `| head`) propagates as itself
  for the caller to end quietly.
- `check_target`: an existing target is replaced only when it is a regular file and `force` is
  given: a device (`/dev/null`), a FIFO, a socket, a folder or a symbolic link (say to
  /proc/self/fd/1) is never replaced, not even with --force.
- `write_atomically`: through a temporary file in the same folder renamed into place, so an
  interrupted run or a full disk leaves neither a partial file nor a changed old one; the target's
  type is checked again just before the rename; `durable` fsyncs it first (a state file other
  processes and nodes read, such as a sweep's manifest).
- `write_new`: the same, linked to a name that must not exist (`sweep --init`): never replaces.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO

from hotspot.errors import InputError, StdoutError, os_fault

STDOUT = "-"
# Where a command's document goes instead of stdout: the MCP server runs commands in-process and
# answers with the bytes the command line would print (hotspot/mcp/invoke.py).
OUTPUT_SINK: ContextVar[Callable[[bytes], None] | None] = ContextVar("hotspot_output_sink", default=None)


# --- standard output ---------------------------------------------------------------------------

def write_stdout(text: str | bytes, newline: bool = True) -> None:
    """Write `text` (and a final newline unless it has one) to stdout and flush."""
    sink = OUTPUT_SINK.get()
    if sink is not None:
        sink(text if isinstance(text, bytes) else text.encode("utf-8"))
        return
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise StdoutError.of(None)
    try:
        _write(sys.stdout, text, newline)
    except BrokenPipeError:
        raise
    except OSError as exc:
        quiet_stdout()  # the interpreter's final flush would fail (and print) again
        raise StdoutError.of(exc) from None


def stdout_binary() -> BinaryIO:
    """stdout as a binary stream for a writer that streams (`export -o -`); StdoutError when closed."""
    if sys.stdout is None:
        raise StdoutError.of(None)
    sys.stdout.flush()
    buf = getattr(sys.stdout, "buffer", None)
    return buf if buf is not None else _TextSink(sys.stdout)  # type: ignore[return-value]


def _write(out, text: str | bytes, newline: bool) -> None:  # noqa: ANN001 - a text stream
    if isinstance(text, bytes):
        out.flush()
        buf = getattr(out, "buffer", None)
        if buf is not None:
            buf.write(text)
            if newline:
                buf.write(b"\n")
            buf.flush()
            return
        text = text.decode("utf-8")
    out.write(text)
    if newline and not text.endswith("\n"):
        out.write("\n")
    out.flush()


class _TextSink:
    """A text stream as a binary one (stdout replaced by a StringIO in tests)."""

    def __init__(self, out) -> None:  # noqa: ANN001
        self.out = out

    def write(self, data: bytes) -> int:
        return self.out.write(data.decode("utf-8"))

    def flush(self) -> None:
        self.out.flush()


def quiet_stdout() -> None:
    """Point stdout at /dev/null: after the reader left or a write failed, the interpreter's final
    flush must not complain (nor print a traceback)."""
    out = sys.stdout
    if out is None:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


# --- files -------------------------------------------------------------------------------------

def target_kind(path: Path | str) -> str | None:
    """What is at `path` without following a link: None (nothing), "file" (a regular file), or
    the name of what it is ("a symbolic link", "a FIFO", "a device", "a socket", "a directory")."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        fault = os_fault(exc, path, "cannot check the output")
        if fault is None:
            raise
        raise fault from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def refuse_special(path: Path | str) -> None:
    """Refuse a target that exists and is not a regular file (even with --force)."""
    kind = target_kind(path)
    if kind not in (None, "file"):
        raise InputError(f"{path}: is {kind}, not a regular file; not replaced, even with --force",
                         "pass -o with a new file name (or -o - for stdout)", code="not-a-file",
                         details={"output": str(path)})


def check_target(path: Path, force: bool, links_later: bool = False) -> None:
    """May `path` be written? Nothing there, or a regular file and `force`. `links_later`: a
    symbolic link is left for `write_atomically` to refuse (after the caller's own checks, e.g.
    that the link does not lead to an input)."""
    kind = target_kind(path)
    if not (links_later and kind == "a symbolic link"):
        refuse_special(path)
    if kind == "file" and not force:
        raise InputError(f"{path}: already exists; not overwritten",
                         f"pass -o NEW_FILE, or --force to replace {path}")
    if not path.parent.is_dir():
        raise InputError(f"{path.parent}: no such directory for the output file",
                         "create the directory or pass another -o")


def write_atomically(path: Path, write: Callable[[BinaryIO], object], *,
                     private: bool = False, before_replace: Callable[[], None] | None = None,
                     action: str = "cannot write", durable: bool = False) -> int:
    """Write through a temporary file in the same folder and rename it into place. The target
    must be absent or a regular file (checked again just before the rename). `private`: mode
    0600 (else the usual 0666 & ~umask). `before_replace` runs last (a check that may raise).
    `durable`: the data is fsynced before the rename (readers on other nodes never see a renamed
    file whose data is not on disk yet). Returns the size written. Disk full, permission denied,
    a read-only file system: exit 3 naming the file, nothing left behind."""
    path = Path(path)
    if target_kind(path) != "a symbolic link":  # a link is refused below, after `before_replace`
        refuse_special(path)                     # (which may name it better: a link to an input)
    tmp, size = _write_temp(path, write, durable=durable, private=private, action=action)
    try:
        if before_replace is not None:
            before_replace()
        refuse_special(path)  # a FIFO or link made while we wrote is not replaced either
        os.replace(tmp, path)
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError):
            raise _fault(exc, path, action, tmp) from None
        raise
    return size


def write_new(path: Path, write: Callable[[BinaryIO], object], *, action: str = "cannot write") -> int:
    """Write a file that must not exist yet, whole or not at all: a temporary file beside it,
    fsynced, then hard-linked to the name (the link fails if the name appeared meanwhile, so
    nothing is ever replaced; on a file system without hard links: checked, then renamed).
    FileExistsError when the name exists (the caller words it); other faults as write_atomically."""
    import errno

    path = Path(path)
    if os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, "exists", str(path))
    tmp, size = _write_temp(path, write, durable=True, private=False, action=action)
    try:
        try:
            os.link(tmp, path)  # fails if the name appeared meanwhile: nothing is replaced
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
            if os.path.lexists(path):
                raise FileExistsError(errno.EEXIST, "exists", str(path)) from None
            os.replace(tmp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        raise _fault(exc, path, action, tmp) from None
    finally:
        _unlink(tmp)
    return size


def _write_temp(path: Path, write: Callable[[BinaryIO], object], *, durable: bool, private: bool,
                action: str) -> tuple[str, int]:
    """`write` into a new temporary file beside `path` (mode 0600 while written, then the usual
    0666 & ~umask unless `private`; fsynced when `durable`): its name and size. Removed on any
    failure."""
    tmp = os.path.join(path.parent, f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise _fault(exc, path, action, tmp) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            size = fh.tell()
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if not private:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)  # O_CREAT with 0600; give the file the usual permissions
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError):
            raise _fault(exc, path, action, tmp) from None
        raise
    return tmp, size


def _unlink(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _fault(exc: OSError, path: Path, action: str, tmp: str | None = None) -> BaseException:
    """Name the output (not its temporary name); an input that failed while being read keeps its own."""
    reading = exc.filename is not None and exc.filename not in (tmp, str(path))
    err = os_fault(exc, exc.filename if reading else path, "" if reading else action)
    if err is None:
        return exc
    if not reading:
        err.hint = f"{err.hint}; nothing was written to {path}"
    return err
