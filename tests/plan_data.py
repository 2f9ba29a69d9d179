"""Typed analyses for plan tests, written as the few JSON fields a test cares about.

A test states the rows, waits, loops ... that make its pattern, as the JSON of docs/schema/analyze.md;
`analysis(data)` fills every other field of each section with a neutral value (zero, empty, null)
and decodes it with `from_plain`, so the rules see the same typed `DispatchAnalysis` a capture
gives. `pmc_report(data)` does the same for a counter report (hotspot/pmc/analysis.py)."""

from __future__ import annotations

from typing import Any

from hotspot.att.model import DispatchAnalysis
from hotspot.decode import from_plain
from hotspot.plan.context import PlanContext
from hotspot.plan.engine import PlanOutcome, run_plan
from hotspot.pmc.analysis import KernelReport

Json = dict[str, Any]

_UNKNOWN_ESTIMATE: Json = {"value": None, "low": None, "high": None, "exact": False}

# Neutral values of each section's fields (what a test leaves out does not matter to it).
INSTRUCTION: Json = {"line_number": 0, "isa": "", "category": "other", "hit": 0, "latency": 0, "stall": 0,
                     "idle": 0, "issue": 0, "share": 0.0, "stall_per_hit": 0.0, "source": ""}
PRODUCER: Json = {"line_number": None, "isa": "", "category": "none", "source": "", "blamed_stall": 0.0,
                  "share": 0.0, "instances": 0, "median_distance_cycles": None,
                  "median_distance_instructions": None}
WAIT: Json = {"line_number": 0, "isa": "", "category": "wait-vmcnt", "source": "", "stall": 0, "hits": 0,
              "share": 0.0, "producers": []}
# a loop that repeats (the plan takes a backward branch run once per wave for no loop): tests of a
# one-shot branch give iterations_per_wave 1.0
LOOP: Json = {"first_line_number": 0, "last_line_number": 0, "source_range": "", "iterations": 0,
              "back_edges": 0, "waves": 0, "iterations_per_wave": 2.0, "stall": 0, "share": 0.0,
              "hot_wait": None}
BARRIER: Json = {"line_number": 0, "isa": "s_barrier", "source": "", "instances": 0, "stall": 0, "groups": 0,
                 "mean_waves_per_group": 0.0, "median_spread_cycles": None, "max_spread_cycles": None}
CATEGORY_STALL: Json = {"category": "other", "stall": 0, "share": 0.0, "latency": 0, "hit": 0,
                        "instructions": 0}
MIX: Json = {"category": "other", "static": 0, "executed": 0, "dynamic": 0}
FINDING: Json = {"id": "", "severity": "info", "message": ""}
OCCUPANCY: Json = {"available": True, "reason": "", "arch": ""}
ACHIEVED: Json = {"mean_waves_per_simd": None, "peak_waves_per_simd": 0, "simds": 0, "waves": 0,
                  "kernel_ids": []}
LAUNCH: Json = {"grid": None, "workgroup": None, "workgroups": None, "duration_ns": None, "cus": None,
                "source": ""}
DETAILS: Json = {"vgpr_total": 0, "vgpr_allocated": 0, "sgpr_total": None, "sgpr_allocated": None,
                 "waves_per_workgroup": None, "lds_allocated_bytes": None, "workgroups_per_cu_by_lds": None,
                 "workgroups_per_cu_by_slots": None}
NEXT_STEP: Json = {"target_waves": 0, "resource": "", "current": 0, "max_allowed": 0, "reduce_by": 0,
                   "message": ""}
LGKM: Json = {"stall": 0, "lgkm_stall": 0.0, "classes": [], "vmem_stall": 0.0, "no_producer_stall": 0.0,
              "cross_lane_share": 0.0, "smem_share": 0.0}
LGKM_CLASS: Json = {"producer_class": "lds", "stall": 0.0, "share": 0.0}
REPRESENTATIVENESS: Json = {"level": "ok", "waves_traced": 0, "waves_working": 0, "waves_early_exit": 0,
                            "early_exit_share": 0.0, "early_exit_max_records": None,
                            "longest_wave_records": 0, "waves_per_workgroup": None,
                            "workgroups_estimated": None, "passes_per_wave": None,
                            "shares_over": "all-waves", "reasons": []}
REASON: Json = {"id": "", "level": "note", "message": "", "recapture": ""}
DISPATCH: Json = {"path": "", "agent_handle": None, "dispatch_id": None, "kernel": "", "symbol": "",
                  "waves": 0, "code_rows": 0, "executed_instructions": 0, "source_mapped_pct": 0.0,
                  "kernels_in_code": 1}
ARCH: Json = {"gfx": "gfx950", "product": None, "source": "test", "known": True, "candidates": [],
              "features": []}
