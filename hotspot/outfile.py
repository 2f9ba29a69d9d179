"""The one module that writes what the user asked for: standard output, and files (`-o`, run
directories, the skill, cache entries and replays). Layer 0, standard library only (the output
cache's replay imports it: nothing heavier than hotspot.errors at import time).

- `write_stdout`: a command's output; a closed stdout or a write error (a full disk, /dev/full) is
  `StdoutError` (exit 1, one line); BrokenPipeError (the reader left, `| head`) propagates as itself
  for the caller to end quietly.
- `check_target`: an existing target is replaced only when it is a regular file and `force` is
  given: a device (`/dev/null`), a FIFO, a socket, a folder or a symbolic link (say to
  /proc/self/fd/1) is never replaced, not even with --force.
- `replace_atomically`: the one atomic write (a temporary file in the same folder renamed into
  place, so an interrupted run or a full disk leaves neither a partial file nor a changed old
  one); raw OSError, for the result cache, which never fails a command.
- `write_atomically`: `replace_atomically` for a command: the target's type is checked again just
  before the rename, a failure is one line naming the file (exit 3).
  `durable` fsyncs first (a state file other processes and nodes read, such as a sweep's manifest).
- `write_new`: the same, linked to a name that must not exist (`sweep --init`): never replaces.
- `resolve_output` / `write_output`: a command's `-o` file (None = stdout): never over an existing
  file without --force, never over an input of the command at all (a named input, or any file the
  command read: `INPUTS_READ`, which hotspot/capture/session.py sets for the command's duration).
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable, Collection, Sequence
from contextvars import ContextVar

# The output cache's replay writes through `replace_atomically` before the rest of hotspot is
# loaded: typing, pathlib and hotspot.errors are imported where they are needed, not here.
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import BinaryIO, TextIO

    from hotspot.errors import InputError

STDOUT = "-"
# Where a command's document goes instead of stdout: the MCP server runs commands in-process and
# answers with the bytes the command line would print (hotspot/mcp/invoke.py).
OUTPUT_SINK: ContextVar[Callable[[bytes], None] | None] = ContextVar("hotspot_output_sink", default=None)
# The files the running command has read (absolute paths; other items are folder listings): set by
# hotspot/capture/session.py while a command runs, so that no output replaces one of them.
INPUTS_READ: ContextVar[Collection[object] | None] = ContextVar("hotspot_inputs_read", default=None)
TMP_SUFFIX = ".tmp"  # a temporary file: `.<name>.<pid>.<ns>.tmp` beside its target


# --- standard output ---------------------------------------------------------------------------

def write_stdout(text: str | bytes, newline: bool = True) -> None:
    """Write `text` (and a final newline unless it has one) to stdout and flush."""
    from hotspot.errors import StdoutError

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


def stdout_binary() -> "BinaryIO":
    """stdout as a binary stream for a writer that streams (`export -o -`); StdoutError when closed."""
    from hotspot.errors import StdoutError

    if sys.stdout is None:
        raise StdoutError.of(None)
    sys.stdout.flush()
    buf = getattr(sys.stdout, "buffer", None)
    return buf if buf is not None else _TextSink(sys.stdout)  # type: ignore[return-value]  # write/flush: all a writer uses


def _write(out: "TextIO", text: str | bytes, newline: bool) -> None:
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
    from hotspot.diagnostics import printable_in

    text = printable_in(text, getattr(out, "encoding", None))  # `…—█` on an ASCII stdout
    out.write(text)
    if newline and not text.endswith("\n"):
        out.write("\n")
    out.flush()


class _TextSink:
    """A text stream as a binary one (stdout replaced by a StringIO in tests)."""

    def __init__(self, out: "TextIO") -> None:
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
    from hotspot.errors import os_fault

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
    from hotspot.errors import InputError

    kind = target_kind(path)
    if kind not in (None, "file"):
        raise InputError(f"{path}: is {kind}, not a regular file; not replaced, even with --force",
                         "pass -o with a new file name (or -o - for stdout)", code="not-a-file",
                         details={"output": str(path)})


def check_target(path: Path, force: bool, links_later: bool = False) -> None:
    """May `path` be written? Nothing there, or a regular file and `force`. `links_later`: a
    symbolic link is left for `write_atomically` to refuse (after the caller's own checks, e.g.
    that the link does not lead to an input)."""
    from hotspot.errors import InputError

    kind = target_kind(path)
    if not (links_later and kind == "a symbolic link"):
        refuse_special(path)
    if kind == "file" and not force:
        raise InputError(f"{path}: already exists; not overwritten",
                         f"pass -o NEW_FILE, or --force to replace {path}")
    if not path.parent.is_dir():
        raise InputError(f"{path.parent}: no such directory for the output file",
                         "create the directory or pass another -o")


def temp_name(path: str | os.PathLike[str]) -> str:
    """A fresh temporary name beside `path` (tempfile would cost the replay more than all of it)."""
    folder, name = os.path.split(os.fspath(path))
    return os.path.join(folder, f".{name}.{os.getpid()}.{time.monotonic_ns()}{TMP_SUFFIX}")


def replace_atomically(path: str | os.PathLike[str], write: Callable[["BinaryIO"], object], *,
                       private: bool = False, before_replace: Callable[[], None] | None = None,
                       durable: bool = False, commit: Callable[[str, str], bool] | None = None) -> int:
    """The one atomic write: `write` fills a temporary file in the same folder, which is renamed
    over `path`. `private`: mode 0600 (else the usual 0666 & ~umask). `before_replace` runs last
    (a check that may raise). `durable`: the data is fsynced before the rename (readers on other
    nodes never see a renamed file whose data is not on disk yet). `commit(tmp, path)` puts the
    file in place another way (a hard link that never replaces) and says whether it did; else the
    rename. Returns the size written. Any failure (OSError, or what `write`, `before_replace` or
    `commit` raised) propagates as itself, with nothing left behind and `path` unchanged."""
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
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
        if before_replace is not None:
            before_replace()
        if commit is not None and commit(tmp, os.fspath(path)):
            os.unlink(tmp)  # the link holds the data now
        else:
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return size


def move_onto_claimed(current: Path, claimed: Path) -> None:
    """Move the folder `current` onto `claimed`, an empty folder the caller just made to claim the
    name (a rename replaces an empty directory atomically, so two runs never take the same name);
    on failure `claimed` is removed again and the OSError propagates."""
    try:
        os.rename(current, claimed)
    except OSError:
        os.rmdir(claimed)
        raise


def write_atomically(path: Path, write: Callable[["BinaryIO"], object], *,
                     private: bool = False, before_replace: Callable[[], None] | None = None,
                     action: str = "cannot write", durable: bool = False) -> int:
    """`replace_atomically` for a command. The target must be absent or a regular file (checked
    again just before the rename); `durable` as there. Returns the size written. Disk full,
    permission denied, a read-only file system: exit 3 naming the file, nothing left behind."""
    from pathlib import Path

    path = Path(path)
    if target_kind(path) != "a symbolic link":  # a link is refused below, after `before_replace`
        refuse_special(path)                     # (which may name it better: a link to an input)

    def last_checks() -> None:
        if before_replace is not None:
            before_replace()
        refuse_special(path)  # a FIFO or link made while we wrote is not replaced either

    try:
        return replace_atomically(path, write, private=private, before_replace=last_checks,
                                  durable=durable)
    except OSError as exc:
        raise _fault(exc, path, action) from None


def write_new(path: Path, write: Callable[["BinaryIO"], object], *, action: str = "cannot write") -> int:
    """Write a file that must not exist yet, whole or not at all: a temporary file beside it,
    fsynced, then hard-linked to the name (the link fails if the name appeared meanwhile, so
    nothing is ever replaced; on a file system without hard links: checked, then renamed).
    FileExistsError when the name exists (the caller words it); other faults as write_atomically."""
    import errno
    from pathlib import Path

    path = Path(path)
    if os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, "exists", str(path))

    def link(tmp: str, name: str) -> bool:
        try:
            os.link(tmp, name)  # fails if the name appeared meanwhile: nothing is replaced
            return True
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
        if os.path.lexists(name):  # no hard links here: checked, then renamed
            raise FileExistsError(errno.EEXIST, "exists", name)
        return False

    try:
        return replace_atomically(path, write, durable=True, commit=link)
    except FileExistsError:
        raise
    except OSError as exc:
        raise _fault(exc, path, action) from None


def _is_temp_of(name: str | bytes, path: Path) -> bool:
    name = os.fsdecode(name)
    folder, base = os.path.split(name)
    return (folder == str(path.parent) or (folder == "" and str(path.parent) == ".")) \
        and base.startswith(f".{path.name}.") and base.endswith(TMP_SUFFIX)


def _fault(exc: OSError, path: Path, action: str) -> BaseException:
    """Name the output (not its temporary name); an input that failed while being read keeps its own."""
    from hotspot.errors import os_fault

    reading = exc.filename is not None and exc.filename != str(path) and not _is_temp_of(exc.filename, path)
    err = os_fault(exc, exc.filename if reading else path, "" if reading else action)
    if err is None:
        return exc
    if not reading:
        err.hint = f"{err.hint}; nothing was written to {path}"
    return err


# --- a command's output file: never an input --------------------------------------------------

def output_is_input(path: Path, source: str | os.PathLike[str]) -> "InputError":
    from hotspot.errors import InputError
    return InputError(f"{path}: is an input of this command ({os.fspath(source)}); not overwritten, "
                      "even with --force", "write the output elsewhere: -o NEW_FILE", code="output-is-input",
                      details={"output": str(path), "input": os.fspath(source)})


def input_clash(target: str | os.PathLike[str]) -> str | None:
    """The file the running command read that `target` is (the same file: through a symlink,
    `..`, or a hard link), or None. Only an existing target can be one, so a new output costs
    one failed stat."""
    inputs = INPUTS_READ.get()
    if inputs is None:
        return None
    try:
        st = os.stat(target)
    except OSError:
        return None
    ident = (st.st_dev, st.st_ino)
    for path in list(inputs):
        if not isinstance(path, str):  # a listing of a searched folder, not a file read
            continue
        try:
            other = os.stat(path)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == ident:
            return os.fsdecode(path)
    return None


def check_not_input(path: Path, inputs: Sequence[Path] = ()) -> None:
    """Refuse an output that is (symlink, `..`, hard link: the same file) a named input, or a file
    this command has read."""
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
    """The file a command's `-o` names (None = stdout, `-o -`).

    An existing file is never replaced without `force`, whether it was named with `-o` or is the
    default name: it may be the user's earlier report. An input is never replaced at all, nor
    anything that is not a regular file (a device, FIFO, folder or symlink).
    """
    from pathlib import Path

    from hotspot.errors import InputError

    if output == STDOUT:
        return None
    path = Path(output or default)
    check_not_input(path, inputs)
    if path.is_dir() and not path.is_symlink():
        raise InputError(f"{path}: is a directory", "pass -o with a file name")
    check_target(path, force, links_later=True)
    return path


def write_output(path: Path, write: Callable[["BinaryIO"], object]) -> int:
    """A command's output file, written atomically, refusing an input before and after writing
    (the inputs read while writing count too). Returns the size in bytes."""
    check_not_input(path)
    return write_atomically(path, write, before_replace=lambda: check_not_input(path))
