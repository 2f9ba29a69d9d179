"""Text and markdown views of the collect and doctor Results (no computation here)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Protocol, cast

from hotspot.render.tables import heading, num, pct, table, verbatim
from hotspot.result import JsonObject, Result

KERNEL_TABLE_ROWS = 10  # discovery rows printed while collect runs
_STATUS_MARK = {"pass": "ok", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


class _Check(Protocol):
    name: str
    status: str
    detail: str
    fix: str


class _Doctor(Protocol):
    """hotspot/collect/doctor_checks.py DoctorReport, read by name (render sits below collect)."""

    ok: bool
    checks: Sequence[_Check]
    gpus: Sequence[object]
    rocprofv3_doctor: JsonObject | None
    missing: Sequence[str]
    checked_for: str
    analysis_ready: bool


class _Iterations(Protocol):
    description: str


class _DryPhase(Protocol):
    name: str
    argv: Sequence[str]
    input_file: str | None
    yaml: str | None


class _DryRun(Protocol):
    """hotspot/collect/run_result.py CollectDryRun, read by name."""

    run_dir: str
    iterations: _Iterations | None
    pmc_plan_text: str | None
    phases: Sequence[_DryPhase]


class _Phase(Protocol):
    name: str
    status: str
    exit_code: int | None
    elapsed_ns: int | None


class _Dispatch(Protocol):
    path: str
    waves: int
    executed_instructions: int
    empty: bool
    truncated: bool


class _Kernel(Protocol):
    name: str | None
    regex: str
    reason: str


class _Pmc(Protocol):
    counters: Sequence[str]
    passes: Sequence[Sequence[str]]
    csv_files: Sequence[str]
    analysis: object


class _AnalysisError(Protocol):
    message: str


class _Run(Protocol):
    """hotspot/collect/run_result.py CollectRun, read by name."""

    dry_run: bool
    run_dir: str
    status: str
    kernel: _Kernel | None
    iterations: _Iterations | None
    phases: Sequence[_Phase]
    dispatches: Sequence[_Dispatch]
    chosen_dispatch: _Dispatch | None
    pmc: _Pmc | None
    analysis: object
    analysis_error: _AnalysisError | None


def render_doctor(result: Result[object], markdown: bool = False) -> str:
    rep = cast(_Doctor, result.data)
    rows = [[_STATUS_MARK.get(c.status, c.status), c.name, c.detail, c.fix] for c in rep.checks]
    out = [heading("hotspot doctor", markdown), table(rows, ["status", "check", "detail", "fix"], markdown=markdown)]
    verdicts = []
    if rep.checked_for in ("analyze", "both"):
        verdicts.append("analysis: ready (analyze, plan, report, diff and export work here)"
                        if rep.analysis_ready else "analysis: NOT ready (fix above)")
    if rep.checked_for in ("collect", "both"):
        if not rep.ok:
            verdicts.append(f"collection: NOT ready: required {', '.join(rep.missing)} missing (fix above)")
        elif not rep.gpus:
            # the tools are there, but `collect` here would fail: say so, not "ready"
            verdicts.append("collection: NOT ready here: the tools are installed but no GPU was found "
                            "(run collect on a node with an AMD Instinct GPU)")
        else:
            verdicts.append("collection: ready")
    out.append("\n".join(verdicts))
    doc = rep.rocprofv3_doctor  # free-form: rocprofv3-doctor's own JSON
    if doc and doc.get("findings") is not None:
        out.append("rocprofv3-doctor findings are included in --format json")
    return "\n\n".join(out)


def render_doctor_markdown(result: Result[object]) -> str:
    return render_doctor(result, markdown=True)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + ln for ln in text.rstrip("\n").splitlines())


def _render_dry_run(d: _DryRun, markdown: bool) -> str:
    out = [heading("hotspot collect --dry-run (nothing was run)", markdown),
           f"run directory would be: {d.run_dir}"]
    if d.iterations:
        out.append(d.iterations.description)
    if d.pmc_plan_text:
        out.append(d.pmc_plan_text)
    for p in d.phases:
        block = [f"phase {p.name}:"]
        if p.yaml and p.input_file:
            block.append(f"  {p.input_file}:")
            block.append(verbatim(_indent(p.yaml)))
        block.append(verbatim("  $ " + shlex.join(p.argv)))
        out.append("\n".join(block))
    return "\n\n".join(out)


def render_collect(result: Result[object], markdown: bool = False) -> str:
    d = cast(_Run, result.data)
    if d.dry_run:
        return _render_dry_run(cast(_DryRun, result.data), markdown)
    out = [heading("hotspot collect", markdown), f"run directory: {d.run_dir} ({d.status})"]
    k = d.kernel  # discovery's row, or --kernel's regex
    if k:
        lines = [f"kernel: {k.name or '(by regex)'}", f"  kernel_include_regex: {k.regex}",
                 f"  why: {k.reason}"]
        out.append("\n".join(lines))
    if d.iterations:
        out.append(d.iterations.description)
    out.append(table([[p.name, p.status, p.exit_code, f"{(p.elapsed_ns or 0) / 1e9:.1f}"]
                      for p in d.phases], ["phase", "status", "exit", "seconds"], markdown=markdown))
    chosen = d.chosen_dispatch.path if d.chosen_dispatch else None
    if d.dispatches:
        rows = [["*" if x.path == chosen else "", x.path.rsplit("/", 1)[-1], num(x.waves),
                 num(x.executed_instructions),
                 "empty" if x.empty else "TRUNCATED" if x.truncated else "ok"] for x in d.dispatches]
        out.append(table(rows, ["chosen", "dispatch", "waves", "executed", "state"], markdown=markdown))
    pmc = d.pmc  # the counter passes (hotspot/collect/counter_passes.py)
    if pmc:
        out.append(f"counters: {len(pmc.counters)} in {len(pmc.passes)} pass(es); "
                   f"{len(pmc.csv_files)} CSV file(s)" +
                   ("; analysis in pmc_analysis.json" if pmc.analysis is not None else ""))
    if d.analysis is not None:
        out.append(f"analysis of the chosen dispatch: {d.run_dir}/analysis.json "
                   f"(full report: hotspot analyze {shlex.quote(str(chosen))})")
    elif d.analysis_error:
        out.append(f"analysis failed: {d.analysis_error.message}")
    return "\n\n".join(out)


def render_collect_markdown(result: Result[object]) -> str:
    return render_collect(result, markdown=True)


class _KernelRow(Protocol):  # read-only: records
    @property
    def name(self) -> str: ...
    @property
    def calls(self) -> int: ...
    @property
    def total_ns(self) -> int | float: ...
    @property
    def avg_ns(self) -> float: ...
    @property
    def pct(self) -> float | None: ...


def render_kernel_table(rows: Sequence[_KernelRow]) -> str:
    """The discovery run's kernel table, printed on stderr while collect runs."""
    shown = rows[:KERNEL_TABLE_ROWS]
    body = table([[i, r.name, num(r.calls), f"{r.total_ns / 1e3:,.1f}", f"{r.avg_ns / 1e3:,.1f}", pct(r.pct)]
                  for i, r in enumerate(shown, start=1)],
                 ["#", "kernel", "calls", "total µs", "avg µs", "% GPU"])
    more = f"\n({len(rows) - len(shown)} more)" if len(rows) > len(shown) else ""
    return "discovered kernels (by total GPU time):\n" + body + more
