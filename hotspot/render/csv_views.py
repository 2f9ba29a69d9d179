"""`--format csv` of the table-shaped views (analyze, plan, pmc, kernels, diff, occupancy, sweep
status/report, doctor): one table per section, raw values
in base units (cycles, bytes, shares as fractions 0-1, as in JSON), never shortened.

Layout (docs/csv.md): one section asked (`--section NAME`) prints a plain CSV table, a header row
then its rows, as `pandas.read_csv` reads it; several print one block per section, each a line
`# section: NAME`, the header row and the rows, blocks separated by one empty line. The sections
are the text view's (the command spec's `sections`), chosen the same way (hotspot/render/sections.py).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from hotspot.att.model import AnalysisMode, DispatchAnalysis
from hotspot.render.sections import Parts
from hotspot.result import Result

if TYPE_CHECKING:
    from hotspot.pmc.estimate import Estimate
    from hotspot.trace.model import KernelRow
    from hotspot.plan.api import PlannedDispatch
    from hotspot.plan.coverage import Coverage
    from hotspot.plan.engine import Verdict
    from hotspot.plan.model import PlanItem

Row = Sequence[object]


# One CSV table: its header row and its rows.
CsvTable = tuple[list[str], list[Row]]


class CsvTables(Parts[CsvTable]):
    """The tables of one view in print order, chosen as the text view's sections are."""

    def table(self, name: str, headers: list[str], rows: list[Row], default: bool = True) -> None:
        self.add(name, (headers, rows), default)

    def text(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        single = len(self.parts) == 1
        for i, (name, (headers, rows)) in enumerate(self.parts):
            if i:
                out.write("\n")
            if not single:
                out.write(f"# section: {name}\n")
            w.writerow(headers)
            w.writerows([[_cell(v) for v in row] for row in rows])
        return out.getvalue()


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, 6)) if math.isfinite(value) else ""
    if isinstance(value, (list, tuple)):
        return ";".join(str(v) for v in value)
    return value


def _key_value(pairs: Sequence[tuple[str, object]]) -> list[Row]:
    return [[k, v] for k, v in pairs]


# --------------------------------------------------------------------------------------------
# analyze


def render_analyze(result: Result[object]) -> str:
    data: Any = result.data
    out = CsvTables()
    if hasattr(data, "ranking") and hasattr(data, "dispatches"):  # --all
        out.table("ranking", ["rank", "path", "kernel", "waves", "executed_instructions", "code_rows",
                            "source_mapped_pct", "status"],
                [[i + 1, r.path, r.kernel, r.waves, r.executed_instructions, r.code_rows,
                  r.source_mapped_pct, r.status] for i, r in enumerate(data.ranking)])
        ones = list(data.dispatches)
    else:
        ones = [data]
    for one in ones:
        _analysis_tables(out, cast("DispatchAnalysis | PlannedDispatch", one), len(ones) > 1)
    return _merged(out).text()


def _merged(out: CsvTables) -> CsvTables:
    """With --all every dispatch adds its tables: one table per section, rows of all of them."""
    merged = CsvTables()
    seen: dict[str, int] = {}
    for name, (headers, rows) in out.parts:
        if name in seen:
            merged.parts[seen[name]][1][1].extend(rows)
        else:
            seen[name] = len(merged.parts)
            merged.parts.append((name, (headers, list(rows))))
    return merged


