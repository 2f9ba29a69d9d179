"""`bench.py --programs` (issue 37, done-when): hotspot where programs run it, against the targets.

- analyze: a fresh `hotspot analyze DIR --jobs 1 --no-cache --format json` (whole process) on the
  synthetic of `scripts/make_dispatch.py --target-mb 200`, in MB of wave JSON per CPU second;
- scan: the native scan alone on the same files, MB per CPU second of one core
  (benchkit/scanrate.py);
- start, tools, fresh: the MCP server (benchkit/mcplatency.py).

Each part prints its numbers and its target with PASS or FAIL.
"""

from __future__ import annotations

import os
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from benchkit import mcplatency
from benchkit.measure import Run, run_once
# the targets of issue 37, point 6, kept where the scan and fresh-analysis rates are measured
from benchkit.scanrate import FRESH_TARGET_MB_S, SCAN_TARGET_MB_S

PY = sys.executable
PARTS = ("analyze", "scan", "start", "tools", "fresh")
SYNTH_MB = 200           # scripts/make_dispatch.py --target-mb 200 (issue 37, point 6)
FRESH_WAVES = 2_056      # the softmax-sized capture of issue 37, point 7


@dataclass
class Programs:
    synthetic: str | None = None
    synthetic_wave_bytes: int = 0
    analyze_cpu_s: list[float] = field(default_factory=list)
    analyze_wall_s: list[float] = field(default_factory=list)
    analyze_failed: str | None = None
    scan: dict[str, Any] | None = None
    mcp: mcplatency.Latency | None = None

    @property
    def analyze_mb_per_cpu_s(self) -> float | None:
        if not self.analyze_cpu_s:
            return None
        return self.synthetic_wave_bytes / 1e6 / statistics.median(self.analyze_cpu_s)


def parts_of(text: str) -> set[str]:
    """`--programs all` or a comma-separated choice of PARTS."""
    chosen = {p.strip() for p in text.split(",") if p.strip()}
    if chosen == {"all"}:
        return set(PARTS)
    unknown = chosen - set(PARTS)
    if unknown or not chosen:
        raise ValueError(f"--programs takes 'all' or some of {', '.join(PARTS)} (got {text!r})")
    return chosen


def synthetic_spec(target_mb: float = SYNTH_MB) -> Any:
    """The dispatch `scripts/make_dispatch.py --target-mb N` writes (its defaults, seed 0)."""
    scripts = Path(__file__).resolve().parents[1]
    if str(scripts) not in sys.path:
        sys.path.insert(0, str(scripts))
    import make_dispatch

    return make_dispatch.spec_of(make_dispatch.parse(["--out", "-", "--target-mb", str(target_mb)]))


def measure_analyze(d: Path, runs: int, cold: dict[str, str], progress: Callable[[str], None]) -> list[Run]:
    out = []
    for i in range(runs):
        r = run_once([PY, "-m", "hotspot", "analyze", str(d), "--jobs", "1", "--no-cache", "--format", "json"],
                     env=cold)
        out.append(r)
        progress(f"analyze {i + 1}/{runs}: {r.wall_ns / 1e9:.2f} s wall, {r.cpu_ns / 1e9:.2f} s CPU"
                 + (f" (exit {r.exit_code})" if r.exit_code else ""))
    return out


def measure(parts: set[str], cache: Path, corpus: Path, runs: int, cold: dict[str, str],
            progress: Callable[[str], None]) -> Programs:
    from benchkit.inputs import bench_program, cached_dispatch, dir_stats, spec_for_waves

    res = Programs()
    if parts & {"analyze", "scan"}:
        d, fresh = cached_dispatch(cache, synthetic_spec(), seed=0)
        st = dir_stats(d)
        res.synthetic, res.synthetic_wave_bytes = str(d), st.wave_bytes
        progress(f"synthetic ({'generated' if fresh else 'cached'}): {d}, {st.waves:,} waves, "
                 f"{st.wave_bytes / 1e6:.1f} MB")
        if "analyze" in parts:
            got = measure_analyze(d, runs, cold, progress)
            failed = [r for r in got if r.exit_code]
            if failed:
                res.analyze_failed = f"exit {failed[0].exit_code}: {failed[0].stderr_tail.strip()[-200:]}"
            else:
                res.analyze_cpu_s = [r.cpu_ns / 1e9 for r in got]
                res.analyze_wall_s = [r.wall_ns / 1e9 for r in got]
        if "scan" in parts:
            from benchkit import scanrate

            os.environ.update(cold)  # in this process: its analysis fresh, never from or into a cache
            rounds = [scanrate.measure(d) for _ in range(runs)]
            res.scan = {k: statistics.median(r[k] for r in rounds) for k in ("read_cpu_s", "scan_cpu_s",
                                                                              "fold_wave_cpu_s", "pass_cpu_s")}
            res.scan["wave_bytes"] = rounds[0]["wave_bytes"]
            progress(f"scan: {rounds[0]['wave_bytes'] / 1e6 / res.scan['scan_cpu_s']:.0f} MB/s per core")
    mcp_parts = parts & {"start", "tools", "fresh"}
    if mcp_parts:
        fresh_dir = None
        if "fresh" in parts:
            mix, _ = bench_program()
            fresh_dir, _ = cached_dispatch(cache, spec_for_waves(FRESH_WAVES, mix))
        res.mcp = mcplatency.measure(corpus, fresh_dir, runs=runs, progress=progress, only=mcp_parts)
    return res


def verdicts(p: Programs) -> list[mcplatency.Verdict]:
    out = []
    rate = p.analyze_mb_per_cpu_s
    if p.analyze_failed:
        out.append(mcplatency.Verdict("fresh analyze --jobs 1, MB of wave JSON per CPU second",
                                      f">= {FRESH_TARGET_MB_S:g}", f"failed: {p.analyze_failed}", False))
    elif rate is not None:
        out.append(mcplatency.Verdict(
            "fresh analyze --jobs 1, MB of wave JSON per CPU second", f">= {FRESH_TARGET_MB_S:g}",
            f"{rate:.0f} ({p.synthetic_wave_bytes / 1e6:.0f} MB, {statistics.median(p.analyze_cpu_s):.2f} s CPU, "
            f"{statistics.median(p.analyze_wall_s):.2f} s wall)", rate >= FRESH_TARGET_MB_S))
    if p.scan is not None:
        mb = p.scan["wave_bytes"] / 1e6
        scan = mb / p.scan["scan_cpu_s"]
        out.append(mcplatency.Verdict("native scan alone, MB per CPU second of one core", f">= {SCAN_TARGET_MB_S:g}",
                                      f"{scan:.0f} (read {mb / p.scan['read_cpu_s']:.0f}, read + scan + fold in C "
                                      f"{mb / p.scan['fold_wave_cpu_s']:.0f}, whole wave pass "
                                      f"{mb / p.scan['pass_cpu_s']:.0f})" if p.scan["fold_wave_cpu_s"]
                                      else f"{scan:.0f}", scan >= SCAN_TARGET_MB_S))
    if p.mcp is not None and not p.mcp.skipped:
        out += mcplatency.evaluate(p.mcp)
    return out


def to_text(p: Programs) -> str:
    lines = []
    if p.mcp is not None and p.mcp.skipped:
        lines.append(f"MCP: SKIP ({p.mcp.skipped})")
    if p.mcp is not None and p.mcp.tools:
        lines += mcplatency.tool_table(p.mcp.tools)
    return "\n".join(lines + mcplatency.verdict_lines(verdicts(p))) + "\n"
