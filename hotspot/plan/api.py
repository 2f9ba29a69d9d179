"""The plan over an analysis: beside each dispatch (`analyze --plan`) or alone (`hotspot plan`'s
document). Reached through the one analysis use case, hotspot/plan/entry_point.py `analyze`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from dataclasses import replace
from pathlib import Path

from hotspot.att.code_totals import CategoryStall
from hotspot.att.model import (
    AnalyzeOptions,
    ArchOut,
    DispatchAnalysis,
    DispatchInfo,
    MultiAnalysis,
    Selection,
    trimmed,
)
from hotspot.att.dispatch_occupancy import DispatchOccupancy
from hotspot.capture import DispatchCandidate
from hotspot.errors import UsageError
from hotspot.kernel_names import fit_name
from hotspot.plan.engine import PlanOutcome, StallSummary, Verdict, run_plan, verdict_of
from hotspot.plan.coverage import Coverage
from hotspot.plan.model import PlanItem, Skipped, Trust
from hotspot.att.issue_share import TraceCeilings
from hotspot.pmc.analysis import KernelReport
from hotspot.result import Result
from hotspot.record import record

if TYPE_CHECKING:  # the counter analysis is imported when counters are given
    from hotspot.pmc.api import PmcData


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
    the stall summary, the trust in the capture, the verdict and the --pmc match (with the matched
    kernel's counter report, which the report's roofline point reads: the files are read once)."""

    items: list[PlanItem]
    skipped: list[Skipped]
    summary: StallSummary
    trust: Trust
    verdict: Verdict
    pmc: PmcMatch | None = None
    coverage: Coverage | None = None
    ceilings: TraceCeilings | None = None
    counters: KernelReport | None = None


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
                      "plan_pmc": self.plan.pmc, "plan_coverage": self.plan.coverage}


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
    coverage: Coverage | None = None
    ceilings: TraceCeilings | None = None


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
                    p.items, p.skipped, p.pmc, a.selection, p.coverage, p.ceilings)
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
                        verdict_of(outcome.summary, outcome.items, outcome.trust, outcome.coverage), pmc_info,
                        outcome.coverage, outcome.ceilings, pmc_kernel)
    shown = replace(a, options=a.options.planned(opts.topk) if a.options is not None else None)
    return PlannedDispatch(trimmed(shown, opts.topk), plan)


def planned_view(data: object) -> tuple[DispatchInfo, ArchOut, Verdict] | None:
    """(dispatch, arch, verdict) of a `plan` or single-dispatch `analyze --plan` result, else None."""
    if isinstance(data, PlanData):
        return data.dispatch, data.arch, data.verdict
    if isinstance(data, PlannedDispatch):
        return data.analysis.dispatch, data.analysis.arch, data.plan.verdict
    return None


def counters_for(analysis: DispatchAnalysis, pmc_paths: list[Path] | tuple[str, ...]
                 ) -> tuple[PmcData, KernelReport | None, str, list[str]]:
    """`hotspot pmc` on the files (with the dispatch's arch) and this kernel's report in them,
    matched by its full identity: (the counter analysis, the kernel's report or None, how it was
    matched, the counter analysis's warnings). Called once per dispatch, by the plan: its memory
    verdicts read the report, and the report's roofline point reads it from the plan
    (`DispatchPlan.counters`)."""
    from hotspot.pmc.api import PmcData, analyze_pmc

    gfx = analysis.arch.gfx if analysis.arch.known else None
    res = analyze_pmc([Path(p) for p in pmc_paths], arch=gfx)
    assert isinstance(res.data, PmcData)
    names = [n for n in (analysis.dispatch.kernel, analysis.dispatch.symbol) if n]
    chosen, how = match_kernel(res.data.kernels, names, analysis.dispatch.dispatch_id)
    return res.data, chosen, how, list(res.warnings)


def _pmc_for(analysis: DispatchAnalysis, pmc_paths: list[Path], warnings: list[str]
             ) -> tuple[PmcMatch, KernelReport | None]:
    """Run `hotspot pmc` on the files (with the dispatch's arch) and pick this kernel's report."""
    data, chosen, how, said = counters_for(analysis, pmc_paths)
    warnings.extend(f"pmc: {w}" for w in said)
    names = [n for n in (analysis.dispatch.kernel, analysis.dispatch.symbol) if n]
    info = PmcMatch([str(p) for p in pmc_paths], chosen.kernel if chosen else None, how,
                    [k.kernel for k in data.kernels])
    if chosen is None:
        warnings.append(no_match_warning(names[0] if names else "?", how, info.kernels_in_files))
    return info, chosen


# The warning is one line of at most this many characters, its `warning: ` prefix on stderr
# included: a ck_tile kernel's full name alone is over 3,000.
WARNING_LINE_CHARS = 200
WARNING_PREFIX = "warning: "
MIN_NAME_CHARS = 24


def no_match_warning(name: str, how: str, kernels: list[str]) -> str:
    """No counter report is the traced kernel's: the warning names it by its shortest telling form
    (hotspot/kernel_names.py), beside the kernels the files hold."""
    tail = f" is not in the counter files ({how}); memory verdicts left out of the plan"
    room = WARNING_LINE_CHARS - len(WARNING_PREFIX) - len("pmc: ") - len(tail)
    return f"pmc: {fit_name(name, max(MIN_NAME_CHARS, room), kernels)}{tail}"


# Kernels return void: a demangled name may carry it or not, it identifies nothing.
RETURN_TYPE = "void "
ANONYMOUS_NAMESPACE = "(anonymous namespace)"


def kernel_identity(name: str) -> str:
    """A kernel's full identity: its qualified name with template arguments, without the return
    type and the argument list (`void ns::gemm<float, 4>(float*, int)` -> `ns::gemm<float, 4>`)."""
    s = name.strip()
    if s.startswith(RETURN_TYPE):
        s = s[len(RETURN_TYPE):].lstrip()
    depth = 0
    i = 0
    while i < len(s):
        ch = s[i]
        if s.startswith(ANONYMOUS_NAMESPACE, i):
            i += len(ANONYMOUS_NAMESPACE)
            continue
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            return s[:i].rstrip()
        i += 1
    return s


def match_kernel(kernels: list[KernelReport], names: list[str], dispatch_id: int | None = None
                 ) -> tuple[KernelReport | None, str]:
    """The counter report of the traced kernel by its full identity: the exact name, else the
    qualified name with template arguments (return type and argument list aside), else the traced
    dispatch id when one report has it and its name is a truncation of the traced one. Never by a
    leading word, never "the only kernel in the files": counters of another kernel are not used."""
    wanted = [n for n in names if n.strip()]
    idents = {kernel_identity(n) for n in wanted} - {""}
    tests: list[tuple[str, Callable[[KernelReport], bool]]] = [
        ("exact name", lambda k: k.kernel in wanted),
        ("name with template arguments", lambda k: kernel_identity(k.kernel) in idents),
    ]
    if dispatch_id is not None:
        tests.append((f"dispatch id {dispatch_id}", lambda k: dispatch_id in k.dispatch_ids and any(
            n.startswith(k.kernel.strip()) or k.kernel.startswith(n.strip()) for n in wanted)))
    for how, same in tests:
        hits = [k for k in kernels if same(k)]
        if len(hits) == 1:
            return hits[0], how
        if len(hits) > 1:
            return None, f"{len(hits)} kernels match by {how}; filter the files to one kernel"
    return None, f"{len(kernels)} kernel(s) in the files, none with this name and template arguments"