def _analysis_tables(out: CsvTables, one: DispatchAnalysis | PlannedDispatch, many: bool) -> None:
    a, plan = (one, None) if isinstance(one, DispatchAnalysis) else (one.analysis, one.plan)
    d, t = a.dispatch, a.totals
    planned = plan is not None
    tables = not planned or a.asked_detail
    # with --all every row names its dispatch dir: the first column
    pre: list[str] = ["dispatch"] if many else []
    key: list[object] = [d.path] if many else []

    def add(name: str, headers: list[str], rows: list[Row], default: bool = tables) -> None:
        out.table(name, pre + headers, [key + list(r) for r in rows], default)

    if plan is not None:
        add("verdict", *_verdict_table(plan.verdict), default=True)
    add("summary", ["field", "value"], _key_value([
        ("dispatch_dir", d.path), ("kernel", d.kernel), ("symbol", d.symbol),
        ("arch", a.arch.gfx), ("product", a.arch.product), ("mode", str(a.mode)),
        ("waves", d.waves), ("code_rows", d.code_rows), ("executed_instructions", d.executed_instructions),
        ("source_mapped_pct", d.source_mapped_pct), ("latency", t.latency), ("stall", t.stall),
        ("issue", t.issue), ("idle", t.idle), ("hit", t.hit),
        ("tables_complete", a.tables_complete)]), default=True)
    occ = a.occupancy
    if occ is not None:
        r = occ.resources
        ach = occ.achieved
        add("occupancy", ["field", "value"], _key_value([
            ("vgpr", r.vgpr if r else None), ("agpr", r.agpr if r else None),
            ("sgpr", r.sgpr if r else None), ("lds_bytes", r.lds if r else None),
            ("wg_threads", r.wg if r else None), ("available", occ.available),
            ("waves_per_simd", occ.waves_per_simd), ("limiters", list(occ.limiters)),
            ("achieved_mean_waves_per_simd", ach.mean_waves_per_simd if ach else None),
            ("achieved_peak_waves_per_simd", ach.peak_waves_per_simd if ach else None)]))
    if a.mode == AnalysisMode.PC_SAMPLING and a.samples is not None:
        add("stall", ["reason", "samples"],
            [[k, v] for k, v in sorted(a.samples.stall_reasons.items(), key=lambda kv: (-kv[1], kv[0]))])
    else:
        add("stall", ["category", "stall", "share", "latency", "hit", "instructions"],
            [[c.category, c.stall, c.share, c.latency, c.hit, c.instructions] for c in a.stall_by_category])
    add("lines", ["file", "line", "stall", "share", "stall_rate", "latency", "hit", "dominant_category",
                  "instructions"],
        [[s.file, s.line, s.stall, s.share, s.stall_rate, s.latency, s.hit, s.dominant_category,
          list(s.instructions)] for s in a.source_lines])
    add("instructions", ["line_number", "isa", "category", "hit", "latency", "stall", "idle", "share",
                         "source"],
        [[i.line_number, i.isa, i.category, i.hit, i.latency, i.stall, i.idle, i.share, i.source]
         for i in a.instructions])
    if a.blamed_lines:
        add("blamed-loads", ["load", "blamed_stall", "share", "categories", "median_distance_cycles",
                             "median_distance_instructions"],
            [[b.label, b.blamed_stall, b.share, list(b.categories), b.median_distance_cycles,
              b.median_distance_instructions] for b in a.blamed_lines])
    if a.waits:
        rows: list[Row] = []
        for w in a.waits:
            if not w.producers:
                rows.append([w.line_number, w.isa, w.stall, None, None, None, None, None])
            for p in w.producers:
                rows.append([w.line_number, w.isa, w.stall, p.line_number, p.isa, p.share,
                             p.median_distance_cycles, p.median_distance_instructions])
        add("waits", ["wait_line_number", "wait_isa", "wait_stall", "producer_line_number", "producer_isa",
                      "share", "median_distance_cycles", "median_distance_instructions"], rows)
    bd = a.lgkm_breakdown
    if bd is not None and bd.stall:
        rows = [[c.producer_class, c.stall, c.share] for c in bd.classes]
        rows += [["vmem (mixed waits)", bd.vmem_stall, bd.vmem_stall / bd.stall],
                 ["nothing outstanding", bd.no_producer_stall, bd.no_producer_stall / bd.stall]]
        add("lgkm", ["producer", "stall", "share"], rows)
    ws = a.wave_states
    if ws is not None:
        src = ws.lines or ws.instructions
        add("wave-states", ["source_line" if ws.lines else "instruction", "exec", "wait", "stall", "idle"],
            [[r.label, r.exec, r.wait, r.stall, r.idle] for r in src])
    if a.loops:
        add("loops", ["first_line_number", "last_line_number", "source", "iterations", "iterations_per_wave",
                      "stall", "share"],
            [[lp.first_line_number, lp.last_line_number, lp.source_range, lp.iterations,
              lp.iterations_per_wave, lp.stall, lp.share] for lp in a.loops])
    if a.barriers:
        add("barriers", ["line_number", "source", "instances", "stall", "groups", "median_spread_cycles",
                         "max_spread_cycles"],
            [[b.line_number, b.source, b.instances, b.stall, b.groups, b.median_spread_cycles,
              b.max_spread_cycles] for b in a.barriers])
    if a.detail:
        add("hot-lines", ["file", "line", "snippet_line", "hot", "text"],
            [[dl.file, dl.line, s.line, s.hot, s.text] for dl in a.detail for s in dl.snippet])
    rep = a.representativeness
    if rep is not None:
        add("representativeness", ["id", "level", "message", "recapture"],
            [[r.id, r.level, r.message, r.recapture] for r in rep.reasons])
    add("findings", ["id", "severity", "message", "hint"],
        [[f.id, f.severity, f.message, f.hint] for f in a.findings])
    if plan is not None:
        add("plan", *_items_table(plan.items), default=planned)


