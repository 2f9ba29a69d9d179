"""Time one whole process: wall clock, CPU time and peak memory of the process and its descendants.

`os.wait4` returns the child's rusage with Linux RUSAGE_BOTH semantics: CPU time summed over the
child and every descendant it reaped (so a process pool's workers count), and `ru_maxrss` the
largest single process. A pool's memory is the *sum* of its processes, so a sampler thread also
adds up the RSS of the whole process tree from /proc every `TREE_SAMPLE_S` (Linux only; an upper
bound, since pages shared after fork count once per process). Processes that are not reaped by the
command itself (the workers of a forkserver pool are its server's children) are missing from the
rusage, so the sampler also keeps each process's own CPU time as last seen in /proc, and the CPU
time reported is the larger of the two accounts.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

# Interval of the process-tree RSS sampler: fine enough to catch a pool's steady state, coarse enough
# that reading a few /proc files per tick costs nothing measurable on a busy 2-core machine.
TREE_SAMPLE_S = 0.05
# Last stderr characters kept from a failed command, for the error line.
STDERR_TAIL_CHARS = 400
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # /proc stat time unit
# ru_maxrss is KiB on Linux, bytes on macOS (getrusage(2) of each system).
_MAXRSS_UNIT = 1 if sys.platform == "darwin" else 1024


@dataclass(frozen=True)
class Run:
    """One execution of a command."""

    wall_ns: int
    cpu_ns: int            # user + system, the process and its reaped descendants
    peak_rss_bytes: int    # largest single process (wait4 ru_maxrss)
    tree_rss_bytes: int    # largest sampled sum over the process tree (0 where /proc is absent)
    exit_code: int
    stderr_tail: str


@dataclass(frozen=True)
class Spread:
    """Median and range of several runs of one command on one input."""

    runs: int
    median_wall_ns: int
    min_wall_ns: int
    max_wall_ns: int
    median_cpu_ns: int
    peak_rss_bytes: int    # max over runs
    tree_rss_bytes: int    # max over runs
    wall_ns: tuple[int, ...]
    failed: str | None     # "exit N: <stderr tail>" of the first failing run, None when all succeeded


def summarize(runs: Sequence[Run]) -> Spread:
    if not runs:
        raise ValueError("no runs to summarize")
    walls = [r.wall_ns for r in runs]
    bad = next((r for r in runs if r.exit_code != 0), None)
    return Spread(runs=len(runs), median_wall_ns=round(statistics.median(walls)), min_wall_ns=min(walls),
                  max_wall_ns=max(walls), median_cpu_ns=round(statistics.median(r.cpu_ns for r in runs)),
                  peak_rss_bytes=max(r.peak_rss_bytes for r in runs),
                  tree_rss_bytes=max(r.tree_rss_bytes for r in runs), wall_ns=tuple(walls),
                  failed=None if bad is None else f"exit {bad.exit_code}: {bad.stderr_tail.strip()}")


def run_once(argv: Sequence[str], sample_tree: bool = True, env: dict[str, str] | None = None) -> Run:
    """Run `argv` (no shell) with stdout discarded; stderr is kept only for error messages. `env`:
    variables set for this run on top of the benchmark's environment. `peak_rss_bytes` is at least
    this process's own resident size when it starts the child (Linux keeps the old address space's
    high-water mark across exec): measure from a small process, as bench.py is."""
    full_env = {**os.environ, **env} if env else None
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter_ns()
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                env=full_env)
        sampler = _TreeSampler(proc.pid) if sample_tree and os.path.isdir("/proc") else None
        if sampler:
            sampler.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter_ns() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)   # reaped here; keep Popen consistent
        tree, sampled_cpu = sampler.stop() if sampler else (0, 0)
        err.seek(0)
        tail = err.read().decode("utf-8", "replace")[-STDERR_TAIL_CHARS:] if proc.returncode else ""
    cpu = max(round((ru.ru_utime + ru.ru_stime) * 1e9), sampled_cpu)
    return Run(wall_ns=wall, cpu_ns=cpu, peak_rss_bytes=ru.ru_maxrss * _MAXRSS_UNIT, tree_rss_bytes=tree,
               exit_code=proc.returncode, stderr_tail=tail)


class _TreeSampler(threading.Thread):
    """Peak of the summed RSS of `root` and its descendants, polled from /proc."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak = 0
        self.cpu_ticks: dict[int, int] = {}  # pid -> its own utime + stime, last seen
        self._done = threading.Event()
        self._ppid: dict[int, int] = {}   # pid -> parent, read once per pid (pids are not reused mid-run)

    def stop(self) -> tuple[int, int]:
        """(peak summed RSS in bytes, summed CPU ns of every process seen)."""
        self._done.set()
        self.join()
        return self.peak, sum(self.cpu_ticks.values()) * 1_000_000_000 // _TICKS

    def run(self) -> None:
        while True:
            self.peak = max(self.peak, self._sample())
            if self._done.wait(TREE_SAMPLE_S):
                return

    def _sample(self) -> int:
        try:
            pids = [int(n) for n in os.listdir("/proc") if n.isdigit()]
        except OSError:
            return 0
        for pid in pids:
            if pid not in self._ppid:
                self._ppid[pid] = _ppid_of(pid)
        tree, frontier = {self.root}, [self.root]
        children: dict[int, list[int]] = {}
        for pid in pids:
            children.setdefault(self._ppid[pid], []).append(pid)
        while frontier:
            for c in children.get(frontier.pop(), ()):
                if c not in tree:
                    tree.add(c)
                    frontier.append(c)
        for p in tree:
            ticks = _cpu_ticks_of(p)
            if ticks is not None:
                self.cpu_ticks[p] = ticks
        return sum(_rss_of(p) for p in tree)


def _ppid_of(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return -1
    # "pid (comm) state ppid ...": comm may contain spaces and parentheses, so split after the last ')'
    fields = stat[stat.rfind(b")") + 2:].split()
    return int(fields[1]) if len(fields) > 1 else -1


def _cpu_ticks_of(pid: int) -> int | None:
    """utime + stime of the process itself (clock ticks), or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # fields[0] is the state (field 3 of stat(5))
    try:
        return int(fields[11]) + int(fields[12])  # utime (14) + stime (15)
    except (IndexError, ValueError):
        return None


def _rss_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_bytes().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0   # exited between listing and reading
