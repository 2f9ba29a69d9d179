"""One exception root for every expected failure; each carries its exit code and a next step.

Exit codes (documented in README.md and docs/exit-codes.md):
0 ok, 1 internal error, 2 usage, 3 bad or unsupported input, 4 empty trace,
5 required external tool missing, 6 the profiled command failed.
"""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_EMPTY_TRACE = 4
EXIT_TOOL_MISSING = 5
EXIT_COMMAND_FAILED = 6


class HotspotError(Exception):
    """An expected failure: printed as one line plus a hint, never as a traceback."""

    exit_code: int = EXIT_INTERNAL
    code: str = "internal-error"

    def __init__(self, message: str, hint: str = "", *, code: str | None = None,
                 details: dict | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code
        self.details = details or {}


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
