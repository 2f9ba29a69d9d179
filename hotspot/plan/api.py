"""The plan over an analysis: beside each dispatch (`analyze --plan`) or alone (`hotspot plan`'s
document). Reached through the one analysis use case, hotspot/plan/analyze.py `analyze`."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from hotspot.att.aggregate import CategoryStall
from hotspot.att.model import (
    AnalyzeOptions,
    ArchOut,
    DispatchAnalysis,
    DispatchInfo,
    MultiAnalysis,
    Selection,
    trimmed,
)
from hotspot.att.occupancy import DispatchOccupancy
from hotspot.capture import DispatchCandidate
from hotspot.errors import UsageError
from hotspot.plan.engine import PlanOutcome, StallSummary, Verdict, run_plan, verdict_of
from hotspot.plan.model import PlanItem, Skipped, Trust
from hotspot.pmc.analysis import KernelReport
from hotspot.result import Result
from hotspot.record import record


@record
class PmcMatch:
    """Which kernel of the --pmc counter files the plan took as the traced one, and how."""

    files: list[str]
    kernel: str | None
    match: str
    kernels_in_files: list[str]


@record
class DispatchPlan:
    """The plan of one dispatch: its items, the debug list (which rules did not fire, and why),
    the stall summary, the trust in the capture, the verdict and the --pmc match."""

    items: list[PlanItem]
    skipped: list[Skipped]
    summary: StallSummary
    trust: Trust
    verdict: Verdict
    pmc: PmcMatch | None = None


class PlannedDispatch:
    """One dispatch's analysis and its plan, side by side (`analyze --plan`). Written as the JSON of
    docs/schema/analyze.md: the analysis's fields with the items in its `plan` slot, then the plan's
    own keys (`plan_skipped`, `plan_summary`, `plan_trust`, `verdict`, `plan_pmc`)."""

    __slots__ = ("analysis", "plan")

    def __init__(self, analysis: DispatchAnalysis, plan: DispatchPlan) -> None:
        self.analysis = analysis
        self.plan = plan

    def json_value(self) -> dict[str, object]:
        """What orjson writes for it (hotspot/result.py): records inside stay records."""
        out = {k: v for k, v in vars(self.analysis).items() if not k.startswith("_")}
        out["plan"] = self.plan.items
        return out | {"plan_skipped": self.plan.skipped, "plan_summary": self.plan.summary,
                      "plan_trust": self.plan.trust, "verdict": self.plan.verdict,
                      "plan_pmc": self.plan.pmc}


@record(frozen=False)
class PlannedMulti:
    """`analyze --plan --all`: every usable dispatch with its plan, and the ranking of all of them."""

    dispatches: list[PlannedDispatch]
    ranking: list[DispatchCandidate]


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
    pmc: PmcMatch | None
    selection: Selection | None


def with_plan(full: Result[DispatchAnalysis | MultiAnalysis], opts: AnalyzeOptions
              ) -> Result[PlannedDispatch | PlannedMulti]:
    """The full analysis of each dispatch with its plan beside it (PlannedDispatch), the analysis's
    tables shortened to `--topk` for output (the rules saw every row)."""
    pmc_paths = [Path(p) for p in opts.pmc] or None
    warnings = list(full.warnings)
    data = full.data
    if isinstance(data, MultiAnalysis):
        planned = PlannedMulti([_attach(a, opts, pmc_paths, warnings) for a in data.dispatches], data.ranking)
        return Result("analyze", planned, _dedupe(warnings))
    return Result("analyze", _attach(data, opts, pmc_paths, warnings), _dedupe(warnings))


def plan_document(result: Result[PlannedDispatch | PlannedMulti]) -> Result[PlanData]:
    """`hotspot plan`'s document: what the plan needs, without the analyze tables."""
    planned = result.data
    if not isinstance(planned, PlannedDispatch):  # the analysis picks one dispatch unless --all
        raise UsageError("hotspot plan takes one dispatch", "use hotspot analyze --plan --all")
    a, p = planned.analysis, planned.plan
    data = PlanData(a.dispatch, a.arch, p.summary, a.stall_by_category, a.occupancy, p.trust, p.verdict,
                    p.items, p.skipped, p.pmc, a.selection)
    return Result("plan", data, result.warnings)


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _attach(a: DispatchAnalysis, opts: AnalyzeOptions, pmc_paths: list[Path] | None,
            warnings: list[str]) -> PlannedDispatch:
    """The plan of the whole analysis beside the analysis with its tables shortened to `--topk`."""
    pmc_info = None
    pmc_kernel = None
    if pmc_paths:
        pmc_info, pmc_kernel = _pmc_for(a, pmc_paths, warnings)
    outcome: PlanOutcome = run_plan(a, pmc_kernel)
    plan = DispatchPlan(outcome.items, outcome.skipped, outcome.summary, outcome.trust,
                        verdict_of(outcome.summary, outcome.items, outcome.trust), pmc_info)
    shown = replace(a, options=a.options.planned(opts.topk) if a.options is not None else None)
    return PlannedDispatch(trimmed(shown, opts.topk), plan)


