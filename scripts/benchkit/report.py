"""Benchmark report: the text tables and the one JSON document (same content)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from benchkit.measure import Spread
from benchkit.sequence import Chain
from benchkit.targets import Case, Target, per_mb_reference, relative_cost
from hotspot.render.tables import table

BASELINE_CMD = "python -c \"import json; json.load(open('DIR/code.json'))\""


@dataclass(frozen=True)
class Report:
    machine: dict[str, Any]     # cpus, load averages, python, platform, commit
    settings: dict[str, Any]    # runs, jobs, jobs_supported, jobs_note, cache, vs, wave program
    help_run: Spread | None
    cases: list[Case]
    targets: list[Target]
    chains: list[Chain] = ()             # issue 18: baseline, sequence and repeats per input
    help_runs: dict[str, Spread] | None = None  # --help and analyze --help, cold and warm


REPORT_WIDTH = 160  # the benchmark's case table: wider than a terminal, one line per case

def to_json(rep: Report) -> dict[str, Any]:
    ref = per_mb_reference(rep.cases)
    cases = []
    for c in rep.cases:
        cases.append({
            "label": c.label, "kind": c.kind, "path": str(c.path), "size_mb": c.size_mb, "waves": c.waves,
            "files": c.files, "wave_bytes": c.wave_bytes, "jobs": c.jobs,
            "hotspot": _spread(c.hotspot),
            "throughput_bytes_per_s": _throughput(c),
            "relative_cost_per_mb": relative_cost(c, ref),
            "relative_cost_reference": ref.label if ref else None,
            "baseline": _spread(c.baseline) if c.baseline else None,
            "ratio_vs_baseline": _ratio(c.hotspot, c.baseline),
            "other": _spread(c.other) if c.other else None,
            "ratio_vs_other": _ratio(c.hotspot, c.other),
        })
    chains = [{"label": ch.label, "fresh": _spread(ch.fresh), "baseline": _spread(ch.baseline),
               "sequence": _spread(ch.sequence),
               "steps": {k: _spread(v) for k, v in ch.steps.items()},
               "repeats": {k: _spread(v) for k, v in ch.repeats.items()},
               "fresh_vs_baseline": _ratio(ch.fresh, ch.baseline),
               "sequence_vs_fresh": _ratio(ch.sequence, ch.fresh),
               "repeat_vs_baseline": {k: _ratio(v, ch.baseline) for k, v in ch.repeats.items()}}
              for ch in rep.chains]
    return {"schema_version": 1, "machine": rep.machine, "settings": rep.settings,
            "help": _spread(rep.help_run) if rep.help_run else None,
            "help_runs": {k: _spread(v) for k, v in (rep.help_runs or {}).items()},
            "chains": chains, "cases": cases,
            "targets": [asdict(t) for t in rep.targets],
            "failures": [{"case": c.label, "error": s.failed} for c in rep.cases
                         for s in (c.hotspot, c.baseline, c.other) if s is not None and s.failed]}


def to_text(rep: Report) -> str:
    m, st = rep.machine, rep.settings
    load = f"load {m['load_start']:.2f} at start, {m['load_end']:.2f} at end" if m.get("load_start") is not None else ""
    lines = [f"hotspot benchmark: {m['cpus']} CPUs, {load}, Python {m['python']}, commit {m['commit'] or '?'}",
             f"runs per case: {st['runs']}; {st['jobs_note']}",
             f"generated dirs: {st['program']} (cache {st['cache']})", ""]
    h = rep.help_run
    lines.append("hotspot --help: " + (f"{_s(h.median_wall_ns)} s median ({_spread_s(h)} s, {h.runs} runs)"
                                       if h and not h.failed else f"failed: {h.failed if h else 'not run'}"))
    lines.append("")

    ref = per_mb_reference(rep.cases)
    ref_name = f"{ref.size_mb:g} MB" if ref and ref.size_mb is not None else "ref"
    headers = ["case", "waves", "files", "MB", "median s", "spread s", "MB/s", "CPU s", "peak RSS MiB",
               "tree RSS MiB", f"cost/MB vs {ref_name}", "--jobs"]
    rows = []
    for c in rep.cases:
        s = c.hotspot
        if s.failed:
            rows.append([c.label, f"{c.waves:,}", f"{c.files:,}", _mb(c.wave_bytes), "failed", "", "", "", "", "", "",
                         _jobs(c.jobs)])
            continue
        rel = relative_cost(c, ref)
        tp = _throughput(c)
        rows.append([c.label, f"{c.waves:,}", f"{c.files:,}", _mb(c.wave_bytes), _s(s.median_wall_ns), _spread_s(s),
                     "" if tp is None else f"{tp / 1e6:.1f}", _s(s.median_cpu_ns), _mib(s.peak_rss_bytes),
                     _mib(s.tree_rss_bytes) if s.tree_rss_bytes else "n/a",
                     "" if rel is None or c.kind != "size" else f"{rel:.2f}x", _jobs(c.jobs)])
    # one line per case, headers unfolded: the report is read in logs and pasted into docs/benchmark.md
    lines += [table(rows, headers, colalign=["left"] + ["right"] * (len(headers) - 1), width=REPORT_WIDTH), ""]

    base = [c for c in rep.cases if c.baseline is not None]
    if base:
        lines.append(f"baseline: {BASELINE_CMD}")
        rows = [[c.label, _s(c.hotspot.median_wall_ns), _s(c.baseline.median_wall_ns),
                 _ratio_text(c.hotspot, c.baseline)] for c in base if c.baseline is not None]
        lines += [table(rows, ["case", "hotspot s", "json.load s", "hotspot/baseline"],
                        colalign=["left", "right", "right", "right"]), ""]

    other = [c for c in rep.cases if c.other is not None]
    if other:
        lines.append(f"--vs {st['vs']}")
        rows = [[c.label, _s(c.hotspot.median_wall_ns), _s(c.other.median_wall_ns), _mib(c.other.peak_rss_bytes),
                 _ratio_text(c.hotspot, c.other)] for c in other if c.other is not None]
        lines += [table(rows, ["case", "hotspot s", "other s", "other RSS MiB", "hotspot/other"],
                        colalign=["left", "right", "right", "right", "right"]), ""]

    if rep.help_runs:
        lines.append("help: " + "; ".join(f"hotspot {k} {_s(v.median_wall_ns)} s" for k, v in rep.help_runs.items()))
        lines.append("")
    for ch in rep.chains:
        lines.append(f"{ch.label}: baseline {PREDECESSOR_CMD}, sequence analyze -> plan -> report -> diff "
                     "from an empty result cache, repeats with a warm one")
        rows = [["fresh analyze (cache off)", _s(ch.fresh.median_wall_ns), _ratio_text(ch.fresh, ch.baseline), ""],
                ["baseline", _s(ch.baseline.median_wall_ns), "1.00x", ""],
                ["sequence", _s(ch.sequence.median_wall_ns), _ratio_text(ch.sequence, ch.baseline),
                 _ratio_text(ch.sequence, ch.fresh)]]
        rows += [[f"  step {k}", _s(v.median_wall_ns), _ratio_text(v, ch.baseline), ""] for k, v in ch.steps.items()]
        rows += [[f"repeat {k}", _s(v.median_wall_ns), _ratio_text(v, ch.baseline), ""] for k, v in ch.repeats.items()]
        lines += [table(rows, ["command", "median s", "vs baseline", "vs fresh"],
                        colalign=["left", "right", "right", "right"]), ""]
    n9 = sum(1 for t in rep.targets if not _is18(t))
    lines.append("targets (issue 9, point 4):")
    for i, t in enumerate(rep.targets):
        if i == n9:
            lines.append("targets (issue 18):")
        lines.append(f"{t.verdict:<4}  {t.goal}: {t.measured}")
    fails = [(c.label, s.failed) for c in rep.cases for s in (c.hotspot, c.baseline, c.other)
             if s is not None and s.failed]
    if h and h.failed:
        fails.insert(0, ("hotspot --help", h.failed))
    if fails:
        lines += ["", "command failures:"] + [f"  {label}: {err}" for label, err in fails]
    return "\n".join(lines) + "\n"


PREDECESSOR_CMD = "python scripts/benchkit/predecessor.py DIR (a code.json-only pass)"
_ISSUE18 = ("fresh_vs_baseline", "repeat_vs_baseline", "sequence_vs_fresh", "big_bytes_per_cpu_s",
            "big_wall_2_cores", "big_rss_18", "help_18", "analyze_help")


def _is18(t: Target) -> bool:
    return t.name.split(":")[0] in _ISSUE18


def _jobs(jobs: int | None) -> str:
    return "-" if jobs is None else str(jobs)


def _spread(s: Spread) -> dict[str, Any]:
    return asdict(s) | {"wall_ns": list(s.wall_ns)}


def _throughput(c: Case) -> float | None:
    """Wave JSON bytes per wall second (whole process)."""
    if not c.ok or not c.wave_bytes or not c.hotspot.median_wall_ns:
        return None
    return c.wave_bytes / (c.hotspot.median_wall_ns / 1e9)


def _ratio(a: Spread, b: Spread | None) -> float | None:
    if b is None or a.failed or b.failed or not b.median_wall_ns:
        return None
    return a.median_wall_ns / b.median_wall_ns


def _ratio_text(a: Spread, b: Spread) -> str:
    r = _ratio(a, b)
    return "n/a (failed)" if r is None else f"{r:.2f}x"


def _s(ns: float) -> str:
    return f"{ns / 1e9:.3f}"


def _spread_s(s: Spread) -> str:
    return f"{s.min_wall_ns / 1e9:.3f}-{s.max_wall_ns / 1e9:.3f}"


def _mb(b: int) -> str:
    return f"{b / 1e6:.1f}"


def _mib(b: int) -> str:
    return f"{b / 2**20:.0f}"
