"""Run one rocprofv3 invocation: argument list (never a shell), output to files, Ctrl-C and timeout.

The child gets its own process group so that a terminal Ctrl-C reaches hotspot only; hotspot then
forwards ONE SIGINT to the whole group (rocprofv3 and the application it runs), waits for it to
finish writing, and records the run as interrupted. A second Ctrl-C, or a child that ignores the
first for INTERRUPT_GRACE_S, escalates to SIGTERM and then SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from hotspot.record import record

# How long a signalled child may take to flush its traces before we escalate. rocprofv3 writes and
# decodes its buffers at exit, which takes seconds on a real trace.
INTERRUPT_GRACE_S = 30.0
KILL_GRACE_S = 5.0
# A "still running" line on stderr this often, so a long phase does not look hung.
HEARTBEAT_S = 30.0
TAIL_BYTES = 4000
# False inside a `hotspot sweep` entry job: the job is already the leader of its own process group,
# and keeping rocprofv3 in that group lets the sweep stop the entry's whole tree with one killpg.
OWN_PROCESS_GROUP = True


@record
class ProcessOutcome:
    exit_code: int | None  # None when it could not be started
    elapsed_ns: int
    interrupted: bool
    timed_out: bool
    start_error: str | None = None


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    if not OWN_PROCESS_GROUP:  # the child shares our group: whoever signalled us reached it too
        if sig != signal.SIGINT:
            try:
                proc.send_signal(sig)
            except (ProcessLookupError, PermissionError):
                pass
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _wait(proc: subprocess.Popen, seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def _stop(proc: subprocess.Popen, first: int) -> None:
    """Signal the group with `first`, then escalate until it is gone."""
    for sig, grace in ((first, INTERRUPT_GRACE_S), (signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        _signal_group(proc, sig)
        if _wait(proc, grace):
            return


def _tee(pipe, log, prefix: bytes) -> None:
    """Copy a child's stream line by line into its log and, prefixed, onto our stderr."""
    import sys

    err = getattr(sys.stderr, "buffer", None)
    for line in iter(pipe.readline, b""):
        log.write(line)
        log.flush()
        try:
            if err is not None:
                err.write(prefix + line if line.endswith(b"\n") else prefix + line + b"\n")
                err.flush()
            else:
                sys.stderr.write((prefix + line).decode("utf-8", "replace").rstrip("\n") + "\n")
        except (OSError, ValueError):
            pass  # our stderr went away: the log still gets everything
    pipe.close()


def run_process(argv: list[str], env: dict[str, str], stdout: Path, stderr: Path, *,
                timeout_s: float | None = None, cwd: Path | None = None,
                heartbeat: Callable[[float], None] | None = None,
                stream: str | None = None) -> ProcessOutcome:
    """Run `argv` with its output saved to `stdout`/`stderr`; with `stream` (a prefix such as
    "[att] ") the output is also shown live on our stderr, each line prefixed."""
    import threading

    start = time.monotonic_ns()
    state = {"interrupts": 0}
    tees: list[threading.Thread] = []
    with stdout.open("wb") as out, stderr.open("wb") as err:
        pipe = subprocess.PIPE if stream is not None else None
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=pipe or out, stderr=pipe or err,
                                    env=env, cwd=cwd, start_new_session=OWN_PROCESS_GROUP)
        except OSError as exc:
            return ProcessOutcome(None, time.monotonic_ns() - start, False, False, str(exc))
        if stream is not None:
            prefix = stream.encode("utf-8", "replace")
            tees = [threading.Thread(target=_tee, args=(src, log, prefix), daemon=True)
                    for src, log in ((proc.stdout, out), (proc.stderr, err))]
            for t in tees:
                t.start()

        def on_sigint(_signum, _frame) -> None:
            state["interrupts"] += 1
            # first Ctrl-C: let the profiler finish writing; second: stop now
            _signal_group(proc, signal.SIGINT if state["interrupts"] == 1 else signal.SIGKILL)

        previous = signal.getsignal(signal.SIGINT)
        handler_set = False
        try:
            signal.signal(signal.SIGINT, on_sigint)
            handler_set = True
        except ValueError:
            pass  # not the main thread: Ctrl-C then reaches us as KeyboardInterrupt below
        timed_out = False
        try:
            while True:
                elapsed = (time.monotonic_ns() - start) / 1e9
                step = HEARTBEAT_S
                if timeout_s is not None:
                    step = min(step, max(0.0, timeout_s - elapsed))
                if state["interrupts"]:
                    if not _wait(proc, INTERRUPT_GRACE_S):
                        _stop(proc, signal.SIGTERM)
                    break
                if _wait(proc, step):
                    break
                elapsed = (time.monotonic_ns() - start) / 1e9
                if timeout_s is not None and elapsed >= timeout_s:
                    timed_out = True
                    _stop(proc, signal.SIGINT)
                    break
                if heartbeat is not None and not state["interrupts"]:
                    heartbeat(elapsed)
        except KeyboardInterrupt:
            state["interrupts"] += 1
            _stop(proc, signal.SIGINT)
        finally:
            if handler_set:
                signal.signal(signal.SIGINT, previous)
            for t in tees:  # the rest of the output (a grandchild may hold the pipe: bounded wait)
                t.join(timeout=KILL_GRACE_S)
    return ProcessOutcome(proc.returncode, time.monotonic_ns() - start, state["interrupts"] > 0, timed_out)


def tail(path: Path, limit: int = TAIL_BYTES) -> str:
    """The last `limit` bytes of a log, decoded leniently, from a line start when possible."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            data = fh.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    if size > limit and "\n" in text:
        text = text.split("\n", 1)[1]
    return text.strip()
