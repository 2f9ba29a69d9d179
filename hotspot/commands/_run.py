"""Shared command plumbing: run a use case, render its Result, map failures to exit codes."""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import TYPE_CHECKING, Callable, cast

if TYPE_CHECKING:
    from collections.abc import Collection

    from hotspot.errors import HotspotError
    from hotspot.result import Result


from hotspot.diagnostics import warn_all
from hotspot.outfile import quiet_stdout
from hotspot.outfile import write_stdout as _write_stdout
from hotspot.signals import signals_as_interrupts


def _report(command: str, fmt: str, err: "HotspotError") -> int:
    """One line on stderr, and the JSON envelope on stdout under --format json."""
    from hotspot.diagnostics import fit_diagnostic, printable
    from hotspot.errors import HotspotError
    from hotspot.result import dumps, error_envelope

    exit_code = err.exit_code if err.code != "usage" else 2
    line = f"hotspot {command}: {err.message}"
    if err.hint:
        line += f" (next: {err.hint})"
    # control characters from names and paths shown escaped; one line even if a name holds newlines
    sys.stderr.write(fit_diagnostic(printable(line, newlines=False)) + "\n")
    if fmt == "json" and err.code != "stdout-error":
        try:
            _write_stdout(dumps(error_envelope(command, err.code, exit_code, err.message,
                                               err.hint, details=err.details)))
        except (BrokenPipeError, HotspotError):  # nothing more can be said there
            quiet_stdout()
    return exit_code


def interrupted_error(exc: BaseException) -> "HotspotError":
    """The error an interrupt (Ctrl-C, SIGTERM, SIGHUP) ends a command with: exit 128 + signal."""
    from hotspot.errors import HotspotError, interrupt_exit_code, interruption

    code = interrupt_exit_code(exc)
    err = HotspotError(interruption(exc), "rerun the command", code="interrupted",
                       details={"signal": code - 128})
    err.exit_code = code
    return err


def run(command: str, fmt: str, produce: Callable[[], "Result[object]"], view: str | None = None,
        sections: Callable[[], "Collection[str] | None"] | None = None) -> int:
    """Run `produce` inside one capture session, print the Result in `fmt` (the renderer the
    registry, hotspot/render/registry.py, names for `view`, by default the command; the sections
    `sections()` names, hotspot/render/sections.py, its default when None), return the exit code.
    Never raises."""
    from hotspot.errors import HotspotError

    fmt = fmt.value if isinstance(fmt, Enum) else str(fmt)
    from hotspot.capture import capture_session
    from hotspot.render.registry import renderer as registered

    try:
        with signals_as_interrupts(), capture_session():
            result = produce()
        if fmt == "json":
            _write_stdout(result.to_json())
        else:
            renderer = registered(view or command, fmt)
            if renderer is None:
                raise HotspotError(f"--format {fmt} is not available for '{command}'",
                                   "use --format text or --format json", code="usage")
            if fmt in ("text", "markdown"):
                from hotspot.render.escape import escaped

                result = cast("Result[object]", escaped(result))  # names, Source text, paths: one line each, printable
            from hotspot.render.sections import showing

            with showing(sections() if sections is not None else None):
                text = renderer(result)
            if fmt in ("text", "markdown") and isinstance(text, str):
                from hotspot.diagnostics import printable

                # the one place text and markdown reach stdout: control characters from names,
                # source lines and paths are shown escaped, never sent to the terminal
                text = printable(text)
            if fmt == "text" and isinstance(text, str):
                from hotspot.render.tables import fit_text

                text = fit_text(text)
                from hotspot.diagnostics import color_on

                if color_on(sys.stdout):
                    from hotspot.render.color import colorize

                    text = colorize(text)
            elif fmt == "markdown" and isinstance(text, str):
                from hotspot.render.tables import fit_markdown

                text = fit_markdown(text)  # prose wrapped: the same document, rendered
            _write_stdout(text)
        if fmt != "json":
            warn_all(result.warnings)  # the resource caveats folded into one line
        return result.exit_code  # decided with the result (the same in every format)
    except HotspotError as err:
        return _report(command, fmt, err)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP as Terminated
        return _report(command, fmt, interrupted_error(exc))
    except BrokenPipeError:
        # The reader went away (`| head`): not an error. Point stdout at /dev/null so the
        # interpreter's final flush does not complain.
        quiet_stdout()
        return 0
    except OSError as exc:
        from hotspot.errors import os_fault

        fault = os_fault(exc)  # disk full, permission denied...: the machine's state, exit 3
        if fault is not None and not os.environ.get("HOTSPOT_DEBUG"):
            return _report(command, fmt, fault)
        return _internal(command, fmt, exc)
    except Exception as exc:  # noqa: BLE001 - last line of defence: one line, exit 1
        return _internal(command, fmt, exc)


def _internal(command: str, fmt: str, exc: Exception) -> int:
    from hotspot.errors import EXIT_INTERNAL, HotspotError
    from hotspot.result import dumps, error_envelope

    if os.environ.get("HOTSPOT_DEBUG"):
        raise exc
    msg = f"internal error: {type(exc).__name__}: {exc}"
    from hotspot.diagnostics import printable

    sys.stderr.write(f"hotspot {command}: {printable(msg, newlines=False)} (next: rerun with HOTSPOT_DEBUG=1 for a "
                     "traceback and report it)\n")
    if fmt == "json":
        try:
            _write_stdout(dumps(error_envelope(command, "internal-error", EXIT_INTERNAL, msg,
                                               "rerun with HOTSPOT_DEBUG=1 and report the traceback")))
        except (BrokenPipeError, HotspotError):
            quiet_stdout()
    return EXIT_INTERNAL
