"""Capture-quality rules: fix the capture before trusting line-level numbers (no speed-up by itself)."""

from __future__ import annotations

from hotspot.att.findings import IdleSliceEvidence, SourceCollapseEvidence
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule


def source_collapse(ctx: PlanContext, rule: Rule) -> Outcome:
    found = ctx.finding(SourceCollapseEvidence)
    if found is None:
        return "no source line collapses the stall"
    f, ev = found
    return [Candidate(
        ctx.line_location(ev.file, ev.line),
        [Evidence("line_share_of_stall", round(ev.share, 3), ev.threshold_share, ">="),
         Evidence("categories_on_line", len(ev.categories), ev.threshold_categories, ">=")],
        int(ev.share * ctx.total_stall),
        "compiler-generated code of many kinds was attributed to one source line (typically the "
        "kernel entry or decorator): the line view cannot say which statement to change",
        severity=f.severity)]


def idle_slice(ctx: PlanContext, rule: Rule) -> Outcome:
    found = ctx.finding(IdleSliceEvidence)
    if found is None:
        return "the traced waves executed a representative part of the kernel"
    f, ev = found
    return [Candidate(
        ctx.kernel_location(),
        [Evidence("executed_share_of_rows", round(ev.executed_share, 4), ev.threshold_share, "<"),
         Evidence("executed_instructions", ev.executed_instructions),
         Evidence("code_rows", ev.code_rows)],
        ctx.total_stall,
        "the traced waves retired early or the traced CU was idle: these numbers describe a sliver "
        "of the kernel, so no other plan item from this capture can be trusted",
        severity=f.severity)]
