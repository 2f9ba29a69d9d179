"""One exception root for every expected failure; each carries its exit code and a next step.

Exit codes (documented in README.md and docs/exit-codes.md):
0 ok, 1 internal error, 2 usage, 3 bad or unsupported input, 4 empty trace,
5 required external tool missing, 6 the profiled command failed, 7 nothing to do, 8 not comparable,
9 unusable counters; 128+N when signal N stopped it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
7, 8 and 9 end a command that printed its result: they are the Result's `exit_code`, not errors.
"""

from __future__ import annotations

import errno
import signal
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from hotspot.jsontypes import JsonObject

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_EMPTY_TRACE = 4
EXIT_TOOL_MISSING = 5
EXIT_COMMAND_FAILED = 6
EXIT_NOTHING_TO_DO = 7  # `sweep RECIPES`: every entry asked for has already run; nothing ran or was submitted
EXIT_NOT_COMPARABLE = 8  # `diff` of two different kernels: rows shown, no change called significant
EXIT_UNUSABLE_COUNTERS = 9  # `pmc`: every counter hotspot reads is missing or 0 on the selected dispatches
EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130


class HotspotError(Exception):
    """An expected failure: printed as one line plus a hint, never as a traceback."""

    exit_code: int = EXIT_INTERNAL
    code: str = "internal-error"

    def __init__(self, message: str, hint: str = "", *, code: str | None = None,
                 details: JsonObject | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code
        self.details = details or {}


class StdoutError(HotspotError):
    """Standard output cannot be written (closed, /dev/full, an I/O error): nothing more can be
    said there, so one line on stderr and exit 1. A reader that went away (BrokenPipeError) is
    not this: `| head` is quiet and exit 0."""

    exit_code = EXIT_INTERNAL
    code = "stdout-error"

    @classmethod
    def of(cls, exc: OSError | None) -> "StdoutError":
        reason = "it is closed" if exc is None else (exc.strerror or str(exc))
        return cls(f"cannot write to standard output ({reason})",
                   "redirect stdout to a file or pipe that accepts data, or pass -o FILE where the "
                   "command takes one", details={"errno": exc.errno if exc is not None else None})


class UsageError(HotspotError):
    exit_code = EXIT_USAGE
    code = "usage"


class InputError(HotspotError):
    """Bad, unreadable or unsupported input. Name the file (and field) in the message."""

    exit_code = EXIT_BAD_INPUT
    code = "bad-input"


class EmptyTraceError(HotspotError):
    """The trace holds no executed instructions: a result, not a crash."""

    exit_code = EXIT_EMPTY_TRACE
    code = "empty-trace"


class ToolMissingError(HotspotError):
    exit_code = EXIT_TOOL_MISSING
    code = "tool-missing"


class CommandFailedError(HotspotError):
    exit_code = EXIT_COMMAND_FAILED
    code = "command-failed"


def bad_file(path: Path | str, problem: str, hint: str = "", *, code: str = "bad-input") -> InputError:
    """An InputError whose message starts with the file name, as every reader reports."""
    return InputError(f"{path}: {problem}", hint, code=code)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C raises KeyboardInterrupt: every cleanup written for
    Ctrl-C (children stopped, run.json marked interrupted) then runs for them too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def interrupt_exit_code(exc: BaseException | None = None) -> int:
    """128 + the signal that stopped us (the shell's convention): 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


def signal_name(signum: int) -> str:
    return "Ctrl-C (SIGINT)" if signum == signal.SIGINT else signal.Signals(signum).name


class ClientCancelled(KeyboardInterrupt):
    """Raised in a tool call's thread by the MCP server (hotspot/mcp/server.py) when the client
    gives the call up: every cleanup written for Ctrl-C runs (a collect stops its profiler, run.json
    says interrupted, exit 130), and the messages say what happened, not a signal nobody sent."""

    signum = signal.SIGINT
    reason = "cancelled by the MCP client (its request timed out or was cancelled, or it closed the connection)"


def interruption(exc: BaseException | None = None, signum: int | None = None) -> str:
    """What stopped a command, said in its messages: "interrupted by Ctrl-C (SIGINT)", "interrupted
    by SIGTERM", or the reason a ClientCancelled gives."""
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str):
        return reason
    return f"interrupted by {signal_name(signum if signum is not None else interrupt_exit_code(exc) - 128)}"


# errno -> (error code, next step) for the environment faults a command can meet while writing or
# reading: they are the machine's state, not a bug in hotspot, so they get exit 3 and a next step.
_OS_FAULTS = {
    errno.ENOSPC: ("disk-full", "free space on that file system, or write somewhere else"),
    errno.EDQUOT: ("disk-full", "the disk quota is used up: free space, or write somewhere else"),
    errno.EFBIG: ("disk-full", "the file size limit was reached (ulimit -f): raise it, or write less"),
    errno.EACCES: ("permission-denied", "check the permissions of that path, or use another one"),
    errno.EPERM: ("permission-denied", "check the permissions of that path, or use another one"),
    errno.EROFS: ("permission-denied", "that file system is read-only: write somewhere else"),
    errno.EIO: ("io-error", "the device reported an I/O error: check the disk, or use another path"),
    errno.ENAMETOOLONG: ("io-error", "use a shorter path"),
    errno.ELOOP: ("io-error", "a symbolic link loops: fix or remove it"),
    errno.ENOTDIR: ("io-error", "a component of the path is a file, not a directory"),
    errno.EMFILE: ("io-error", "too many open files: raise `ulimit -n`"),
    errno.ENFILE: ("io-error", "the system is out of file handles: retry later"),
}


def os_fault(exc: OSError, path: Path | str | None = None, action: str = "") -> InputError | None:
    """An environment fault (disk full, permission denied, read-only file system...) as an
    InputError naming the path, or None when `exc` is not one of those (then it is a bug)."""
    fault = _OS_FAULTS.get(exc.errno or 0)
    if fault is None:
        return None
    code, hint = fault
    where = path if path is not None else exc.filename
    reason = exc.strerror or str(exc)
    what = f"{action}: {reason}" if action else reason
    return InputError(f"{where}: {what}" if where is not None else what, hint, code=code,
                      details={"path": str(where) if where is not None else None, "errno": exc.errno})
