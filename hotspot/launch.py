"""The `hotspot` console script and `python -m hotspot`: print a help page from its snapshot
(hotspot/clihelp), or replay a cached output when the command line qualifies and nothing it read
has changed (hotspot/cache/output.py), before typer or the analysis is imported; otherwise run the
CLI, recording the output for next time."""

from __future__ import annotations

import os
import sys


# 128 + SIGHUP, SIGINT, SIGTERM (hotspot/errors.py interrupt_exit_code)
INTERRUPTED_CODES = (129, 130, 143)


def main() -> int:
    try:
        return _main()
    except KeyboardInterrupt:
        # Ctrl-C before the CLI took over signals (while importing): the same line and code as
        # any interrupted command, never a traceback.
        _quiet_stdout()
        try:
            sys.stderr.write("hotspot: interrupted by Ctrl-C (SIGINT)\n")
        except (OSError, AttributeError):
            pass
        return 130


def _main() -> int:
    argv = sys.argv[1:]
    from hotspot.clihelp import serve

    code = serve(argv)  # before the cache: printing a page costs less than replaying it
    if code is not None:
        return code
    plan = None
    try:
        from hotspot.cache import output

        plan = output.plan(argv)
        if plan is not None:
            code = output.replay(plan)
            if code is not None:
                return code
    except BrokenPipeError:  # the reader went away during a replay (`| head`): not an error
        _quiet_stdout()
        return 0
    except Exception:  # noqa: BLE001 - the cache never stands between the user and the command
        plan = None
    from hotspot.cli import main as cli_main

    code = cli_main(argv) if plan is None else output.run_and_store(plan, cli_main, argv)
    _ignore_late_signals()
    code = _flushed(code)
    if code in INTERRUPTED_CODES:
        # Interrupted: everything the command owed is written and flushed (run.json, the envelope,
        # the one line). The interpreter's teardown (joining a process pool's threads, freeing a
        # large analysis) took another ~0.3 s after the signal; a scheduler's kill should not wait.
        try:
            sys.stderr.flush()
        except (OSError, AttributeError):
            pass
        os._exit(code)
    return code


def _ignore_late_signals() -> None:
    """The command has ended and said so: a signal now (during the interpreter's shutdown) would
    kill it mid-exit (status -2, or a traceback) and belie what was printed."""
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):
            pass


def _flushed(code: int) -> int:
    """Flush stdout before the interpreter does: a write error there (a full disk) becomes one line
    and exit 1 instead of a message about an ignored exception."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except OSError as exc:
        _quiet_stdout()
        sys.stderr.write(f"hotspot: cannot write to standard output ({exc.strerror or exc})\n")
        return code or 1
    return code


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
