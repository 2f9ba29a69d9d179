"""Where the wave pass spends its time on one capture (issue 27, point 4): the wave files read
into memory (the read floor), the native scan alone (`_wavescan.scan`: parse into columns), the
fused read + scan + fold (`Fold.files`, which reads the wave files itself, and `Fold.wave` for the
files the Python side hands it: every call timed around the C call), and the whole wave pass
(`run_wave_pass`, one process). Rates are MB of wave JSON per CPU second (per core).

Then the fresh analysis as a whole process (issue 37, point 6): `hotspot analyze DIR --jobs 1
--no-cache --format json` run `--runs` times by this interpreter, user + system CPU seconds of the
child, median; with the targets: scan ≥ 600 MB/s per core, fresh ≥ 250 MB per CPU second (on
`scripts/make_dispatch.py --target-mb 200`). `--no-fresh` skips it.

    .venv/bin/python scripts/benchkit/scanrate.py DIR [--runs 3] [--json] [--no-fresh]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# issue 37, point 6: the scan alone per core, and the fresh analysis per CPU second (whole process);
# the one definition (benchkit/programs.py checks `bench.py --programs` against these too)
SCAN_TARGET_MB_S = 600
FRESH_TARGET_MB_S = 250
# Last stderr characters of a failed run kept for its error line (as benchkit/measure.py keeps).
STDERR_TAIL_CHARS = 400


def _cpu() -> int:
    return time.thread_time_ns()


def measure(dispatch: Path) -> dict:
    from hotspot.att.engine import groups
    from hotspot.att.engine.native import native
    from hotspot.att.model import AnalyzeOptions

    mod = native()
    if mod is None:
        raise SystemExit("scanrate: the native wave scanner is not in use (see hotspot doctor)")
    files = sorted(p for p in dispatch.iterdir() if p.name.startswith("se") and p.suffix == ".json")
    size = sum(p.stat().st_size for p in files)

    read_ns = scan_ns = 0
    for p in files:  # one file in memory at a time, as the pass holds them
        t0 = _cpu()
        b = p.read_bytes()
        t1 = _cpu()
        mod.scan(b)
        read_ns += t1 - t0
        scan_ns += _cpu() - t1

    fold_ns = [0]
    calls = [0]
    real_wave = groups.NativeFold.wave
    real_files = groups.NativeFold.files

    def timed_c(fold):  # noqa: ANN001, ANN202 - time every Fold.wave call of this NativeFold
        inner = fold.fold

        class Timed:
            def __getattr__(self, name):  # noqa: ANN001, ANN204
                return getattr(inner, name)

            def wave(self, data, se, simd=-1, keep=False):  # noqa: ANN001, ANN202
                s = _cpu()
                try:
                    return inner.wave(data, se, simd, keep)
                finally:
                    fold_ns[0] += _cpu() - s
                    calls[0] += 1

            def files(self, *args):  # noqa: ANN002, ANN202 - the run of files C reads and folds
                s = _cpu()
                try:
                    return inner.files(*args)
                finally:
                    fold_ns[0] += _cpu() - s
                    calls[0] += 1
        return Timed()

    def timing(self):  # noqa: ANN001, ANN202
        if not hasattr(self, "_timed"):
            self._timed = True
            self.fold = timed_c(self)
            if self.issue is not None:  # issue sums go to the fold object (NativeIssue holds it)
                self.issue.fold = self.fold

    def wave(self, data, se, simd=-1, keep=False):  # noqa: ANN001, ANN202
        timing(self)
        return real_wave(self, data, se, simd, keep)

    def timed_files(self, *args):  # noqa: ANN001, ANN002, ANN202
        timing(self)
        return real_files(self, *args)

    from hotspot.att import wave_results
    from hotspot.plan.entry_point import analyze

    real_pass = wave_results.run_wave_pass
    pass_ns = [0]

    def timed_pass(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        s = _cpu()
        try:
            return real_pass(*args, **kw)
        finally:
            pass_ns[0] += _cpu() - s

    groups.NativeFold.wave = wave
    groups.NativeFold.files = timed_files
    wave_results.run_wave_pass = timed_pass
    try:
        analyze(dispatch, AnalyzeOptions(jobs=1))
    finally:
        groups.NativeFold.wave = real_wave
        groups.NativeFold.files = real_files
        wave_results.run_wave_pass = real_pass
    pass_ns = pass_ns[0]
    mb = size / 1e6
    return {"dir": str(dispatch), "waves": len(files), "wave_bytes": size,
            "read_cpu_s": read_ns / 1e9, "scan_cpu_s": scan_ns / 1e9, "fold_wave_cpu_s": fold_ns[0] / 1e9,
            "fold_wave_calls": calls[0], "pass_cpu_s": pass_ns / 1e9,
            "read_mb_s": mb / (read_ns / 1e9), "scan_mb_s": mb / (scan_ns / 1e9),
            "fold_wave_mb_s": mb / (fold_ns[0] / 1e9) if fold_ns[0] else None,
            "pass_mb_s": mb / (pass_ns / 1e9)}


class RunFailed(Exception):
    """A measured command ended with an error: its command line, exit code and last stderr."""


def fresh(dispatch: Path, runs: int) -> dict:
    """A fresh `hotspot analyze` as a whole process, `runs` times: median user + system seconds.
    A run that fails raises RunFailed naming the command (main: one line, exit 1)."""
    cmd = [sys.executable, "-m", "hotspot", "analyze", str(dispatch), "--jobs", "1", "--no-cache",
           "--format", "json"]
    env = {**os.environ, "HOTSPOT_CACHE": "off"}
    cpu = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode:
            tail = " ".join(done.stderr.decode("utf-8", "replace").split())[-STDERR_TAIL_CHARS:]  # one line
            raise RunFailed(f"{shlex.join(cmd)}: exit {done.returncode}" + (f": {tail}" if tail else ""))
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {"fresh_cpu_s": statistics.median(cpu), "fresh_cpu_range_s": [min(cpu), max(cpu)]}


def _verdict(value: float | None, target: float) -> str:
    return "PASS" if value is not None and value >= target else "FAIL"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-fresh", action="store_true", help="skip the whole-process fresh analysis")
    a = ap.parse_args(argv)
    os.environ["HOTSPOT_CACHE"] = "off"
    try:
        out = _rates(a)
    except RunFailed as e:
        print(f"scanrate: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(out, indent=2))
    return 0


def _rates(a: argparse.Namespace) -> list[dict]:
    """Each dispatch's rates (printed as they come without --json)."""
    out = []
    for d in a.dirs:
        runs = [measure(d) for _ in range(a.runs)]
        best = {k: min(r[k] for r in runs) if k.endswith("_s") and not k.endswith("mb_s") else runs[0][k]
                for k in runs[0]}
        mb = best["wave_bytes"] / 1e6
        for k in ("read", "scan", "fold_wave", "pass"):
            best[f"{k}_mb_s"] = mb / best[f"{k}_cpu_s"] if best[f"{k}_cpu_s"] else None
        best["scan_target"] = _verdict(best["scan_mb_s"], SCAN_TARGET_MB_S)
        if not a.no_fresh:
            best.update(fresh(d, a.runs))
            best["fresh_mb_s"] = mb / best["fresh_cpu_s"] if best["fresh_cpu_s"] else None
            best["fresh_target"] = _verdict(best["fresh_mb_s"], FRESH_TARGET_MB_S)
        out.append(best)
        if not a.json:
            print(f"{d}: {best['waves']} waves, {mb:.1f} MB (best of {a.runs}, CPU seconds of this thread)")
            for k, label in (("read", "read the files"), ("scan", "native scan only"),
                             ("fold_wave", "read + scan + fold in C"), ("pass", "whole wave pass")):
                print(f"  {label:<30} {best[k + '_cpu_s']:7.3f} s  {best[k + '_mb_s']:8.0f} MB/s")
            print(f"  scan >= {SCAN_TARGET_MB_S} MB/s per core: {best['scan_target']}")
            if not a.no_fresh:
                lo, hi = best["fresh_cpu_range_s"]
                print(f"  fresh analyze, whole process   {best['fresh_cpu_s']:7.3f} s  "
                      f"{best['fresh_mb_s']:8.0f} MB per CPU second (median of {a.runs}, "
                      f"{lo:.3f}-{hi:.3f} s); >= {FRESH_TARGET_MB_S}: {best['fresh_target']}")
    return out


if __name__ == "__main__":
    sys.exit(main())
