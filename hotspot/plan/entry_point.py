"""The one analysis use case, `analyze(target, options)`: every caller (the analyze and plan
commands, diff, report, collect, sweep, the MCP tools through the commands) asks it for an
analysis, and the options say which: the dispatches (one, all, replicates), the plan attached
or alone, the counter files. It lives in plan/ because the plan sits above the ATT analysis
(hotspot/att/capture_analysis.py `analyze_full`, the step it runs); the plan's code is imported only when
a plan is asked for."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hotspot.att.model import PLAN_ALONE, PLAN_ATTACHED, PLAN_NONE, AnalyzeOptions, trimmed_data
from hotspot.result import Result

if TYPE_CHECKING:
    from hotspot.att.model import DispatchAnalysis, MultiAnalysis
    from hotspot.plan.api import PlanData, PlannedDispatch, PlannedMulti

    # What `analyze` gives, by its options: the analysis (one dispatch or all), with the plan
    # attached to each dispatch, or `hotspot plan`'s document.
    AnalysisData = DispatchAnalysis | MultiAnalysis | PlannedDispatch | PlannedMulti | PlanData


def analyze(target: Path, opts: AnalyzeOptions = AnalyzeOptions()) -> Result[AnalysisData]:
    """The analysis of `target` (a dispatch dir, or a folder of them: `opts` choose which; or a
    saved `analyze --format json` file, read back as it was saved), its
    tables shortened to `opts.topk` (0: every row); with `opts.plan` the plan attached to each
    dispatch (its memory verdicts from the counter files `opts.pmc`), or `hotspot plan`'s
    document (PLAN_ALONE: one dispatch)."""
    from hotspot.att.capture_analysis import analyze_full

    if opts.plan not in (PLAN_NONE, PLAN_ATTACHED, PLAN_ALONE):
        raise ValueError(f"AnalyzeOptions.plan: {opts.plan!r}")
    from hotspot.capture import is_saved_input

    if is_saved_input(target):  # a saved `analyze --format json`: shown (and planned) again
        from hotspot.att.load import saved_analysis

        full = saved_analysis(Path(target), opts)
    else:
        full = analyze_full(Path(target), opts)
    if opts.plan == PLAN_NONE:
        return Result("analyze", trimmed_data(full.data, opts.topk), full.warnings)
    from hotspot.plan.api import plan_document, with_plan

    planned = with_plan(full, opts)
    return plan_document(planned) if opts.plan == PLAN_ALONE else planned
