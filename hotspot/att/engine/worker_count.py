"""How many processes read the wave files: `--jobs auto` (the default) or a given number.

A pure function of the input (wave bytes, files), the machine (CPUs) and the distinct executed
sequences seen in the first files, so the choice is testable without timing anything.

Why auto is conservative (measured on a 2-core machine shared with other work, paired
interleaved runs, medians; docs/benchmark.md): a process pool with `--jobs 2` was slower than one
process at every size — 44 MB 2.2x, 105 MB 2.4x, 1.09 GB 1.5x. Its costs do not shrink with the
input: forkserver start-up and imports in every worker, every worker rebuilding the static facts
of every sequence it meets (~1 ms each, hotspot/att/engine/groups.py), pickling the partials and
the parent adding them, and the parent's own work (occupancy, merge) competing with the workers
for the same cores. One process reads ~200 MB of wave JSON per CPU second, so the pool can only
pay where many cores share a large input of few sequences.
"""

from __future__ import annotations

from typing import NamedTuple

# Below this many CPUs auto never starts a pool (measured: it lost at every size on 2 cores).
AUTO_POOL_MIN_CPUS = 4
# Below this much wave JSON auto reads in one process (a pool's fixed cost is ~0.3-0.5 s of
# wall time on 2 cores; one process reads 512 MiB in ~2.5 s).
AUTO_POOL_MIN_BYTES = 512 * 1024 * 1024
# Above this many distinct sequences among the first files, every worker would rebuild them all
# and the parent merge them per worker: auto stays in one process.
AUTO_POOL_MAX_SEQUENCES = 32
# Workers auto starts at most (the parent's merge is serial: more workers add merge work).
AUTO_POOL_MAX_WORKERS = 8
# An explicit --jobs N > 1 uses a pool only above this much wave JSON and CHUNK_WAVES files.
EXPLICIT_POOL_MIN_BYTES = 16 * 1024 * 1024


class PassPlan(NamedTuple):
    workers: int  # worker processes; 1 = this process reads every file
    reason: str  # one line for --verbose-style diagnostics and tests


def plan_pass(jobs: int | None, wave_bytes: int, files: int, cpus: int, sequences: int,
              min_files: int) -> PassPlan:
    """Worker processes for the wave pass. `jobs` None = auto; `sequences` = distinct executed
    sequences among the first files (read by this process before deciding); `min_files`: fewer
    files than this never pay for a pool (one work unit)."""
    if files <= min_files:
        return PassPlan(1, f"{files} wave files: one work unit")
    if jobs is not None:
        if jobs <= 1:
            return PassPlan(1, "--jobs 1")
        if wave_bytes < EXPLICIT_POOL_MIN_BYTES:
            return PassPlan(1, f"--jobs {jobs}: {wave_bytes:,} bytes of wave JSON is below "
                               f"{EXPLICIT_POOL_MIN_BYTES:,}")
        return PassPlan(jobs, f"--jobs {jobs}")
    if cpus < AUTO_POOL_MIN_CPUS:
        return PassPlan(1, f"auto: {cpus} CPUs (a pool only pays from {AUTO_POOL_MIN_CPUS})")
    if wave_bytes < AUTO_POOL_MIN_BYTES:
        return PassPlan(1, f"auto: {wave_bytes:,} bytes of wave JSON (a pool only pays from "
                           f"{AUTO_POOL_MIN_BYTES:,})")
    if sequences > AUTO_POOL_MAX_SEQUENCES:
        return PassPlan(1, f"auto: {sequences} distinct sequences in the first files (every "
                           "worker would rebuild them)")
    # one core stays with the parent (occupancy, merging the partials)
    return PassPlan(min(cpus - 1, AUTO_POOL_MAX_WORKERS), f"auto: {cpus} CPUs, "
                    f"{wave_bytes:,} bytes, {sequences} sequences")


def parse_jobs(text: str | None) -> int | None:
    """`--jobs` as given: None or "auto" -> None (auto), else a positive integer; ValueError."""
    if text is None or text.strip().lower() == "auto":
        return None
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def pool_possible(jobs: int | None, cpus: int, files: int, min_files: int) -> bool:
    """False when `plan_pass` would say 1 whatever the sizes and sequences (so the caller need
    not stat every file first)."""
    if files <= min_files or jobs == 1:
        return False
    return jobs is not None or cpus >= AUTO_POOL_MIN_CPUS