def _verdict_table(verdict: Verdict) -> tuple[list[str], list[Row]]:
    """The verdict's top items with their estimate and location."""
    return (["rank", "priority", "id", "low_pct", "high_pct", "file", "line", "line_number", "title"],
            [[it.rank, it.priority, it.id, it.low_pct, it.high_pct, it.file, it.line, it.line_number,
              it.title] for it in verdict.top_items])


def _items_table(items: list[PlanItem]) -> tuple[list[str], list[Row]]:
    return (["rank", "priority", "id", "kind", "low_pct", "high_pct", "file", "line", "line_number", "isa",
             "title", "fix"],
            [[it.rank, it.priority, it.id, getattr(it.kind, "value", it.kind), it.estimate.low_pct, it.estimate.high_pct,
              it.location.file, it.location.line, it.location.line_number, it.location.isa, it.title, it.fix]
             for it in items])


# --------------------------------------------------------------------------------------------
# plan


def render_plan(result: Result[object]) -> str:
    from hotspot.plan.api import PlanData

    d = result.data
    assert isinstance(d, PlanData)
    out = CsvTables()
    out.table("verdict", *_verdict_table(d.verdict))
    out.table("dispatch", ["field", "value"], _key_value([
        ("dispatch_dir", d.dispatch.path), ("kernel", d.dispatch.kernel), ("arch", d.arch.gfx),
        ("trust", d.trust.level), ("trust_reasons", list(d.trust.reasons)),
        ("chosen_because", d.selection.reason if d.selection else None)]))
    out.table("summary", ["category", "stall", "share"],
            [[c.category, c.stall, c.share] for c in d.summary.top_categories], default=False)
    out.table("plan", *_items_table(d.plan))
    out.table("gap", *_gap_table(d.coverage))
    return out.text()


def _gap_table(coverage: Coverage | None) -> tuple[list[str], list[Row]]:
    gap = coverage.gap if coverage is not None else None
    rows: list[Row] = []
    if gap is not None:
        for g in gap.rows:
            top = g.producers[0] if g.producers else None
            rows.append([gap.category, g.line_number, g.isa, g.stall, g.unexplained,
                         top.line_number if top else None, top.isa if top else None])
    return (["category", "line_number", "isa", "stall", "unexplained", "producer_line_number",
             "producer_isa"], rows)


