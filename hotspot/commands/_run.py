"""Shared command plumbing: run a use case, render its Result, map failures to exit codes."""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from hotspot.result import Result


from hotspot.commands.options import Format, FormatWithHtml  # noqa: F401  (re-used by commands)
from hotspot.diagnostics import progress, warn  # noqa: F401
from hotspot.render.registry import Renderer
from hotspot.render.registry import lazy as lazy


def _write_stdout(text: str | bytes) -> None:
    out = sys.stdout
    if isinstance(text, bytes):
        out.flush()
        buf = getattr(out, "buffer", None)
        if buf is not None:
            buf.write(text)
            buf.write(b"\n")
            buf.flush()
            return
        text = text.decode("utf-8")
    out.write(text)
    if not text.endswith("\n"):
        out.write("\n")
    out.flush()


def run(command: str, fmt: str, produce: Callable[[], "Result"],
        renderers: dict[str, Renderer] | None = None) -> int:
    """Run `produce` inside one capture session, print the Result in `fmt` (renderers from the
    registry unless given), return the exit code. Never raises."""
    from hotspot.errors import EXIT_INTERNAL, HotspotError
    from hotspot.result import dumps, error_envelope

    fmt = fmt.value if isinstance(fmt, Enum) else str(fmt)
    from hotspot.capture.session import capture_session
    from hotspot.render.registry import renderers as registered

    if renderers is None:
        renderers = registered(command)
    try:
        with capture_session():
            result = produce()
        if fmt == "json":
            _write_stdout(result.to_json())
        else:
            renderer = (renderers or {}).get(fmt)
            if renderer is None:
                raise HotspotError(f"--format {fmt} is not available for '{command}'",
                                   "use --format text or --format json", code="usage")
            text = renderer(result)
            if fmt in ("text", "markdown") and isinstance(text, str):
                from hotspot.diagnostics import printable

                # the one place text and markdown reach stdout: control characters from names,
                # source lines and paths are shown escaped, never sent to the terminal
                text = printable(text)
            if fmt == "text" and isinstance(text, str):
                from hotspot.render.tables import fit_text

                text = fit_text(text)
            _write_stdout(text)
        if fmt != "json":
            for w in result.warnings:
                warn(w)
        return getattr(result, "exit_code", 0) or 0
    except HotspotError as err:
        exit_code = err.exit_code if err.code != "usage" else 2
        line = f"hotspot {command}: {err.message}"
        if err.hint:
            line += f" (next: {err.hint})"
        from hotspot.diagnostics import fit_diagnostic, printable

        sys.stderr.write(fit_diagnostic(printable(line, newlines=False)) + "\n")
        if fmt == "json":
            _write_stdout(dumps(error_envelope(command, err.code, exit_code, err.message,
                                               err.hint, details=err.details)))
        return exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"hotspot {command}: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): not an error. Point stdout at /dev/null so the
        # interpreter's final flush does not complain.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - last line of defence: one line, exit 1
        if os.environ.get("HOTSPOT_DEBUG"):
            raise
        msg = f"internal error: {type(exc).__name__}: {exc}"
        from hotspot.diagnostics import printable

        sys.stderr.write(f"hotspot {command}: {printable(msg, newlines=False)} (next: rerun with HOTSPOT_DEBUG=1 for a "
                         "traceback and report it)\n")
        if fmt == "json":
            _write_stdout(dumps(error_envelope(command, "internal-error", EXIT_INTERNAL, msg,
                                               "rerun with HOTSPOT_DEBUG=1 and report the traceback")))
        return EXIT_INTERNAL
