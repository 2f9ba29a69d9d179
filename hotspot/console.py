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
# How long it waits for the fork server to be stopped (SIGSTOP takes hold when it next runs: on a
# loaded machine that can take a while; past this, the orphan sweep below still finds its workers).
HELPER_STOP_S = 5.0


def stop_pool_helpers() -> None:
    """Stop the fork server and the resource tracker a wave-pass pool started (hotspot/att/engine/
    wavepass.py), and reap them, before this process exits. Left alone they leave only when they
    read EOF on their pipe, after this process is gone, and an interrupted command ends through
    os._exit, which skips the interpreter's own teardown: both outlived hotspot. The fork server
    goes first (it holds the tracker's pipe too); the tracker then unlinks what is left.
    Nothing to do (and nothing imported) when no pool ran."""
    forkserver = sys.modules.get("multiprocessing.forkserver")
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    if forkserver is not None:
        server = getattr(forkserver, "_forkserver", None)
        pid = getattr(server, "_forkserver_pid", None)
        if isinstance(pid, int) and os.path.isdir(f"/proc/{pid}"):
            # Any worker still there (the pool kills those it knows of) goes with its server: the
            # server is stopped first (it forks nothing more), its children killed, then itself; a
            # child forked before the stop took hold (a loaded machine) is found once the server
            # is reaped: an orphan of this process group running the server's command.
            command = _cmdline(pid)
            _freeze(pid)
            _kill_children(pid)
            _kill(pid)
            _stop_helper(server, "_forkserver_pid", "_forkserver_alive_fd")
            if command:
                _kill_orphans(command)
        _stop_helper(server, "_forkserver_pid", "_forkserver_alive_fd")
    _unlink_semaphores()
    if tracker is not None:
        _stop_helper(getattr(tracker, "_resource_tracker", None), "_pid", "_fd")


def _unlink_semaphores() -> None:
    """Unlink the named semaphores of a pool's queues now, each through its own finalizer (which
    also tells the tracker). The tracker would unlink them as "leaked" when it stops, a warning on
    stderr; and an interrupted pool's queues, collected after that, then failed to unlink them
    again ("Exception ignored ... FileNotFoundError", a traceback after the one-line message)."""
    synchronize = sys.modules.get("multiprocessing.synchronize")
    util = sys.modules.get("multiprocessing.util")
    cleanup = getattr(getattr(synchronize, "SemLock", None), "_cleanup", None)
    if cleanup is None or util is None:
        return
    for fin in list(getattr(util, "_finalizer_registry", {}).values()):
        if getattr(fin, "_callback", None) is cleanup:
            try:
                fin()  # runs once: it leaves the registry before the callback
            except OSError:  # already gone
                pass


def _stat(pid: int | str) -> list[bytes]:
    """/proc/PID/stat after the command name: state, ppid, pgrp, ... (empty when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _cmdline(pid: int | str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _kill(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:  # gone meanwhile
        pass


def _freeze(pid: int) -> None:
    """SIGSTOP `pid` and wait (bounded) until it is stopped: it forks nothing after this."""
    import signal
    import time

    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        return
    deadline = time.monotonic() + HELPER_STOP_S
    while time.monotonic() < deadline and _stat(pid)[:1] not in ([], [b"T"], [b"t"], [b"Z"]):
        time.sleep(0.001)


def _kill_children(parent: int) -> None:
    """SIGKILL every process whose parent is `parent` (Linux: read from /proc)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        fields = _stat(name) if name.isdigit() else []
        if len(fields) > 1 and fields[1] == str(parent).encode():
            _kill(int(name))


def _kill_orphans(command: bytes) -> None:
    """SIGKILL every process of this process group running `command` whose parent is outside the
    group (re-parented: its fork server is gone). Another hotspot of the group keeps its workers:
    their server, their parent, is in the group."""
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return
    group = str(os.getpgrp()).encode()
    stats = {int(n): _stat(n) for n in names}
    members = {p for p, f in stats.items() if len(f) > 2 and f[2] == group}
    for pid in members:
        if pid != os.getpid() and int(stats[pid][1]) not in members and _cmdline(pid) == command:
            _kill(pid)


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