def plan_detail(result: Result[object]) -> str:
    """`plan --detail --format csv`: the stall summary too."""
    from hotspot.render.sections import asked, showing

    if asked() is None:
        with showing(("verdict", "dispatch", "summary", "plan", "gap")):
            return render_plan(result)
    return render_plan(result)


def render_brief(result: Result[object]) -> str:
    """`--brief --format csv` (analyze, plan): the verdict's top items alone."""
    from hotspot.plan.api import planned_view

    view = planned_view(result.data)
    out = CsvTables()
    if view is not None:
        out.parts.append(("verdict", _verdict_table(view[2])))
    return out.text()


# --------------------------------------------------------------------------------------------
# pmc


def _estimate(e: Estimate) -> list[object]:
    return [e.low, e.high, e.exact]


def render_pmc(result: Result[object]) -> str:
    from hotspot.pmc.api import PmcData

    d = result.data
    assert isinstance(d, PmcData)
    out = CsvTables()
    out.table("inputs", ["path", "layout", "dispatches", "all_zero"],
            [[i.path, i.layout, i.dispatches, i.all_zero] for i in d.inputs])
    est = ["fabric_read_bytes_low", "fabric_read_bytes_high", "fabric_read_bytes_exact"]
    out.table("kernels", ["kernel", "runtime", "dispatches", "l2_hit_pct", "req_32b_pct", *est, "duration_ns",
                        "achieved_gbps_low", "achieved_gbps_high", "pct_of_peak_low", "pct_of_peak_high",
                        "over_fetch_low", "over_fetch_high"],
            [[k.kernel, k.runtime, k.dispatches, k.l2_hit_pct, k.req_32b_pct, *_estimate(k.fabric_read_bytes),
              k.duration_ns, k.achieved_gbps.low, k.achieved_gbps.high, k.pct_of_peak.low,
              k.pct_of_peak.high, k.over_fetch.low, k.over_fetch.high] for k in d.kernels])
    out.table("verdicts", ["kernel", "id", "certain", "text", "next"],
            [[k.kernel, v.id, v.certain, v.text, v.next] for k in d.kernels for v in k.verdicts])
    # long form: one row per kernel and counter (the counters differ between files)
    out.table("counters", ["kernel", "counter", "sum"],
            [[k.kernel, n, v] for k in d.kernels for n, v in k.counters.items()])
    if d.dispatches is not None:
        out.table("dispatches", ["dispatch_id", "kernel", "l2_hit_pct", "req_32b_pct", *est, "duration_ns",
                               "achieved_gbps_low", "achieved_gbps_high"],
                [[x.dispatch_id, x.kernel, x.l2_hit_pct, x.req_32b_pct, *_estimate(x.fabric_read_bytes),
                  x.duration_ns, x.achieved_gbps.low, x.achieved_gbps.high] for x in d.dispatches])
    return out.text()


# --------------------------------------------------------------------------------------------
# kernels


_KERNEL_COLUMNS = ["rank", "kernel", "family", "calls", "total_ns", "avg_ns", "min_ns", "max_ns", "pct", "regex"]


def _kernel_rows(kernels: list[KernelRow]) -> list[Row]:
    return [[i, k.name, k.family, k.calls, k.total_ns, k.avg_ns, k.min_ns, k.max_ns, k.pct, k.regex]
            for i, k in enumerate(kernels, 1)]


def render_kernels(result: Result[object]) -> str:
    """`kernels --format csv`: the ranked kernels; with --marker also one table of every region's
    kernels (a first column `region`, `run` when several runs merge)."""
    from hotspot.trace.model import KernelTable

    d = result.data
    assert isinstance(d, KernelTable)
    out = CsvTables()
    out.table("kernels", _KERNEL_COLUMNS, _kernel_rows(d.kernels))
    if d.regions is not None:
        out.table("regions", ["region", "run", "region_wall_ns", "region_gpu_ns", *_KERNEL_COLUMNS],
                [[r.name, r.run, r.wall_ns, r.gpu_ns, *row] for r in d.regions for row in _kernel_rows(r.kernels)])
    return out.text()


