"""The plan over an analysis: attached to each dispatch (`analyze --plan`) or alone (`hotspot plan`'s
document). Reached through the one analysis use case, hotspot/plan/analyze.py `analyze`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path

from hotspot.att.aggregate import CategoryStall
from hotspot.att.model import (
    AnalyzeOptions,
    ArchOut,
    DispatchAnalysis,
    DispatchInfo,
    MultiAnalysis,
    Selection,
    trimmed_data,
)
from hotspot.att.occupancy import DispatchOccupancy
from hotspot.errors import UsageError
from hotspot.plan.engine import PlanOutcome, StallSummary, Verdict, run_plan, verdict_of
from hotspot.plan.model import PlanItem, Skipped, Trust
from hotspot.result import JsonObject, JsonValue, PlainView, Result, plain
from hotspot.record import record


@record(frozen=False)
class PlannedAnalysis(DispatchAnalysis):
    """The analyze data plus the plan, and its debug list (which rules did not fire, and why)."""

    plan_skipped: list[Skipped] | None = None
    plan_summary: StallSummary | None = None
    plan_trust: Trust | None = None
    verdict: Verdict | None = None
    plan_pmc: JsonObject | None = None


@record
class PlanData:
    """`hotspot plan` output: what the plan needs, without the analyze tables."""

    dispatch: DispatchInfo
    arch: ArchOut
    summary: StallSummary
    stall_by_category: list[CategoryStall]
    occupancy: DispatchOccupancy | None
    trust: Trust
    verdict: Verdict
    plan: list[PlanItem]
    plan_skipped: list[Skipped]
    pmc: JsonObject | None
    selection: Selection | None


def with_plan(full: Result, opts: AnalyzeOptions) -> Result:
    """The full analysis with `plan` (and `plan_skipped`) attached to each dispatch, then the
    tables shortened to `--topk` for output."""
    pmc_paths = [Path(p) for p in opts.pmc] or None
    warnings = list(full.warnings)
    data = full.data
    if isinstance(data, MultiAnalysis):
        planned = replace(data, dispatches=[_attach(a, opts, pmc_paths, warnings) for a in data.dispatches])
        return Result("analyze", trimmed_data(planned, opts.topk), _dedupe(warnings))
    return Result("analyze", trimmed_data(_attach(data, opts, pmc_paths, warnings), opts.topk),
                  _dedupe(warnings))


def plan_document(result: Result) -> Result:
    """`hotspot plan`'s document: what the plan needs, without the analyze tables."""
    a = result.data
    if not isinstance(a, PlannedAnalysis):  # the analysis picks one dispatch unless --all
        raise UsageError("hotspot plan takes one dispatch", "use hotspot analyze --plan --all")
    data = PlanData(a.dispatch, a.arch, a.plan_summary, a.stall_by_category, a.occupancy,
                    a.plan_trust or Trust("ok", []),
                    a.verdict or verdict_of(a.plan_summary, a.plan or [], a.plan_trust or Trust("ok", [])),
                    a.plan or [], a.plan_skipped or [], a.plan_pmc,
                    a.selection)
    return Result("plan", data, result.warnings)


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _attach(a: DispatchAnalysis, opts: AnalyzeOptions, pmc_paths: list[Path] | None,
            warnings: list[str]) -> DispatchAnalysis:
    view = PlainView(a)  # the plan converts the sections it reads, not the whole analysis
    pmc_info = None
    pmc_kernel = None
    if pmc_paths:
        pmc_info, pmc_kernel = _pmc_for(view, pmc_paths, warnings)
    outcome: PlanOutcome = run_plan(view, pmc_kernel)
    values = {f.name: getattr(a, f.name) for f in fields(a)}
    values["options"] = {**(a.options or {}), "topk": opts.topk, "plan": True}
    return PlannedAnalysis(**values | {"plan": outcome.items}, plan_skipped=outcome.skipped,
                           plan_trust=outcome.trust,
                           verdict=verdict_of(outcome.summary, outcome.items, outcome.trust),
                           plan_summary=outcome.summary, plan_pmc=pmc_info)


def _pmc_for(analysis: Mapping[str, JsonValue], pmc_paths: list[Path], warnings: list[str]
             ) -> tuple[JsonObject, JsonObject | None]:
    """Run `hotspot pmc` on the files (with the dispatch's arch) and pick this kernel's report."""
    from hotspot.pmc.api import analyze_pmc

    arch = analysis.get("arch") or {}
    gfx = arch.get("gfx") if arch.get("known") else None
    res = analyze_pmc([Path(p) for p in pmc_paths], arch=gfx)
    warnings.extend(f"pmc: {w}" for w in res.warnings)
    pmc = plain(res.data)
    kernels = [k for k in pmc.get("kernels") or [] if isinstance(k, dict)]
    dispatch = analysis.get("dispatch") or {}
    names = [n for n in (dispatch.get("kernel"), dispatch.get("symbol")) if n]
    chosen, how = match_kernel(kernels, names)
    info = {"files": [str(p) for p in pmc_paths], "kernel": chosen.get("kernel") if chosen else None,
            "match": how, "kernels_in_files": [k.get("kernel") for k in kernels]}
    if chosen is not None and how.startswith("only kernel"):
        warnings.append(f"pmc: the counter files hold one kernel, {chosen.get('kernel')!r}, whose name "
                        f"differs from the traced kernel; its verdicts are used as this kernel's")
    if chosen is None:
        warnings.append(f"pmc: no kernel in the counter files matches {names[0] if names else '?'} "
                        f"({how}); memory verdicts left out of the plan")
    return info, chosen


def _base(name: str) -> str:
    """Kernel name without argument list / template noise, lower case (names are often truncated)."""
    return re.split(r"[(<\s]", name.strip(), maxsplit=1)[0].lower()


def match_kernel(kernels: list[JsonObject], names: list[str]
                 ) -> tuple[JsonObject | None, str]:
    """The counter report of the traced kernel: exact name, then base-name, then containment; a
    single kernel in the files is taken as the one."""
    for how, same in (("exact name", lambda k, n: k == n),
                      ("base name", lambda k, n: _base(k) == _base(n) and _base(n) != ""),
                      ("name containment", lambda k, n: bool(n) and (n in k or k in n))):
        hits = [k for k in kernels if any(same(str(k.get("kernel") or ""), n) for n in names)]
        if len(hits) == 1:
            return hits[0], how
        if len(hits) > 1:
            return None, f"{len(hits)} kernels match by {how}; filter the files to one kernel"
    if len(kernels) == 1:
        return kernels[0], "only kernel in the counter files (name differs)"
    return None, f"{len(kernels)} kernels in the files, none by name"
