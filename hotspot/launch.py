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
    stop_pool_helpers()
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


# How long the end of a command waits for multiprocessing's helper processes to leave once asked
# (they leave in milliseconds; a helper still there after this is killed).
HELPER_EXIT_S = 2.0


def stop_pool_helpers() -> None:
    """Stop the fork server and the resource tracker a wave-pass pool started (hotspot/att/engine/
    wavepass.py), and reap them, before this process exits. Left alone they leave only when they
    read EOF on their pipe, after this process is gone, and an interrupted command ends through
    os._exit, which skips the interpreter's own teardown: both outlived hotspot. The fork server
    goes first (it holds the tracker's pipe too); the tracker then unlinks what the killed pool left.
    Nothing to do (and nothing imported) when no pool ran."""
    forkserver = sys.modules.get("multiprocessing.forkserver")
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    if forkserver is not None:
        server = getattr(forkserver, "_forkserver", None)
        pid = getattr(server, "_forkserver_pid", None)
        if isinstance(pid, int):
            # a worker the server forked while the signal stopped the pool's start of it is in no
            # list the pool kills, and has not yet asked to die with its parent
            _kill_children(pid)
        _stop_helper(server, "_forkserver_pid", "_forkserver_alive_fd")
    if tracker is not None:
        _stop_helper(getattr(tracker, "_resource_tracker", None), "_pid", "_fd")


def _kill_children(parent: int) -> None:
    """SIGKILL every process whose parent is `parent` (Linux: read from /proc; elsewhere nothing)."""
    import signal

    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            if ppid == parent:
                os.kill(int(name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):  # gone meanwhile, or not ours to kill
            continue


def _stop_helper(helper: object, pid_attr: str, fd_attr: str) -> None:
    """Close a multiprocessing helper's "alive" pipe (it leaves on EOF) and reap it, killing it
    after HELPER_EXIT_S. A helper that is not running, or a Python that names these otherwise, is
    left as it is."""
    import signal
    import time

    pid, fd = getattr(helper, pid_attr, None), getattr(helper, fd_attr, None)
    if not isinstance(pid, int) or not isinstance(fd, int):
        return
    try:
        os.close(fd)
    except OSError:
        pass
    setattr(helper, fd_attr, None)
    setattr(helper, pid_attr, None)
    deadline = time.monotonic() + HELPER_EXIT_S
    try:
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.005)
    except (ChildProcessError, ProcessLookupError, OSError):  # already reaped, or not our child
        pass


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