# --------------------------------------------------------------------------------------------
# diff


_DIFF_COLUMNS = ["key", "kind", "label", "before", "after", "delta", "delta_pct", "rate_unit",
                 "executions_before", "executions_after", "per_execution_before", "per_execution_after",
                 "change_pct", "ci_low_pct", "ci_high_pct", "p", "q", "tested", "not_tested", "significant",
                 "varies_run_to_run", "matched_by"]


def render_diff(result: Result[object]) -> str:
    """`diff --format csv`: one plain table, a row per compared row (totals, categories, source
    lines, blamed loads), its change, interval and test as in JSON's `data.rows`."""
    d: Any = result.data  # diff's DiffResult (hotspot/diff/api.py: a layer above the views)
    out = CsvTables()
    out.table("rows", _DIFF_COLUMNS, [
        [r.key, getattr(r.kind, "value", r.kind), r.label, r.before, r.after, r.delta, r.delta_pct, r.rate_unit,
         r.executions_before, r.executions_after, r.per_execution_before, r.per_execution_after,
         r.change_pct, r.ci_pct[0] if r.ci_pct else None, r.ci_pct[1] if r.ci_pct else None, r.p, r.q,
         r.tested, r.not_tested, r.significant, r.varies_run_to_run, getattr(r.matched_by, "value", r.matched_by)]
        for r in d.rows])
    return out.text()


# --------------------------------------------------------------------------------------------
# occupancy


def render_occupancy(result: Result[object]) -> str:
    """`occupancy --format csv`: the inputs and result (field, value), each limit, the next step
    per binding limiter and the notes."""
    from hotspot.arch.occupancy_model import LIMIT_NAMES, Occupancy

    occ = result.data
    assert isinstance(occ, Occupancy)
    inp, det = occ.inputs, occ.details
    out = CsvTables()
    out.table("occupancy", ["field", "value"], _key_value([
        ("arch", occ.arch), ("waves_per_simd", occ.waves_per_simd), ("limiter", occ.limiter),
        ("limiters", list(occ.limiters)), ("vgpr", inp.vgpr), ("agpr", inp.agpr), ("sgpr", inp.sgpr),
        ("sgpr_includes_implicit", inp.sgpr_includes_implicit), ("lds_bytes", inp.lds_bytes),
        ("wg_threads", inp.wg_threads), ("vgpr_total", det.vgpr_total), ("vgpr_allocated", det.vgpr_allocated),
        ("sgpr_total", det.sgpr_total), ("sgpr_allocated", det.sgpr_allocated),
        ("waves_per_workgroup", det.waves_per_workgroup), ("lds_allocated_bytes", det.lds_allocated_bytes),
        ("workgroups_per_cu_by_lds", det.workgroups_per_cu_by_lds),
        ("workgroups_per_cu_by_slots", det.workgroups_per_cu_by_slots)]))
    out.table("limits", ["limit", "waves_per_simd", "binding"],
            [[name, occ.limits[name], name in occ.limiters] for name in LIMIT_NAMES])
    out.table("next-steps", ["limiter", "target_waves", "resource", "current", "max_allowed", "reduce_by",
                           "message"],
            [[name, s.target_waves, s.resource, s.current, s.max_allowed, s.reduce_by, s.message]
             for name, s in occ.next_step.items()])
    out.table("notes", ["note"], [[n] for n in occ.notes])
    return out.text()


# --------------------------------------------------------------------------------------------
# sweep status, sweep report


