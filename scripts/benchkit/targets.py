"""Benchmark cases and the speed/memory targets of issue 9 (point 4) checked against them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchkit.measure import Spread

# --- targets (issue 9, point 4); each is a promise to users, not a tuning knob ---
HELP_MAX_NS = 150_000_000             # `hotspot --help` must feel instant
WAVE_CASE_WAVES = 2_000               # "a 2,000-wave / 35 MB dispatch"
WAVE_CASE_MAX_NS = 500_000_000        # ... fully analyzed on one core in 0.5 s
THROUGHPUT_MIN_BPS = 150_000_000      # wave JSON bytes per CPU second (per core)
BIG_MB = 1000                         # "1 GB / 50,000 waves"
BIG_JOBS = 2                          # ... with --jobs 2
BIG_MAX_NS = 10_000_000_000           # ... in 10 s
BIG_MAX_RSS_BYTES = 300 * 1024 * 1024  # ... and peak RSS 300 MB
LINEAR_REF_MB = 10                    # per-MB cost of the 1000 MB case vs the 10 MB case
LINEAR_MAX_RATIO = 1.3
SMALL_DIR_MAX_RATIO = 1.5             # small dir: hotspot vs `json.load(code.json)` whole-process time
# A given dir counts as "small" (the vec_add target) up to this much wave JSON; vec_add holds ~2.5 MB.
SMALL_DIR_MAX_BYTES = 5_000_000


@dataclass(frozen=True)
class Case:
    """One input and its measurements."""

    label: str
    kind: str                 # "dir" (given on the command line), "waves" (the 2,000-wave case), "size"
    path: Path
    size_mb: float | None     # requested MB for kind "size"
    waves: int
    files: int
    wave_bytes: int
    jobs: int | None          # value passed as `--jobs`, None when not passed
    hotspot: Spread
    baseline: Spread | None   # `json.load(code.json)` (given dirs with a code.json)
    other: Spread | None      # the --vs command

    @property
    def ok(self) -> bool:
        return self.hotspot.failed is None


@dataclass(frozen=True)
class Target:
    name: str
    goal: str
    verdict: str              # PASS, FAIL or SKIP
    measured: str             # human-readable numbers behind the verdict
    value: float | None       # in `unit`
    limit: float
    unit: str                 # ns, bytes, bytes/s or ratio


def per_mb_reference(cases: list[Case]) -> Case | None:
    """The case per-MB costs are relative to: the 10 MB case, else the smallest generated size."""
    sized = [c for c in cases if c.kind == "size" and c.ok and c.wave_bytes]
    ref = [c for c in sized if c.size_mb == LINEAR_REF_MB]
    return ref[0] if ref else min(sized, key=lambda c: c.wave_bytes, default=None)


def relative_cost(case: Case, ref: Case | None) -> float | None:
    """(wall time per wave byte of `case`) / (the same of `ref`)."""
    if ref is None or not case.ok or not case.wave_bytes or not ref.wave_bytes:
        return None
    return (case.hotspot.median_wall_ns / case.wave_bytes) / (ref.hotspot.median_wall_ns / ref.wave_bytes)


def evaluate(cases: list[Case], help_run: Spread | None) -> list[Target]:
    out: list[Target] = []

    wave = next((c for c in cases if c.kind == "waves"), None)
    goal = f"{WAVE_CASE_WAVES:,}-wave / 35 MB dispatch, default analysis, one core: <= {_s(WAVE_CASE_MAX_NS)}"
    if wave is None or not wave.ok:
        out.append(_skip("wave_case_time", goal, WAVE_CASE_MAX_NS, "ns", wave))
    else:
        v = wave.hotspot.median_wall_ns
        out.append(Target("wave_case_time", goal, _verdict(v <= WAVE_CASE_MAX_NS),
                          f"{_s(v)} median on {wave.waves:,} waves / {_mb(wave.wave_bytes)} "
                          f"({_jobs(wave.jobs)})", v, WAVE_CASE_MAX_NS, "ns"))

    sized = [c for c in cases if c.kind == "size" and c.ok and c.wave_bytes]
    goal = f"wave JSON throughput per core >= {THROUGHPUT_MIN_BPS / 1e6:.0f} MB/s (bytes / CPU time)"
    big_sized = max(sized, key=lambda c: c.wave_bytes, default=None)
    if big_sized is None or not big_sized.hotspot.median_cpu_ns:
        out.append(_skip("throughput_per_core", goal, THROUGHPUT_MIN_BPS, "bytes/s", None))
    else:
        bps = big_sized.wave_bytes / (big_sized.hotspot.median_cpu_ns / 1e9)
        out.append(Target("throughput_per_core", goal, _verdict(bps >= THROUGHPUT_MIN_BPS),
                          f"{bps / 1e6:.1f} MB/s per core on {big_sized.label} ({_mb(big_sized.wave_bytes)} in "
                          f"{_s(big_sized.hotspot.median_cpu_ns)} CPU, {_s(big_sized.hotspot.median_wall_ns)} wall)",
                          bps, THROUGHPUT_MIN_BPS, "bytes/s"))

    big = next((c for c in sized if c.size_mb == BIG_MB), None)
    note = "" if big is None or big.jobs == BIG_JOBS else f"; target assumes --jobs {BIG_JOBS}"
    goal = f"{BIG_MB} MB / ~50,000 waves with --jobs {BIG_JOBS}: <= {_s(BIG_MAX_NS)}"
    if big is None:
        out.append(_skip("big_time", goal, BIG_MAX_NS, "ns", None, f"no {BIG_MB} MB case (add it to --sizes)"))
    else:
        v = big.hotspot.median_wall_ns
        out.append(Target("big_time", goal, _verdict(v <= BIG_MAX_NS),
                          f"{_s(v)} median on {big.waves:,} waves / {_mb(big.wave_bytes)} ({_jobs(big.jobs)}{note})",
                          v, BIG_MAX_NS, "ns"))
    goal = f"{BIG_MB} MB with --jobs {BIG_JOBS}: peak RSS <= {BIG_MAX_RSS_BYTES / 2**20:.0f} MB (process tree)"
    if big is None:
        out.append(_skip("big_rss", goal, BIG_MAX_RSS_BYTES, "bytes", None, f"no {BIG_MB} MB case"))
    else:
        rss = max(big.hotspot.peak_rss_bytes, big.hotspot.tree_rss_bytes)
        out.append(Target("big_rss", goal, _verdict(rss <= BIG_MAX_RSS_BYTES),
                          f"{_mib(rss)} (largest process {_mib(big.hotspot.peak_rss_bytes)}, sampled tree "
                          f"{_mib(big.hotspot.tree_rss_bytes)}; {_jobs(big.jobs)}{note})", rss, BIG_MAX_RSS_BYTES,
                          "bytes"))

    ref = next((c for c in sized if c.size_mb == LINEAR_REF_MB), None)
    goal = f"linear cost: per-MB time of {BIG_MB} MB <= {LINEAR_MAX_RATIO}x that of {LINEAR_REF_MB} MB"
    if big is None or ref is None:
        largest = max((c for c in sized if c is not ref), key=lambda c: c.wave_bytes, default=None)
        hint = (f"; meanwhile {largest.label} costs {relative_cost(largest, ref):.2f}x per MB"
                if ref is not None and largest is not None else "")
        out.append(_skip("linearity", goal, LINEAR_MAX_RATIO, "ratio", None,
                         f"needs the {LINEAR_REF_MB} and {BIG_MB} MB cases{hint}"))
    else:
        r = relative_cost(big, ref)
        assert r is not None
        out.append(Target("linearity", goal, _verdict(r <= LINEAR_MAX_RATIO),
                          f"{r:.2f}x ({_s(big.hotspot.median_wall_ns)} / {_mb(big.wave_bytes)} vs "
                          f"{_s(ref.hotspot.median_wall_ns)} / {_mb(ref.wave_bytes)})", r, LINEAR_MAX_RATIO, "ratio"))

    goal = f"hotspot --help <= {_s(HELP_MAX_NS)}"
    if help_run is None or help_run.failed:
        out.append(_skip("help_time", goal, HELP_MAX_NS, "ns", None, help_run.failed if help_run else "not run"))
    else:
        v = help_run.median_wall_ns
        out.append(Target("help_time", goal, _verdict(v <= HELP_MAX_NS), f"{_s(v)} median of {help_run.runs}",
                          v, HELP_MAX_NS, "ns"))

    goal = (f"small dir (<= {_mb(SMALL_DIR_MAX_BYTES)} wave JSON): whole process <= {SMALL_DIR_MAX_RATIO}x "
            "python json.load(code.json)")
    small = [c for c in cases if c.kind == "dir" and c.baseline is not None and c.wave_bytes <= SMALL_DIR_MAX_BYTES]
    if not small:
        out.append(_skip("small_dir_ratio", goal, SMALL_DIR_MAX_RATIO, "ratio", None,
                         "give a small dispatch dir, e.g. ../shared/corpus/att/gfx950/vec_add"))
    for c in small:
        assert c.baseline is not None
        if not c.ok or c.baseline.failed:
            why = "" if not c.ok else f"json.load baseline failed: {c.baseline.failed}"
            out.append(_skip(f"small_dir_ratio:{c.label}", goal, SMALL_DIR_MAX_RATIO, "ratio", c, why))
            continue
        r = c.hotspot.median_wall_ns / c.baseline.median_wall_ns
        out.append(Target(f"small_dir_ratio:{c.label}", goal, _verdict(r <= SMALL_DIR_MAX_RATIO),
                          f"{r:.2f}x on {c.label} ({_s(c.hotspot.median_wall_ns)} vs "
                          f"{_s(c.baseline.median_wall_ns)})", r, SMALL_DIR_MAX_RATIO, "ratio"))
    return out


def _skip(name: str, goal: str, limit: float, unit: str, case: Case | None, why: str = "") -> Target:
    if not why:
        why = (f"{case.label} failed: {case.hotspot.failed}" if case is not None and case.hotspot.failed
               else "case not run")
    return Target(name, goal, "SKIP", why, None, limit, unit)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _s(ns: float) -> str:
    return f"{ns / 1e9:.3f} s"


def _mb(b: float) -> str:
    return f"{b / 1e6:.1f} MB"


def _mib(b: float) -> str:
    return f"{b / 2**20:.0f} MB"


def _jobs(jobs: int | None) -> str:
    return "no --jobs passed" if jobs is None else f"--jobs {jobs}"
