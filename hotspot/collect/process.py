"""Run one rocprofv3 invocation: argument list (never a shell), output to files, signals and timeout.

The child gets its own process group so that a terminal Ctrl-C reaches hotspot only. Every signal
takes one path: Ctrl-C (SIGINT), SIGTERM and SIGHUP to hotspot (kill, timeout, a scheduler, a
closed terminal) send SIGTERM to the whole group (rocprofv3 and the application it runs; a SIGINT
passed on would make a Python application print a KeyboardInterrupt traceback into the run's
output), wait for it to finish writing (INTERRUPT_GRACE_S after Ctrl-C, TERM_GRACE_S after
SIGTERM/SIGHUP, whose sender usually kills us soon), then SIGKILL; the run is recorded as
interrupted. A second signal of any kind kills the group at once. A phase's timeout stops the
group the same way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import IO, Any
from pathlib import Path
from hotspot.record import record

# How long a signalled child may take to flush its traces before we escalate. rocprofv3 writes and
# decodes its buffers at exit, which takes seconds on a real trace.
INTERRUPT_GRACE_S = 30.0
KILL_GRACE_S = 5.0
# After SIGTERM/SIGHUP the sender (a scheduler, `timeout -k`) usually kills us soon: a shorter grace.
TERM_GRACE_S = 10.0
# HOTSPOT_INTERRUPT_GRACE_S overrides both graces (seconds), e.g. longer for very large traces.
GRACE_ENV = "HOTSPOT_INTERRUPT_GRACE_S"
# A "still running" line on stderr this often, so a long phase does not look hung.
HEARTBEAT_S = 30.0
POLL_S = 0.2  # how often the wait for a phase looks at signals, the timeout and the heartbeat
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
    signum: int | None = None  # the signal that interrupted the phase (SIGINT, SIGTERM, SIGHUP)
    reason: str | None = None  # what interrupted it when not a signal (hotspot/errors.py ClientCancelled)


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
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


def _wait(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def _grace(default: float) -> float:
    text = os.environ.get(GRACE_ENV, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        return default
    return value if 0 <= value < float("inf") else default


def _stop(proc: subprocess.Popen[bytes], first: int, grace: float | None = None) -> None:
    """Signal the group with `first`, then escalate (SIGTERM, SIGKILL) until it is gone."""
    steps = [(first, _grace(INTERRUPT_GRACE_S) if grace is None else grace)]
    if first != signal.SIGTERM:
        steps.append((signal.SIGTERM, KILL_GRACE_S))
    steps.append((signal.SIGKILL, KILL_GRACE_S))
    for sig, wait_s in steps:
        _signal_group(proc, sig)
        if _wait(proc, wait_s):
            return


def _reap_group(proc: subprocess.Popen[bytes]) -> None:
    """After an interrupt or timeout the run is over: whatever of the group outlived rocprofv3
    (an application's own children) is killed too, so nothing keeps running on the GPU."""
    if OWN_PROCESS_GROUP:
        _signal_group(proc, signal.SIGKILL)


def _tee(pipe: IO[bytes], log: IO[bytes], prefix: bytes, failures: list[OSError]) -> None:
    """Copy a child's stream line by line into its log and, prefixed, onto our stderr. A log that
    cannot be written (disk full) is noted in `failures`; the stream is still drained, so the
    child never blocks on a full pipe."""
    import sys

    err = getattr(sys.stderr, "buffer", None)
    for line in iter(pipe.readline, b""):
        if not failures:
            try:
                log.write(line)
            except OSError as exc:
                exc.filename = exc.filename or getattr(log, "name", None)
                failures.append(exc)
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
    state: dict[str, Any] = {"interrupts": 0, "signum": None, "proc": None, "sent": False}
    tees: list[threading.Thread] = []

    def on_signal(signum: int, _frame: object) -> None:
        state["interrupts"] += 1
        if state["signum"] is None:
            state["signum"] = signum
        proc = state["proc"]
        if proc is None:
            return  # not started yet: it is stopped as soon as it is
        # first signal: let the profiler finish writing; second: stop now
        _signal_group(proc, _first_signal(signum) if state["interrupts"] == 1 else signal.SIGKILL)
        state["sent"] = True

    # Handlers go in before the child starts, so no signal can leave it running unobserved.
    previous: dict[int, Any] = {}  # a handler as signal.signal gave it
    if threading.current_thread() is threading.main_thread():
        # Inside a sweep entry (OWN_PROCESS_GROUP False) SIGTERM belongs to the entry job: it kills it all.
        for sig in (signal.SIGINT, *((signal.SIGTERM, signal.SIGHUP) if OWN_PROCESS_GROUP else ())):
            if sig == signal.SIGINT or signal.getsignal(sig) != signal.SIG_IGN:  # nohup's choice stays
                previous[sig] = signal.signal(sig, on_signal)
    timed_out = False
    failures: list[OSError] = []
    try:
        # Unbuffered: a write that fails (disk full) fails in the tee, not later at close.
        with stdout.open("wb", buffering=0) as out, stderr.open("wb", buffering=0) as err:
            pipe = subprocess.PIPE if stream is not None else None
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=pipe or out, stderr=pipe or err,
                                        env=env, cwd=cwd, start_new_session=OWN_PROCESS_GROUP)
            except OSError as exc:
                return ProcessOutcome(None, time.monotonic_ns() - start, False, False, str(exc))
            state["proc"] = proc
            if state["interrupts"] and not state["sent"]:  # signalled while it was starting
                _signal_group(proc, _first_signal(state["signum"]))
            if stream is not None:
                prefix = stream.encode("utf-8", "replace")
                tees = [threading.Thread(target=_tee, args=(src, log, prefix, failures), daemon=True)
                        for src, log in ((proc.stdout, out), (proc.stderr, err))]
                for t in tees:
                    t.start()
            try:
                beat_at = HEARTBEAT_S
                while True:
                    if state["interrupts"]:
                        # SIGTERM was sent already (on_signal): wait, then kill
                        ctrl_c = state["signum"] in (None, signal.SIGINT)
                        if not _wait(proc, _grace(INTERRUPT_GRACE_S if ctrl_c else TERM_GRACE_S)):
                            _signal_group(proc, signal.SIGKILL)
                            _wait(proc, KILL_GRACE_S)
                        _reap_group(proc)
                        break
                    # Short steps: a signal handler cannot cut a wait short (the wait resumes).
                    if _wait(proc, POLL_S):
                        break
                    elapsed = (time.monotonic_ns() - start) / 1e9
                    if timeout_s is not None and elapsed >= timeout_s:
                        timed_out = True
                        _stop(proc, signal.SIGTERM)
                        _reap_group(proc)
                        break
                    if heartbeat is not None and elapsed >= beat_at and not state["interrupts"]:
                        heartbeat(elapsed)
                        beat_at = elapsed + HEARTBEAT_S
            except KeyboardInterrupt as exc:  # not the main thread, or a signal with no handler of ours
                state["interrupts"] += 1
                state["signum"] = state["signum"] or getattr(exc, "signum", signal.SIGINT)
                state["reason"] = state.get("reason") or getattr(exc, "reason", None)
                _stop(proc, _first_signal(state["signum"]))
                _reap_group(proc)
            finally:
                for t in tees:  # the rest of the output (a grandchild may hold the pipe: bounded wait)
                    t.join(timeout=KILL_GRACE_S)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if failures:
        raise failures[0]  # the phase ran, but its log is incomplete: the caller names the file
    return ProcessOutcome(proc.returncode, time.monotonic_ns() - start, state["interrupts"] > 0, timed_out,
                          signum=state["signum"], reason=state.get("reason"))


def _first_signal(signum: int | None) -> int:
    """What the group gets first, whatever stopped hotspot: SIGTERM (the children run in their own
    session, with no terminal; SIGTERM lets rocprofv3 and the application end without a
    KeyboardInterrupt traceback)."""
    del signum
    return signal.SIGTERM


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