def render_sweep_status(result: Result[object]) -> str:
    """`sweep status --format csv`: one row per entry, then the workers, the Slurm array's tasks
    and the problems found (each table keeps its header when empty)."""
    d: Any = result.data  # hotspot.sweep_records.StatusData
    out = CsvTables()
    out.table("entries", ["entry", "state", "attempts", "host", "gpu", "device", "worker", "started_at",
                        "finished_at", "elapsed_s", "exit_code", "reason", "log", "run_dir"],
            [[e.name, str(e.state), e.attempts, e.host, e.gpu, e.device, e.worker, e.started_at,
              e.finished_at, e.elapsed_s, e.exit_code, e.reason, e.log, e.run_dir] for e in d.entries])
    out.table("workers", ["worker", "host", "pid", "state", "gpus", "devices", "heartbeat_at", "array_task"],
            [[w.id, w.host, w.pid, w.state, list(w.gpus or []), list(w.devices or []), w.heartbeat_at,
              w.array_task_id] for w in d.workers])
    tasks = (d.slurm.tasks if d.slurm else None) or []
    out.table("slurm-tasks", ["task", "job_id", "state", "exit_code", "node", "reason", "source", "log", "starts"],
            [[t.task, t.job_id, t.state, t.exit_code, t.node, t.reason, t.source, t.log, t.starts]
             for t in tasks])
    out.table("problems", ["task", "kind", "message", "fix"],
            [[p.task, p.kind, p.message, p.fix] for p in d.problems])
    return out.text()


_SWEEP_REPORT_COLUMNS = ["entry", "state", "kernel", "arch", "duration_ns", "traced_dispatch_ns", "waves",
                         "total_cycles", "occupancy_theoretical", "occupancy_achieved", "occupancy_limiter",
                         "top_stall_category", "top_stall_share", "hottest_file", "hottest_line",
                         "hottest_share", "source_collapse", "top_plan_item", "top_plan_priority",
                         "top_plan_title", "estimate_low_pct", "estimate_high_pct", "headroom_pct", "reason",
                         "log", "report_html"]


def render_sweep_report(result: Result[object]) -> str:
    """`sweep report --format csv`: one plain table, a row per entry in the report's order (by
    estimated headroom), every field of its summary whole (an entry not analyzed: empty cells)."""
    d: Any = result.data  # hotspot.sweep_records.ReportData
    rows: list[Row] = []
    for e in d.entries:
        s = e.summary
        line, top = (s.hottest_line, s.top_plan_item) if s is not None else (None, None)
        rows.append([
            e.name, str(e.state), *([s.kernel, s.arch, s.duration_ns, s.traced_dispatch_ns, s.waves, s.total_cycles,
                                     s.occupancy_theoretical, s.occupancy_achieved, s.occupancy_limiter,
                                     s.top_stall_category, s.top_stall_share] if s is not None else [None] * 11),
            line.file if line else None, line.line if line else None, line.share if line else None,
            s.source_collapse if s is not None else None,
            top.id if top else None, top.priority if top else None, top.title if top else None,
            top.estimate_low_pct if top else None, top.estimate_high_pct if top else None,
            s.headroom_pct if s is not None else None, e.reason, e.log, e.report_html])
    out = CsvTables()
    out.table("entries", _SWEEP_REPORT_COLUMNS, rows)
    return out.text()


# --------------------------------------------------------------------------------------------
# doctor


def render_doctor(result: Result[object]) -> str:
    """`doctor --format csv`: each check (status, required, detail, fix), then the readiness of
    analysis and collection as the text view says it (field, value)."""
    rep: Any = result.data  # hotspot.collect.doctor_checks.DoctorReport (a layer above the views)
    out = CsvTables()
    out.table("checks", ["check", "status", "required", "detail", "fix"],
            [[c.name, c.status, c.required, c.detail, c.fix] for c in rep.checks])
    analysis = rep.checked_for in ("analyze", "both")
    collection = rep.checked_for in ("collect", "both")
    out.table("readiness", ["field", "value"], _key_value([
        ("checked_for", rep.checked_for),
        ("analysis_ready", rep.analysis_ready if analysis else None),
        ("collection_ready", bool(rep.ok and rep.gpus) if collection else None),
        ("tools_ready", rep.ok), ("gpus", len(rep.gpus)), ("missing", list(rep.missing))]))
    return out.text()