def planned_view(data: object) -> tuple[DispatchInfo, ArchOut, Verdict] | None:
    """(dispatch, arch, verdict) of a `plan` or single-dispatch `analyze --plan` result, else None."""
    if isinstance(data, PlanData):
        return data.dispatch, data.arch, data.verdict
    if isinstance(data, PlannedDispatch):
        return data.analysis.dispatch, data.analysis.arch, data.plan.verdict
    return None


def _pmc_for(analysis: DispatchAnalysis, pmc_paths: list[Path], warnings: list[str]
             ) -> tuple[PmcMatch, KernelReport | None]:
    """Run `hotspot pmc` on the files (with the dispatch's arch) and pick this kernel's report."""
    from hotspot.pmc.api import PmcData, analyze_pmc

    gfx = analysis.arch.gfx if analysis.arch.known else None
    res = analyze_pmc([Path(p) for p in pmc_paths], arch=gfx)
    warnings.extend(f"pmc: {w}" for w in res.warnings)
    assert isinstance(res.data, PmcData)
    kernels = res.data.kernels
    names = [n for n in (analysis.dispatch.kernel, analysis.dispatch.symbol) if n]
    chosen, how = match_kernel(kernels, names)
    info = PmcMatch([str(p) for p in pmc_paths], chosen.kernel if chosen else None, how,
                    [k.kernel for k in kernels])
    if chosen is not None and how.startswith("only kernel"):
        warnings.append(f"pmc: the counter files hold one kernel, {chosen.kernel!r}, whose name "
                        f"differs from the traced kernel; its verdicts are used as this kernel's")
    if chosen is None:
        warnings.append(f"pmc: no kernel in the counter files matches {names[0] if names else '?'} "
                        f"({how}); memory verdicts left out of the plan")
    return info, chosen


def _base(name: str) -> str:
    """Kernel name without argument list / template noise, lower case (names are often truncated)."""
    return re.split(r"[(<\s]", name.strip(), maxsplit=1)[0].lower()


def match_kernel(kernels: list[KernelReport], names: list[str]
                 ) -> tuple[KernelReport | None, str]:
    """The counter report of the traced kernel: exact name, then base-name, then containment; a
    single kernel in the files is taken as the one."""
    for how, same in (("exact name", lambda k, n: k == n),
                      ("base name", lambda k, n: _base(k) == _base(n) and _base(n) != ""),
                      ("name containment", lambda k, n: bool(n) and (n in k or k in n))):
        hits = [k for k in kernels if any(same(k.kernel, n) for n in names)]
        if len(hits) == 1:
            return hits[0], how
        if len(hits) > 1:
            return None, f"{len(hits)} kernels match by {how}; filter the files to one kernel"
    if len(kernels) == 1:
        return kernels[0], "only kernel in the counter files (name differs)"
    return None, f"{len(kernels)} kernels in the files, none by name"