TOTALS: Json = {"hit": 0, "latency": 0, "stall": 0, "idle": 0, "issue": 0}
ANALYSIS: Json = {"mode": "cycles", "stall_by_category": [], "instructions": [], "source_lines": [],
                  "files": [], "instruction_mix": [], "findings": []}


def _with(defaults: Json, given: Json | None) -> Json:
    return {**defaults, **(given or {})}


def _occupancy(occ: Json) -> Json:
    out = _with(OCCUPANCY, occ)
    if occ.get("achieved") is not None:
        out["achieved"] = _with(ACHIEVED, occ["achieved"])
    if occ.get("details") is not None:
        out["details"] = _with(DETAILS, occ["details"])
    if occ.get("launch") is not None:
        out["launch"] = _with(LAUNCH, occ["launch"])
    out["next_step"] = {k: _with(NEXT_STEP, v) for k, v in (occ.get("next_step") or {}).items()}
    return out


def analysis(data: Json) -> DispatchAnalysis:
    """The typed analysis of `data` (a partial analyze JSON document of one dispatch)."""
    d = _with(ANALYSIS, data)
    d["dispatch"] = _with(DISPATCH, data.get("dispatch"))
    d["arch"] = _with(ARCH, data.get("arch"))
    d["totals"] = _with(TOTALS, data.get("totals"))
    d["instructions"] = [_with(INSTRUCTION, i) for i in d["instructions"]]
    d["stall_by_category"] = [_with(CATEGORY_STALL, c) for c in d["stall_by_category"]]
    d["instruction_mix"] = [_with(MIX, m) for m in d["instruction_mix"]]
    d["findings"] = [_with(FINDING, f) for f in d["findings"]]
    if d.get("waits") is not None:
        d["waits"] = [_with(WAIT, w) | {"producers": [_with(PRODUCER, p) for p in w.get("producers") or []]}
                      for w in d["waits"]]
    if d.get("loops") is not None:
        d["loops"] = [_with(LOOP, lp) for lp in d["loops"]]
    if d.get("barriers") is not None:
        d["barriers"] = [_with(BARRIER, b) for b in d["barriers"]]
    if d.get("occupancy") is not None:
        d["occupancy"] = _occupancy(d["occupancy"])
    if d.get("lgkm_breakdown") is not None:
        lb = d["lgkm_breakdown"]
        d["lgkm_breakdown"] = _with(LGKM, lb) | {"classes": [_with(LGKM_CLASS, c) for c in lb.get("classes") or []]}
    if d.get("representativeness") is not None:
        rep = d["representativeness"]
        d["representativeness"] = _with(REPRESENTATIVENESS, rep) | {
            "reasons": [_with(REASON, r) for r in rep.get("reasons") or []]}
    return from_plain(DispatchAnalysis, d)


PMC_KERNEL: Json = {"kernel": "", "dispatches": 1, "dispatch_ids": [], "counters": {}, "l2_hit_pct": None,
                    "req_32b_pct": None,
                    "fabric_read_bytes": _UNKNOWN_ESTIMATE, "fabric_bytes_label": "",
                    "dram_read_bytes": None, "inconsistent_dispatches": 0,
                    "over_fetch": _UNKNOWN_ESTIMATE, "duration_ns": None,
                    "achieved_gbps": _UNKNOWN_ESTIMATE, "peak_gbps": None, "peak_source": "",
                    "pct_of_peak": _UNKNOWN_ESTIMATE,
                    "median_per_dispatch": {"fabric_read_bytes": _UNKNOWN_ESTIMATE, "duration_ns": None,
                                            "achieved_gbps": _UNKNOWN_ESTIMATE, "l2_hit_pct": None},
                    "verdicts": []}
ESTIMATE_FIELDS = ("over_fetch", "fabric_read_bytes", "achieved_gbps", "pct_of_peak")
VERDICT: Json = {"id": "", "text": "", "evidence": {}, "next": ""}


def pmc_report(data: Json) -> KernelReport:
    """The typed counter report of one kernel from the fields a test gives."""
    d = _with(PMC_KERNEL, data)
    for name in ESTIMATE_FIELDS:
        d[name] = _with(_UNKNOWN_ESTIMATE, d[name])
    d["verdicts"] = [_with(VERDICT, v) | {"evidence": {k: _with(_UNKNOWN_ESTIMATE, e) if isinstance(e, dict) else e
                                                      for k, e in (v.get("evidence") or {}).items()}}
                     for v in d["verdicts"]]
    return from_plain(KernelReport, d)


def plan_of(data: Json, pmc: Json | None = None) -> PlanOutcome:
    """`run_plan` over the typed analysis (and counter report) of partial JSON documents."""
    return run_plan(analysis(data), pmc_report(pmc) if pmc is not None else None)


def context_of(data: Json) -> PlanContext:
    return PlanContext(analysis(data))
